"""The model-context pane: segments in order with tokens, the estimate, the provider's
diagnosis, and the segment where the cache breaks (the break box itself: `marks`)."""

from __future__ import annotations

from dtl_notebook.context.model import Segment
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.html import (
    badge,
    clip,
    element,
    esc,
    heading,
    key,
    link_classes,
    text,
)
from dtl_notebook.notebook.panes import (
    HEAD,
    LIST_LIMIT,
    Bodies,
    hidden_row,
    item_path,
    lp_key,
    recent_loads,
    tool_name,
    windowed,
)
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.theme import BREAK, EDGE_BREAK, KIND_TINTS, NEUTRAL
from dtl_notebook.notebook.thread_lines import context_thread_line


def diagnosis_html(rec: RequestRecord) -> str:
    """The provider's own cache diagnosis next to the prediction, when the response had one."""
    diagnosis = rec.cache.diagnosis
    if diagnosis is None:
        return ""
    verdict = rec.cache.diagnosis_agreement
    said = f"provider's diagnosis: {esc(str(diagnosis))} · {text('b', verdict)} with the prediction"
    return element("div", said, cls="dtl-muted")


def context_pane(rec: RequestRecord, bodies: Bodies) -> str:
    ctx = rec.context
    segments = ctx.segments
    brk = rec.cache.cache_break
    diverged = _divergence_index(rec)
    recent = {item_path(lp.path) for lp in recent_loads(rec)}
    keep = {
        i
        for i, s in enumerate(segments)
        if s.kind == "loaded_schema" and s.load_point and item_path(s.load_point) in recent
    }
    keep |= set(range(min(len(segments), HEAD)))
    if diverged is not None:
        keep.add(diverged)
    parts = [
        text(
            "div",
            f"{len(segments)} segments · {ctx.estimate.describe(ctx.total_tokens)}",
            cls="dtl-muted",
            title=redact(f"tokenizer: {ctx.tokenizer}"),
        ),
        diagnosis_html(rec),
        context_thread_line(rec.cache.thread),
    ]
    for entry in windowed(len(segments), keep):
        if isinstance(entry, tuple):
            tokens = sum(s.tokens for s in segments[entry[0] : entry[1]])
            parts.append(hidden_row(*entry, f"segments ({tokens:,} tokens)", "context"))
            continue
        broke = entry == diverged and brk is not None
        parts.append(_segment(entry, segments[entry], broke, bodies))
    carried = _carried_not_seen(rec)
    if carried:
        listed = ", ".join(carried[:LIST_LIMIT])
        parts.append(heading(f"In the request, not in the model context ({len(carried)})"))
        more = f" … and {len(carried) - LIST_LIMIT} more" if len(carried) > LIST_LIMIT else ""
        parts.append(element("div", esc(listed) + more, cls="dtl-muted", style="font-style:italic"))
    for note in ctx.notes:
        parts.append(text("div", f"note: {note}", cls="dtl-muted"))
    return "".join(parts)


def _segment(i: int, seg: Segment, broke: bool, bodies: Bodies) -> str:
    keys = []
    if seg.kind in ("tool_schema", "loaded_schema", "tool_summary"):
        keys.append(key("tool", seg.label))
    if seg.load_point:
        keys.append(lp_key(seg.load_point))
    if broke:
        keys.append(key("brk", "here"))
    tint = KIND_TINTS.get(seg.kind, NEUTRAL)
    style = f"outline:2px solid {EDGE_BREAK};background:{BREAK}" if broke else None
    summary = (
        f"{badge(seg.kind, tint)} {text('code', clip(seg.label, 60))} "
        + text("span", f"{seg.tokens:,} tok · {seg.source}", cls="dtl-muted")
        + (" " + badge("cache breaks here", BREAK) if broke else "")
    )
    details = bodies.details(summary, f"context:{i}", open_=broke)
    return element("div", details, cls=link_classes(*keys, cls="dtl-row"), style=style)


def _divergence_index(rec: RequestRecord) -> int | None:
    brk = rec.cache.cache_break
    if brk is None or not brk.where:
        return None
    for i, seg in enumerate(rec.context.segments):
        if seg.source == brk.where:
            return i
    return None


def _carried_not_seen(rec: RequestRecord) -> list[str]:
    seen = {
        s.label
        for s in rec.context.segments
        if s.kind in ("tool_schema", "loaded_schema", "tool_summary")
    }
    carried = []
    for tool in rec.payload.get("tools") or []:
        members = (
            tool.get("tools")
            if isinstance(tool, dict) and tool.get("type") == "namespace"
            else None
        )
        for inner in members or [tool]:
            name = tool_name(inner)
            if name and name not in seen and isinstance(inner, dict) and inner.get("defer_loading"):
                carried.append(name)
    return carried
