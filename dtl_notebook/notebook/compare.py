"""`%dtl compare` and `%dtl diff`: one session mapped onto the wire formats; two requests
diffed in the order the provider caches them."""

from __future__ import annotations

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.agent import Agent
from dtl_notebook.notebook.display import HTML
from dtl_notebook.notebook.html import element, esc, mark, static_block, text
from dtl_notebook.notebook.panes import Bodies, item_path
from dtl_notebook.notebook.records import RequestRecord, from_request, preview_record
from dtl_notebook.notebook.request_diff import hunks_html, record_hunks
from dtl_notebook.notebook.request_pane import carrier_kind, request_pane
from dtl_notebook.notebook.theme import BORDER, cell_style
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
        element("th", f"{esc(r.provider)} · {text('code', r.mode)}", style=cell_style())
        for r in records
    )
    rows = []
    for where, names in sorted(groups.items()):
        cells = "".join(element("td", _landing(r, names), style=cell_style()) for r in records)
        entered = f"{mark(esc(', '.join(names)))} after message #{where}"
        rows.append(element("tr", element("td", entered, style=cell_style()) + cells))
    corner = element("th", "neutral load point", style=cell_style())
    table = element(
        "table",
        element("thead", element("tr", corner + head)) + element("tbody", "".join(rows)),
        style="border-collapse:collapse;font-size:12px",
    )
    columns = "".join(_column(r, 100 // max(len(records), 1)) for r in records)
    errors = "".join(element("p", f"{esc(p)}: {esc(e)}") for p, e in failed or [])
    lead = element(
        "p", f"{text('b', 'One neutral truth')}: tools entered {esc(said)}. {text('b', title)}:"
    )
    html = static_block(lead + table + errors + element("div", columns))
    lines = [f"neutral load points: {said}"]
    for r in records:
        loads = "; ".join(f"{', '.join(lp.tools)} at {lp.path}" for lp in r.load_points)
        lines.append(f"{r.provider:>16}  {r.mode:<16} load points: {loads or 'none'}")
    lines += [f"{p}: {e}" for p, e in failed or []]
    return HTML(html, "\n".join(lines))


def _column(record: RequestRecord, width: int) -> str:
    """One provider's request in full, a column `width` % wide."""
    about = f"{text('b', record.provider)} · {esc(record.model)} · "
    about += f"{record.cache.total_tokens:,} tokens"
    pane = element(
        "div",
        request_pane(record, Bodies(record, lazy=False)),
        cls="dtl-scroll",
        style="max-height:640px;overflow:auto",
    )
    style = (
        f"display:inline-block;vertical-align:top;box-sizing:border-box;width:{width}%;"
        f"min-width:280px;border:1px solid {BORDER};padding:4px;text-align:left"
    )
    return element("div", element("p", about) + pane, style=style)


def _landing(record: RequestRecord, names: list[str]) -> str:
    """Where a neutral load point lands in one provider's request."""
    hits = [lp for lp in record.load_points if set(lp.tools) & set(names)]
    if not hits:
        return esc("no load point on this wire: the tools are in the prefix")
    out = []
    for lp in hits:
        kind = carrier_kind(record.payload, item_path(lp.path)) or "load point"
        out.append(f"{text('code', lp.path)} · {esc(kind)}")
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
    html = static_block(text("b", title) + text("p", cause) + hunks_html(hunks))
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
