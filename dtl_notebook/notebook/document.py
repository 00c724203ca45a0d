"""A session's requests as view data: timeline items, pane HTML, the static fallback.

The same functions feed the live widget (one request at a time), the static `text/html`
fallback and the self-contained export.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtl_notebook.live.agent import Agent, Step
from dtl_notebook.notebook.context_pane import context_pane
from dtl_notebook.notebook.health_view import header_health, item_health
from dtl_notebook.notebook.html import code, element, esc, mark, static_block, text
from dtl_notebook.notebook.legend import costs_for, costs_html, legend_html, request_cost_html
from dtl_notebook.notebook.marks import break_html, notes, notes_box, notes_html
from dtl_notebook.notebook.panes import Bodies
from dtl_notebook.notebook.prices import Costs, PriceTable, dollars, shipped_prices
from dtl_notebook.notebook.records import RequestRecord, step_records, transport_caption
from dtl_notebook.notebook.request_pane import request_pane
from dtl_notebook.notebook.state_pane import state_pane
from dtl_notebook.notebook.theme import BORDER, BREAK, LOAD, MUTED, cell_style, tinted
from dtl_notebook.notebook.view_assets import pane_titles

PANE_TITLES = pane_titles()  # data/view.json: the front end's titles too


def agent_records(agent: Agent, pending: Sequence[Step] = ()) -> list[RequestRecord]:
    """One record per request the agent sent, plus steps of a turn still running."""
    steps = [*agent.steps, *pending]
    return step_records(agent, steps)


def agent_header(
    agent: Agent, title: str, status: str = "idle", error: str | None = None
) -> dict[str, Any]:
    session = agent.session
    return {
        "title": title,
        "provider": agent.provider,
        "model": agent.model,
        "label": transport_caption(agent),
        "tools": f"{len(session.active_tools)}/{len(session.registry)}",
        "status": status,
        "error": error,
        "live": True,
        **header_health(agent),
    }


def capture_header(
    records: list[RequestRecord], title: str, status: str = "idle", error: str | None = None
) -> dict[str, Any]:
    first = records[0] if records else None
    last = records[-1] if records else None
    tools = len(last.payload.get("tools") or []) if last else 0
    return {
        "title": title,
        "provider": ", ".join(sorted({r.provider for r in records})) or "-",
        "model": first.model if first else "-",
        "label": "captured",
        "tools": str(tools),  # the last request's tools: a capture has no registry
        "status": status,
        "error": error,
        "live": False,
    }


def timeline_item(rec: RequestRecord) -> dict[str, Any]:
    """What the timeline needs about one request: a few hundred bytes. `notes` are the grey
    marks (below the minimum, cold on a new provider): facts, not breaks."""
    entry = rec.cache
    brk = entry.cache_break
    item: dict[str, Any] = {
        "index": rec.index,
        "turn": rec.turn,
        "provider": rec.provider,
        "model": rec.model,
        "mode": rec.mode,
        "total": entry.total_tokens,
        "cached": entry.cached_tokens,
        "written": entry.written_tokens,
        "uncached": entry.uncached_tokens,
        "loads": rec.new_loads,
        "calls": rec.calls[:6],
        "break": esc(str(brk)) if brk else None,
        "notes": [{"text": n["text"], "title": n["title"]} for n in notes(rec)],
    }
    if entry.reported is not None:
        item["reported"] = {
            "cached": entry.reported.cached,
            "written": entry.reported.written,
            "uncached": entry.reported.uncached,
        }
    item.update(item_health(rec))
    return item


def panes(
    rec: RequestRecord,
    previous: RequestRecord | None = None,
    *,
    lazy: bool = False,
    summaries_only: bool = False,
) -> dict[str, Any]:
    """The HTML of the three panes and the cache break of one request.

    With `lazy`, collapsed bodies are placeholders listed under "refs"; with
    `summaries_only`, they are left out (see `Bodies`).
    """
    bodies = Bodies(rec, lazy, summaries_only=summaries_only)
    brk = break_html(rec.cache.cache_break, rec, previous) + notes_box(rec)
    turn = "" if rec.state is None else f" · turn {rec.turn + 1}"  # a capture has no turns
    number = "Preview" if rec.index < 0 else f"Request {rec.index + 1}"
    return {
        "index": rec.index,
        "title": f"{number}{turn} · {rec.provider} · {rec.model} · {rec.label}",
        "state": state_pane(rec, bodies),
        "request": request_pane(rec, bodies),
        "context": context_pane(rec, bodies),
        "break": brk,
        "summary": request_cost_html(rec) + legend_html(),
        "refs": bodies.refs,
    }


def plain_text(records: list[RequestRecord], header: dict[str, Any]) -> str:
    """A short deterministic summary, e.g. `AgentView(provider=anthropic, requests=6, ...)`."""
    cached = sum(r.cache.cached_tokens for r in records)
    total = sum(r.cache.total_tokens for r in records)
    share = f"{round(100 * cached / total)}%" if total else "0%"
    breaks = sum(1 for r in records if r.cache.cache_break is not None)
    return (
        f"AgentView(provider={header.get('provider')}, requests={len(records)}, "
        f"tools={header.get('tools')}, cached={share}, breaks={breaks})"
    )


def requests_table(records: list[RequestRecord], costs: Costs) -> str:
    """One row per request (left-aligned: JupyterLab right-aligns `td`): its tokens, loads,
    marks and cost; `costs` is `costs_for(records, ...)`."""
    captured = bool(records) and all(r.state is None for r in records)
    rows, running = [], 0.0
    for i, rec in enumerate(records):
        entry = rec.cache
        brk = entry.cache_break
        cost = costs.per_request[i] if i < len(costs.per_request) else None
        running += cost or 0.0
        cells = [
            str(rec.index + 1),
            *([] if captured else [str(rec.turn + 1)]),
            esc(rec.provider),
            code(rec.mode),
            f"{entry.cached_tokens:,} / {entry.written_tokens:,} / {entry.uncached_tokens:,}",
            mark(f"+{rec.new_loads}", LOAD) if rec.new_loads else "",
            (text("span", f"✕ {brk}", style=tinted(BREAK)) if brk else "") + notes_html(rec),
            "" if cost is None else f"{dollars(cost)} · {dollars(running)}",
        ]
        rows.append(element("tr", "".join(element("td", c, style=cell_style()) for c in cells)))
    names = [
        "#",
        *([] if captured else ["turn"]),
        "provider",
        "mode",
        "cached / written / uncached",
        "loads",
        "cache",
        "cost · cumulative",
    ]
    head = "".join(text("th", h, style=cell_style("border-top:0")) for h in names)
    return element(
        "table",
        element("thead", element("tr", head)) + element("tbody", "".join(rows)),
        style="border-collapse:collapse",
    )


def title_line(header: dict[str, Any]) -> str:
    about = (
        f"{header.get('provider')} · {header.get('model')} · {header.get('label')} · "
        f"tools {header.get('tools')}"
    )
    title = text("b", header.get("title", "dtl_notebook"))
    return f"{title} " + text("span", about, style=f"color:{MUTED}")


def pane_columns(data: dict[str, Any]) -> str:
    """The three panes of `panes(...)`, one cell each, floated: side by side where there is
    room, stacked where not."""
    style = (
        "display:inline-block;vertical-align:top;box-sizing:border-box;width:33%;"
        f"min-width:300px;border:1px solid {BORDER};padding:4px;text-align:left"
    )
    columns = "".join(
        element(
            "div",
            element(
                "details",
                element("summary", text("b", PANE_TITLES[name])) + data[name],
                open=True,
            ),
            cls="dtl-static-pane",
            style=style,
        )
        for name in ("state", "request", "context")
    )
    return element("div", columns, cls="dtl-static-panes")


def static_html(
    records: list[RequestRecord],
    header: dict[str, Any],
    selected: int | None = None,
    *,
    registry: Any = None,
    prices: PriceTable | None = None,
) -> str:
    """Readable without CSS or JS: a timeline table, the legend and the cost, then the three
    panes of one request, side by side where there is room. `registry`: the tools of the
    session, for the up-front comparison."""
    prices = prices or shipped_prices()
    costs = costs_for(records, registry, prices)
    parts = [
        title_line(header),
        requests_table(records, costs),
        legend_html(),
        costs_html(costs, prices, [r.model for r in records]) if records else "",
    ]
    if records:
        index = len(records) - 1 if selected is None or selected < 0 else selected
        index = min(index, len(records) - 1)
        data = panes(records[index], records[index - 1] if index else None)
        parts.append(element("p", text("b", data["title"])) + data["break"])
        parts.append(pane_columns(data))
    else:
        parts.append(text("p", "No request yet.", style=f"color:{MUTED}"))
    return static_block("".join(parts), style="font-size:12px;text-align:left")
