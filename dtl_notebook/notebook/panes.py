"""The three panes of one request: agent state, request JSON, model context; and its break.

Long lists are windowed so a pane costs what the request adds, not what the history holds:
load points, active tools and the newest items are always shown, the rest is summarized.
"""

from __future__ import annotations

import difflib
from typing import Any

from dtl_notebook.agent.messages import (
    AssistantMessage,
    SystemUpdate,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.cache.analyze import CacheBreak
from dtl_notebook.context.model import Segment
from dtl_notebook.context.tokens import encoding_for
from dtl_notebook.notebook.html import (
    BREAK,
    CARRIER,
    LOAD,
    badge,
    clip,
    dumps,
    esc,
    heading,
    json_html,
    key,
    link_attrs,
    pre,
)
from dtl_notebook.notebook.records import RequestRecord

TAIL = 20  # newest items always shown in full
HEAD = 24  # and the first ones (the prefix: tools, system)
RECENT_LOADS = 3  # load points shown wherever they are; older ones only inside the window
LIST_LIMIT = 200  # collapsed items listed by name, beyond that only counted


def item_path(path: str) -> str:
    """The carrier item of a JSON path: `messages.2.content.0` -> `messages.2`."""
    return ".".join(path.split(".")[:2])


def lp_key(path: str) -> str:
    return key("lp", item_path(path))


def recent_loads(rec: RequestRecord) -> list[Any]:
    """The newest load points of a request: always shown, however long the history."""
    return sorted(rec.load_points, key=lambda lp: lp.message_index)[-RECENT_LOADS:]


def _names(names: list[str], what: str) -> str:
    listed = ", ".join(names[:LIST_LIMIT])
    more = f" … and {len(names) - LIST_LIMIT} more" if len(names) > LIST_LIMIT else ""
    return (
        f'<details><summary class="dtl-muted">{len(names)} {esc(what)}</summary>'
        f'<div class="dtl-muted">{esc(listed + more)}</div></details>'
    )


class Bodies:
    """Where collapsed bodies go: inline (static HTML, export) or fetched on open (widget).

    With `lazy`, a collapsed body is a placeholder whose class names its ref
    (`dtl-ref:request:tools.3`); the front end asks for `body_html(record, ref)` when the
    user opens it, so a pane costs its summaries, not every definition in full.
    """

    def __init__(self, rec: RequestRecord, lazy: bool) -> None:
        self.rec, self.lazy = rec, lazy
        self.refs: list[str] = []

    def details(self, summary_html: str, ref: str, *, open_: bool = False) -> str:
        if self.lazy and not open_ and not any(c.isspace() for c in ref):
            self.refs.append(ref)
            body = f'<div class="dtl-pending dtl-ref:{esc(ref)}">…</div>'
        else:
            body = body_html(self.rec, ref)
        return (
            f"<details{' open' if open_ else ''}><summary>{summary_html}</summary>{body}</details>"
        )


def body_html(rec: RequestRecord, ref: str) -> str:
    """The body of one collapsed item.

    Refs: `request:<field>` or `request:<field>.<i>`, `context:<i>`, `state:section:<name>`.
    """
    pane, _, path = ref.partition(":")
    try:
        if pane == "request":
            field_name, _, index = path.partition(".")
            value = rec.payload[field_name]
            if index:
                value = value[int(index)]
            return pre(json_html(value, 2))
        if pane == "context":
            return pre(esc(clip(rec.context.segments[int(path)].text, 20_000)))
        if pane == "state" and path.startswith("section:") and rec.state is not None:
            return pre(esc(rec.state.sections[path.removeprefix("section:")]))
    except (KeyError, IndexError, ValueError, TypeError):
        pass
    return f'<em class="dtl-muted">{esc(ref)}: not in this request</em>'


def _windowed(count: int, keep: set[int]) -> list[int | tuple[int, int]]:
    """Indexes to show, with runs of hidden ones as (start, end) pairs."""
    shown = set(range(max(0, count - TAIL), count)) | {i for i in keep if 0 <= i < count}
    out: list[int | tuple[int, int]] = []
    start = None
    for i in range(count):
        if i in shown:
            if start is not None:
                out.append((start, i))
                start = None
            out.append(i)
        elif start is None:
            start = i
    if start is not None:
        out.append((start, count))
    return out


def _hidden(start: int, end: int, noun: str) -> str:
    return (
        f'<div class="dtl-row dtl-muted"><i>… {end - start} earlier {noun} '
        f"({start} to {end - 1}) unchanged; select an earlier request to see them</i></div>"
    )


# -- agent state ---------------------------------------------------------------------------------
def state_pane(rec: RequestRecord, bodies: Bodies) -> str:
    if rec.state is None:
        return (
            '<p class="dtl-muted">Captured traffic: the agent that sent this request is not '
            "known here, only its request JSON and what the provider makes of it.</p>"
        )
    st = rec.state
    entered: dict[str, int] = {}
    for i, message in enumerate(rec.messages):
        if isinstance(message, ToolResultMessage):
            for name in message.added_tool_names or []:
                entered.setdefault(name, i)
    paths = {lp.message_index: lp.path for lp in rec.load_points}
    rows = []
    active = list(st.active_tools)
    shown = set(range(min(len(active), HEAD // 3))) | set(
        range(max(0, len(active) - TAIL), len(active))
    )
    hidden = [n for i, n in enumerate(active) if i not in shown]
    for i, name in enumerate(active):
        if i not in shown:
            continue
        where = entered.get(name)
        keys = [key("tool", name)]
        if where is None:
            at = "in the prefix"
        else:
            at = f"after message #{where}"
            if where in paths:
                keys.append(lp_key(paths[where]))
        rows.append(
            f"<tr {link_attrs(*keys)}><td><code>{esc(name)}</code></td>"
            f'<td class="dtl-muted">{esc(at)}</td></tr>'
        )
    parts = [
        heading(f"Active tools ({len(st.active_tools)} of {st.registry_size} registered)"),
        f'<table class="dtl-table">{"".join(rows)}</table>',
        _names(hidden, "more active tools") if hidden else "",
        heading("System prompt sections the model holds"),
    ]
    counter = encoding_for(rec.provider, rec.model)
    for name, text in st.sections.items():
        size = f"{counter.count(text):,} tokens, {len(text):,} chars"
        if name == "tool_catalog":
            size += f"; {_catalog_lines(text)}"
        summary = f"<code>{esc(name)}</code> ({esc(size)})"
        parts.append(bodies.details(summary, f"state:section:{name}"))
    parts.append(heading(f"Transcript ({len(rec.messages)} messages)"))
    marked = {lp.message_index for lp in recent_loads(rec)}
    for entry in _windowed(len(rec.messages), marked):
        if isinstance(entry, tuple):
            parts.append(_hidden(*entry, "messages"))
            continue
        parts.append(_message_row(entry, rec.messages[entry], paths))
    return "".join(parts)


def _catalog_lines(text: str) -> str:
    entries = [line for line in text.splitlines() if line.startswith("- ")]
    grouped = any(" tools)" in line or " tool)" in line for line in entries)
    return f"{len(entries)} {'groups' if grouped else 'tools'} listed"


def diagnosis_html(rec: RequestRecord) -> str:
    """The provider's own cache diagnosis next to the prediction, when the response had one."""
    diagnosis = rec.cache.diagnosis
    if diagnosis is None:
        return ""
    verdict = rec.cache.diagnosis_agreement
    color = {"agree": "#1a7f37", "disagree": "#cf222e"}.get(verdict, "inherit")
    return (
        f'<div class="dtl-muted">provider\'s diagnosis: {esc(str(diagnosis))} · '
        f'<b style="color:{color}">{esc(verdict)}</b> with the prediction</div>'
    )


def _message_row(i: int, message: Any, paths: dict[int, str]) -> str:
    label, body = type(message).__name__, ""
    marked = False
    if isinstance(message, UserMessage):
        label, body = "user", esc(clip(_text(message.content), 160))
    elif isinstance(message, AssistantMessage):
        label = "assistant"
        calls = ", ".join(f"{c.name}({clip(str(c.arguments), 80)})" for c in message.tool_calls)
        body = esc(clip(message.text or "", 160)) + (
            f"<br><code>→ {esc(calls)}</code>" if calls else ""
        )
    elif isinstance(message, ToolResultMessage):
        label = "tool result" + (" (error)" if message.is_error else "")
        body = esc(clip(_text(message.content), 160))
        if message.added_tool_names:
            keys = [key("tool", n) for n in message.added_tool_names]
            if i in paths:
                keys.insert(0, lp_key(paths[i]))
            where = "" if i in paths else " (no load point on the wire: full list)"
            body += (
                f'<br><mark style="background:{LOAD}" {link_attrs(*keys)}>load point: + '
                f"{esc(', '.join(message.added_tool_names))}{esc(where)}</mark>"
            )
            marked = True
    elif isinstance(message, SystemUpdate):
        label = "system update"
        body = esc(", ".join(message.sections))
    style = f' style="background:{LOAD}44"' if marked else ""
    number = f'<span class="dtl-muted">#{i}</span>'
    return f'<div class="dtl-row"{style}>{number} {badge(label)} {body}</div>'


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content or []:
        text = getattr(part, "text", None)
        texts.append(text if isinstance(text, str) else "[image]")
    return "".join(texts)


# -- request JSON --------------------------------------------------------------------------------
def _carrier(item: Any) -> str | None:
    """What kind of load-point carrier an item is, if any."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind in ("additional_tools", "tool_search_call", "tool_search_output"):
        return str(kind)
    if item.get("role") == "system" and "tools" in item:
        return "kimi tools message"
    content = item.get("content")
    if isinstance(content, list):
        for block in content:
            inner = block.get("content") if isinstance(block, dict) else None
            if isinstance(inner, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_reference" for b in inner
            ):
                return "tool_reference"
            if isinstance(block, dict) and block.get("type") == "tool_search_tool_result":
                return "tool_reference (server search)"
    return None


def _tool_name(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    function = item.get("function")
    if isinstance(function, dict):
        return str(function.get("name", ""))
    return str(item.get("name") or item.get("type") or "")


def _item_summary(field_name: str, i: int, item: Any) -> str:
    if field_name == "tools":
        text = f"{_tool_name(item)}"
        if isinstance(item, dict) and item.get("type") == "namespace":
            text += f" (namespace, {len(item.get('tools') or [])} tools)"
        return text
    if isinstance(item, dict):
        return str(item.get("type") or item.get("role") or "item")
    return type(item).__name__


def request_pane(rec: RequestRecord, bodies: Bodies) -> str:
    payload = rec.payload
    loads = {item_path(lp.path): lp for lp in rec.load_points}
    recent = {item_path(lp.path) for lp in recent_loads(rec)}
    loaded = {n for lp in recent_loads(rec) for n in lp.tools}
    parts = [
        f'<div class="dtl-muted">{esc(rec.provider)} · {esc(rec.model)} · mode '
        f"<code>{esc(rec.mode)}</code> · {len(rec.load_points)} load point(s)</div>"
    ]
    for note in rec.notes:
        parts.append(f'<div class="dtl-muted">note: {esc(note)}</div>')
    for name, value in payload.items():
        if name in ("tools", "messages", "input") and isinstance(value, list):
            parts.append(_list_field(name, value, loads, recent, loaded, bodies))
            continue
        size = len(dumps(value, None))
        if size <= 300:
            parts.append(pre(f"<b>{esc(name)}</b>: " + json_html(value, None)))
        else:
            parts.append(bodies.details(f"<b>{esc(name)}</b> ({size:,} chars)", f"request:{name}"))
    return "".join(parts)


def _list_field(
    name: str,
    items: list[Any],
    loads: dict[str, Any],
    recent: set[str],
    loaded: set[str],
    bodies: Bodies,
) -> str:
    rows = [heading(f"{name} [{len(items)}]")]
    if name == "tools":
        return "".join(rows) + _tools_field(items, loaded, bodies)
    keep = {int(p.split(".")[1]) for p in recent if p.startswith(name + ".")}
    for entry in _windowed(len(items), keep):
        if isinstance(entry, tuple):
            rows.append(_hidden(*entry, "items"))
            continue
        path = f"{name}.{entry}"
        keys = [key("lp", path)] if path in loads else []
        if path in loads:
            keys += [key("tool", t) for t in loads[path].tools]
        newest = path == max(recent, key=lambda p: int(p.split(".")[1]), default=None)
        rows.append(
            _item(name, entry, items[entry], bodies, keys=keys, lp=loads.get(path), open_=newest)
        )
    return "".join(rows)


def _tools_field(items: list[Any], loaded: set[str], bodies: Bodies) -> str:
    """Immediate tools (head and tail), definitions loaded recently; the rest by name."""
    rows, earlier, waiting = [], [], []
    immediate = [
        i for i, t in enumerate(items) if not (isinstance(t, dict) and t.get("defer_loading"))
    ]
    shown = set(immediate[:HEAD]) | set(immediate[-TAIL:])
    for i, item in enumerate(items):
        tool = _tool_name(item)
        deferred = isinstance(item, dict) and bool(item.get("defer_loading"))
        if deferred and tool not in loaded:
            waiting.append(tool)
        elif not deferred and i not in shown:
            earlier.append(tool)
        else:
            rows.append(
                _item("tools", i, item, bodies, deferred=deferred, keys=[key("tool", tool)])
            )
    if earlier:
        rows.append(_names(earlier, "more immediate tools"))
    if waiting:
        rows.append(
            _names(
                waiting,
                "more deferred definitions (carried in the request; in the model context only "
                "from their load point, if any)",
            )
        )
    return "".join(rows)


def _item(
    field_name: str,
    i: int,
    item: Any,
    bodies: Bodies,
    *,
    deferred: bool = False,
    keys: list[str] | None = None,
    lp: Any = None,
    open_: bool = False,
) -> str:
    carrier = _carrier(item)
    label = f"{field_name}[{i}] {_item_summary(field_name, i, item)}"
    marks = ""
    style = ""
    if deferred:
        marks += " " + badge("defer_loading · loaded in history")
        style += "opacity:.6;"
    if carrier:
        marks += " " + badge(f"carrier: {carrier}", CARRIER)
        style += f"background:{CARRIER}55;"
    if lp is not None:
        marks += " " + badge("load point: + " + ", ".join(lp.tools), LOAD)
    attrs = link_attrs(*(keys or []), cls="dtl-row") + (f' style="{style}"' if style else "")
    return (
        f"<div {attrs}>"
        + bodies.details(
            f"<code>{esc(label)}</code>{marks}", f"request:{field_name}.{i}", open_=open_
        )
        + "</div>"
    )


# -- model context -------------------------------------------------------------------------------
_KIND_COLOURS = {
    "hidden": "#eaeef2",
    "tool_schema": "#dafbe1",
    "tool_summary": "#ddf4ff",
    "system": "#fbefff",
    "system_patch": "#fbefff",
    "message": "#f6f8fa",
    "tool_result": "#f6f8fa",
    "loaded_schema": LOAD,
}


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
        f'<div class="dtl-muted" title="tokenizer: {esc(ctx.tokenizer)}">{len(segments)} segments'
        f" · {esc(ctx.estimate.describe(ctx.total_tokens))}</div>",
        diagnosis_html(rec),
    ]
    for entry in _windowed(len(segments), keep):
        if isinstance(entry, tuple):
            tokens = sum(s.tokens for s in segments[entry[0] : entry[1]])
            parts.append(_hidden(*entry, f"segments ({tokens:,} tokens)"))
            continue
        broke = entry == diverged and brk is not None
        parts.append(_segment(entry, segments[entry], broke, bodies))
    carried = _carried_not_seen(rec)
    if carried:
        listed = ", ".join(carried[:LIST_LIMIT])
        parts.append(heading(f"In the request, not in the model context ({len(carried)})"))
        parts.append(
            f'<div style="opacity:.6">{esc(listed)}'
            + (f" … and {len(carried) - LIST_LIMIT} more" if len(carried) > LIST_LIMIT else "")
            + "</div>"
        )
    for note in ctx.notes:
        parts.append(f'<div class="dtl-muted">note: {esc(note)}</div>')
    return "".join(parts)


def _segment(i: int, seg: Segment, broke: bool, bodies: Bodies) -> str:
    keys = []
    if seg.kind in ("tool_schema", "loaded_schema", "tool_summary"):
        keys.append(key("tool", seg.label))
    if seg.load_point:
        keys.append(lp_key(seg.load_point))
    if broke:
        keys.append(key("brk", "here"))
    colour = _KIND_COLOURS.get(seg.kind, "#f6f8fa")
    style = f' style="outline:2px solid {BREAK};background:{BREAK}55"' if broke else ""
    summary = (
        f"{badge(seg.kind, colour)} <code>{esc(clip(seg.label, 60))}</code> "
        f'<span class="dtl-muted">{seg.tokens:,} tok · {esc(seg.source)}</span>'
        + (" " + badge("cache breaks here", BREAK) if broke else "")
    )
    details = bodies.details(summary, f"context:{i}", open_=broke)
    return f"<div {link_attrs(*keys, cls='dtl-row')}{style}>{details}</div>"


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
            name = _tool_name(inner)
            if name and name not in seen and isinstance(inner, dict) and inner.get("defer_loading"):
                carried.append(name)
    return carried


# -- cache break ---------------------------------------------------------------------------------
def break_html(brk: CacheBreak | None) -> str:
    if brk is None:
        return ""
    ops = []
    for op in brk.diff:
        ops.append(
            f'<div style="margin-top:4px"><code>{esc(op.op)} at {esc(op.path)}</code>'
            + pre(inline_diff(op.old or "", op.new or ""))
            + "</div>"
        )
    lost = f" · {brk.lost_tokens:,} tokens no longer cached" if brk.lost_tokens else ""
    return (
        f'<div {link_attrs(key("brk", "here"))} style="background:{BREAK}66;border-left:3px '
        f'solid #cf222e;padding:4px 6px"><b>Cache break: {esc(brk.cause)}</b>'
        f"{esc(' (' + ', '.join(brk.involved) + ')' if brk.involved else '')}"
        f"{esc(' at ' + brk.where if brk.where else '')}{esc(lost)}{''.join(ops)}</div>"
    )


def inline_diff(old: str, new: str) -> str:
    """`<del>` / `<ins>` over the characters that differ, escaped."""
    out = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(esc(old[i1:i2]))
            continue
        if i2 > i1:
            out.append(f'<del style="background:#ffd7d5">{esc(old[i1:i2])}</del>')
        if j2 > j1:
            out.append(f'<ins style="background:#ccffd8">{esc(new[j1:j2])}</ins>')
    return "".join(out)
