"""Rich displays for the objects a notebook user touches, registered with IPython.

Lower layers stay free of IPython: they only have short `__repr__`s. Loading the extension
registers `text/html` formatters for them here (and removes them on unload).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtl_notebook.agent.session import Session
from dtl_notebook.cache.entries import CacheEntry, CacheReport
from dtl_notebook.context.model import ModelContext
from dtl_notebook.live.agent import Agent, Step, TurnResult
from dtl_notebook.notebook.document import (
    agent_header,
    agent_records,
    panes,
    static_html,
)
from dtl_notebook.notebook.html import element, esc, mark, text
from dtl_notebook.notebook.marks import break_html
from dtl_notebook.notebook.records import RequestRecord, from_request
from dtl_notebook.notebook.theme import BREAK, MUTED, cell_style, tinted
from dtl_notebook.wire.request import WireRequest


class HTML:
    """HTML with a plain-text twin, for results of `%dtl` commands."""

    def __init__(self, html: str, text: str) -> None:
        self.html, self.text = html, text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def table(headers: list[str], rows: list[list[str]], caption: str = "") -> str:
    """A plain `<table>`; cells are HTML (escape them first)."""
    head = element("tr", "".join(text("th", h, style=cell_style()) for h in headers))
    body = "".join(
        element("tr", "".join(element("td", c, style=cell_style()) for c in r)) for r in rows
    )
    cap = text("caption", caption, style=f"text-align:left;color:{MUTED}") if caption else ""
    return element(
        "table",
        cap + element("thead", head) + element("tbody", body),
        style="border-collapse:collapse;font-size:12px",
    )


def session_html(session: Session) -> str:
    markers = session.entered()
    rows = [
        [
            text("code", name),
            mark(f"after message #{markers[name]}") if name in markers else "in the prefix",
        ]
        for name in session.active_tools
    ]
    hazards = "".join(text("li", h) for h in session.cache_hazards())
    about = (
        f"{text('b', 'Session')}: {len(session.active_tools)} active of {len(session.registry)} "
        f"registered tools, {len(session.messages)} messages, search {esc(session.search)}, "
        f"sections {esc(', '.join(session.prompt))}"
    )
    listed = element("p", "Cache hazards:") + element("ul", hazards) if hazards else ""
    return element("div", about + table(["active tool", "entered"], rows) + listed)


def agent_html(agent: Agent) -> str:
    return static_html(agent_records(agent), agent_header(agent, "Agent"))


def turn_html(result: TurnResult) -> str:
    answer = result.text if result.text is not None else f"(stopped: {result.stopped})"
    rows = []
    for step in result.steps:
        brk = step.cache.cache_break
        rows.append(
            [
                esc(step.request.mode),
                esc(", ".join(c.name for c in step.reply.message.tool_calls) or "answer"),
                f"{step.cache.cached_tokens:,} / {step.cache.total_tokens:,}",
                mark("+" + esc(", ".join(n for lp in step.request.load_points for n in lp.tools)))
                if step.request.load_points
                else "",
                _break_cell(brk),
            ]
        )
    headers = ["mode", "calls", "cached / total tokens", "load points", "cache break"]
    return element("div", f"{text('b', 'Answer')}: {esc(answer)}" + table(headers, rows))


def _break_cell(brk: object) -> str:
    return text("span", f"✕ {brk}", style=tinted(BREAK, "padding:0 3px")) if brk else ""


def step_html(step: Step) -> str:
    return _panes_html(from_request(step.request, step.cache, label="step", turn=step.turn))


def request_html(request: WireRequest) -> str:
    return _panes_html(from_request(request))


def _panes_html(record: RequestRecord) -> str:
    data = panes(record)
    request = element("details", element("summary", "Request JSON") + data["request"], open=True)
    context = element("details", element("summary", "Model context") + data["context"])
    return element("div", text("b", data["title"]) + data["break"] + request + context)


def context_html(ctx: ModelContext) -> str:
    counts: dict[str, list[int]] = {}
    for seg in ctx.segments:
        counts.setdefault(seg.kind, [0, 0])
        counts[seg.kind][0] += 1
        counts[seg.kind][1] += seg.tokens
    rows = [[esc(kind), str(n), f"{tokens:,}"] for kind, (n, tokens) in counts.items()]
    estimate = "" if ctx.exact_tokens else " (estimate)"
    caption = f"{ctx.provider} · {ctx.model} · {ctx.total_tokens:,} tokens{estimate}"
    return table(["segment kind", "segments", "tokens"], rows, caption)


def report_html(report: CacheReport) -> str:
    rows = []
    for entry in report:
        brk = entry.cache_break
        reported = (
            f"{_figure(entry.reported.cached)} / {_figure(entry.reported.written)}"
            if entry.reported
            else ""
        )
        rows.append(
            [
                str(entry.index + 1),
                f"{entry.cached_tokens:,} / {entry.written_tokens:,} / {entry.uncached_tokens:,}",
                reported,
                _break_cell(brk),
            ]
        )
    headers = ["#", "predicted cached / written / uncached", "reported cached / written", "break"]
    return table(headers, rows, repr(report))


def entry_html(entry: CacheEntry) -> str:
    figures = (
        f"cached {entry.cached_tokens:,} · written {entry.written_tokens:,} · "
        f"uncached {entry.uncached_tokens:,} of {entry.total_tokens:,} tokens"
    )
    below = f" · not cacheable yet ({entry.below_minimum})" if entry.below_minimum else ""
    scope = f" · cache scope: {entry.scope}" if entry.scope else ""
    lost = entry.shared_lost
    lost_text = f" · shared prefix lost: {lost.tokens:,} tokens at {lost.where}" if lost else ""
    said = figures + below + scope + lost_text
    return element("div", esc(said) + break_html(entry.cache_break))


FORMATTERS: dict[type, Callable[[Any], str]] = {
    Session: session_html,
    Agent: agent_html,
    TurnResult: turn_html,
    Step: step_html,
    WireRequest: request_html,
    ModelContext: context_html,
    CacheReport: report_html,
    CacheEntry: entry_html,
}


def register(shell: Any) -> None:
    formatter = shell.display_formatter.formatters["text/html"]
    for cls, function in FORMATTERS.items():
        formatter.for_type(cls, function)


def unregister(shell: Any) -> None:
    formatter = shell.display_formatter.formatters["text/html"]
    for cls in FORMATTERS:
        formatter.pop(cls, None)


__all__ = ["HTML", "register", "table", "unregister"]


def _figure(tokens: int | None) -> str:
    """A reported count, or "unknown" where the engine did not report it."""
    return "unknown" if tokens is None else f"{tokens:,}"
