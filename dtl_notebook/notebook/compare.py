"""`%dtl compare` and `%dtl diff`: one session mapped onto the wire formats; two requests
diffed in the order the provider caches them."""

from __future__ import annotations

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.agent import Agent
from dtl_notebook.notebook.display import HTML
from dtl_notebook.notebook.html import esc
from dtl_notebook.notebook.panes import Bodies, item_path
from dtl_notebook.notebook.records import RequestRecord, from_request, preview_record
from dtl_notebook.notebook.request_diff import hunks_html, record_hunks
from dtl_notebook.notebook.request_pane import carrier_kind, request_pane
from dtl_notebook.notebook.theme import BORDER, cell_style, mark
from dtl_notebook.wire import build_request
from dtl_notebook.wire.modes import PROVIDERS


def compare_html(agent: Agent) -> HTML:
    """The neutral load points, then the request each provider would get, side by side."""
    records: list[RequestRecord] = []
    failed: list[tuple[str, str]] = []
    for provider in PROVIDERS:
        try:
            records.append(preview_record(agent, provider, DEMO_MODELS[provider]))
        except (DtlError, ValueError) as exc:
            failed.append((provider, str(exc)))
    return mapping_html(records, agent.session.entered(), "Four wire formats", failed)


def mapping_html(
    records: list[RequestRecord],
    truth: dict[str, int],
    title: str,
    failed: list[tuple[str, str]] | None = None,
) -> HTML:
    """One neutral truth (where each tool entered) mapped onto each provider's wire: a row per
    load point naming the JSON path and carrier that holds it, then each request in full."""
    said = ", ".join(f"{n} after message #{i}" for n, i in truth.items()) or "none yet"
    groups: dict[int, list[str]] = {}
    for name, where in truth.items():
        groups.setdefault(where, []).append(name)
    head = "".join(
        f'<th style="{cell_style()}">{esc(r.provider)} · <code>{esc(r.mode)}</code></th>'
        for r in records
    )
    rows = []
    for where, names in sorted(groups.items()):
        cells = "".join(f'<td style="{cell_style()}">{_landing(r, names)}</td>' for r in records)
        rows.append(
            f'<tr><td style="{cell_style()}">{mark(esc(", ".join(names)))} after message '
            f"#{where}</td>{cells}</tr>"
        )
    table = (
        '<table style="border-collapse:collapse;font-size:12px"><thead><tr>'
        f'<th style="{cell_style()}">neutral load point</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    columns = "".join(
        f'<div style="display:inline-block;vertical-align:top;box-sizing:border-box;'
        f"width:{100 // max(len(records), 1)}%;min-width:280px;border:1px solid {BORDER};"
        f'padding:4px;text-align:left"><p><b>{esc(r.provider)}</b> · {esc(r.model)} · '
        f"{r.cache.total_tokens:,} tokens</p>"
        f'<div class="dtl-scroll" style="max-height:640px;overflow:auto">'
        f"{request_pane(r, Bodies(r, lazy=False))}</div></div>"
        for r in records
    )
    errors = "".join(f"<p>{esc(p)}: {esc(e)}</p>" for p, e in failed or [])
    html = (
        '<div class="dtl-static tex2jax_ignore mathjax_ignore" '
        f'style="text-align:left"><p><b>One neutral truth</b>: tools '
        f"entered {esc(said)}. <b>{esc(title)}</b>:</p>{table}{errors}"
        f"<div>{columns}</div></div>"
    )
    text = [f"neutral load points: {said}"]
    for r in records:
        loads = "; ".join(f"{', '.join(lp.tools)} at {lp.path}" for lp in r.load_points)
        text.append(f"{r.provider:>16}  {r.mode:<16} load points: {loads or 'none'}")
    text += [f"{p}: {e}" for p, e in failed or []]
    return HTML(html, "\n".join(text))


def _landing(record: RequestRecord, names: list[str]) -> str:
    """Where a neutral load point lands in one provider's request."""
    hits = [lp for lp in record.load_points if set(lp.tools) & set(names)]
    if not hits:
        return esc("no load point on this wire: the tools are in the prefix")
    out = []
    for lp in hits:
        kind = carrier_kind(record.payload, item_path(lp.path)) or "load point"
        out.append(f"<code>{esc(lp.path)}</code> · {esc(kind)}")
    return "<br>".join(out)


def diff_html(a: RequestRecord, b: RequestRecord, title: str) -> HTML:
    """The diff of two request bodies in prefix order, with the analyzer's verdict when one
    provider sent both."""
    analyzer = CacheAnalyzer(a.provider, a.model)
    analyzer.add(a.payload)
    entry = analyzer.add(b.payload) if a.provider == b.provider else None
    cause = ""
    if entry is not None:
        brk = entry.cache_break
        cause = f"cache: {brk}" if brk else "cache: the second request extends the first"
    hunks = record_hunks(a, b)
    html = (
        '<div class="dtl-static tex2jax_ignore mathjax_ignore" '
        f'style="text-align:left"><b>{esc(title)}</b>'
        f"<p>{esc(cause)}</p>{hunks_html(hunks)}</div>"
    )
    lines = [title, cause, *(f"{h.label} ({h.role})" for h in hunks)]
    return HTML(html, "\n".join(x for x in lines if x))


def reserialized(agent: Agent, record: RequestRecord, provider: str) -> RequestRecord:
    """The session as it was at `record`, serialized for another provider (not sent)."""
    clone = _session_at(agent.session, record)
    request = build_request(clone, provider, DEMO_MODELS[provider])
    return from_request(request, label="re-serialized", index=record.index, turn=record.turn)


def _session_at(session: Session, record: RequestRecord) -> Session:
    """A copy of the session as it was when `record` was built."""
    assert record.state is not None
    return session.as_of(record.state.message_count, record.state.active_tools)
