"""A session's requests as view data: timeline items, pane HTML, the static fallback.

The same functions feed the live widget (one request at a time), the static `text/html`
fallback and the self-contained export.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtl_notebook.live.loop import Agent, Step
from dtl_notebook.notebook.context_pane import break_html, context_pane
from dtl_notebook.notebook.html import BORDER, MUTED, esc
from dtl_notebook.notebook.panes import Bodies
from dtl_notebook.notebook.records import RequestRecord, step_records
from dtl_notebook.notebook.request_pane import request_pane
from dtl_notebook.notebook.state_pane import state_pane

PANE_TITLES = {"state": "Agent state", "request": "Request JSON", "context": "Model context"}


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
        "label": agent.label,
        "tools": f"{len(session.active_tools)}/{len(session.registry)}",
        "status": status,
        "error": error,
        "live": True,
    }


def capture_header(
    records: list[RequestRecord], title: str, status: str = "idle", error: str | None = None
) -> dict[str, Any]:
    first = records[0] if records else None
    return {
        "title": title,
        "provider": ", ".join(sorted({r.provider for r in records})) or "-",
        "model": first.model if first else "-",
        "label": "captured",
        "tools": "-",
        "status": status,
        "error": error,
        "live": False,
    }


def timeline_item(rec: RequestRecord) -> dict[str, Any]:
    """What the timeline needs about one request: a few hundred bytes."""
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
    }
    if entry.reported is not None:
        item["reported"] = {
            "cached": entry.reported.cached,
            "written": entry.reported.written,
            "uncached": entry.reported.uncached,
        }
    return item


def panes(
    rec: RequestRecord, previous: RequestRecord | None = None, *, lazy: bool = False
) -> dict[str, Any]:
    """The HTML of the three panes and the cache break of one request.

    With `lazy`, collapsed bodies are placeholders listed under "refs" (see `Bodies`).
    """
    bodies = Bodies(rec, lazy)
    brk = break_html(rec.cache.cache_break)
    if not brk and previous is not None and previous.provider != rec.provider:
        brk = break_html_provider(previous, rec)
    return {
        "index": rec.index,
        "title": (
            f"{'Preview' if rec.index < 0 else f'Request {rec.index + 1}'} · turn {rec.turn + 1}"
            f" · {rec.provider} · {rec.model} · {rec.label}"
        ),
        "state": state_pane(rec, bodies),
        "request": request_pane(rec, bodies),
        "context": context_pane(rec, bodies),
        "break": brk,
        "refs": bodies.refs,
    }


def break_html_provider(previous: RequestRecord, rec: RequestRecord) -> str:
    return (
        f'<div style="border-left:3px solid #cf222e;padding:4px 6px"><b>Provider switched: '
        f"{esc(previous.provider)} → {esc(rec.provider)}</b>: the same session re-serialized; "
        "every provider keeps its own cache, so this request starts cold.</div>"
    )


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


def static_html(
    records: list[RequestRecord], header: dict[str, Any], selected: int | None = None
) -> str:
    """Readable without CSS or JS: a timeline table, then the three panes of one request."""
    rows = []
    for rec in records:
        entry = rec.cache
        brk = entry.cache_break
        cells = [
            str(rec.index + 1),
            str(rec.turn + 1),
            esc(rec.provider),
            f"<code>{esc(rec.mode)}</code>",
            f"{entry.cached_tokens:,} / {entry.written_tokens:,} / {entry.uncached_tokens:,}",
            f"<mark>+{rec.new_loads}</mark>" if rec.new_loads else "",
            f"<del>{esc(brk)}</del>" if brk else "",
        ]
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="border-top:1px solid {BORDER};padding:2px 6px">{c}</td>' for c in cells
            )
            + "</tr>"
        )
    head = "".join(
        f'<th style="text-align:left;padding:2px 6px">{h}</th>'
        for h in (
            "#",
            "turn",
            "provider",
            "mode",
            "cached / written / uncached",
            "loads",
            "cache break",
        )
    )
    title = (
        f"<b>{esc(header.get('title', 'dtl_notebook'))}</b> "
        f'<span style="color:{MUTED}">{esc(header.get("provider"))} · {esc(header.get("model"))} · '
        f"{esc(header.get('label'))} · tools {esc(header.get('tools'))}</span>"
    )
    parts = [
        f'<div class="dtl-static" style="font-size:12px">{title}',
        f'<table style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>",
    ]
    if records:
        index = len(records) - 1 if selected is None or selected < 0 else selected
        index = min(index, len(records) - 1)
        data = panes(records[index], records[index - 1] if index else None)
        parts.append(f"<p><b>{esc(data['title'])}</b></p>{data['break']}")
        columns = "".join(
            f'<td style="vertical-align:top;width:33%;border:1px solid {BORDER};padding:4px">'
            f"<details open><summary><b>{esc(PANE_TITLES[name])}</b></summary>"
            f"{data[name]}</details></td>"
            for name in ("state", "request", "context")
        )
        table = '<table style="border-collapse:collapse;width:100%">'
        parts.append(f"{table}<tr>{columns}</tr></table>")
    else:
        parts.append(f'<p style="color:{MUTED}">No request yet.</p>')
    parts.append("</div>")
    return "".join(parts)
