"""The request pane: the exact JSON body, with load-point carriers and deferred tools marked."""

from __future__ import annotations

from typing import Any

from dtl_notebook.live.threads import CONTINUE_NOTE
from dtl_notebook.notebook.html import (
    badge,
    dumps,
    element,
    esc,
    heading,
    json_html,
    key,
    link_classes,
    pre,
    text,
)
from dtl_notebook.notebook.panes import (
    HEAD,
    TAIL,
    Bodies,
    hidden_row,
    item_path,
    names_list,
    recent_loads,
    tool_name,
    windowed,
)
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.theme import BREAK, CARRIER, LOAD
from dtl_notebook.notebook.thread_lines import request_thread_line


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


def carrier_kind(payload: dict[str, Any], path: str) -> str | None:
    """The carrier kind of the item at `path` (`input.3`, `messages.2`), if any."""
    field_name, _, index = path.partition(".")
    items = payload.get(field_name)
    if not (isinstance(items, list) and index.isdigit() and int(index) < len(items)):
        return None
    return _carrier(items[int(index)])


def carriers(payload: dict[str, Any]) -> int:
    """How many items of a request carry a load point on the wire (for captured requests,
    whose load points are not known otherwise)."""
    return sum(
        _carrier(item) is not None
        for name in ("messages", "input")
        for item in payload.get(name) or []
    )


def _item_summary(field_name: str, i: int, item: Any) -> str:
    if field_name == "tools":
        text = f"{tool_name(item)}"
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
    if rec.state is None and not rec.load_points:  # captured: count what the wire carries
        counted = f"{carriers(payload)} load-point carrier(s)"
    else:
        counted = f"{len(rec.load_points)} load point(s)"
    parts = [
        element(
            "div",
            f"{esc(rec.provider)} · {esc(rec.model)} · mode {text('code', rec.mode)} · "
            + esc(counted),
            cls="dtl-muted",
        ),
        request_thread_line(rec.cache.thread),
    ]
    thread = rec.cache.thread
    for note in rec.notes:
        if thread is not None and note.startswith(CONTINUE_NOTE):
            continue  # the thread line above says it
        parts.append(text("div", f"note: {note}", cls="dtl-muted"))
    for name, value in payload.items():
        if name in ("tools", "messages", "input") and isinstance(value, list):
            parts.append(_list_field(name, value, loads, recent, loaded, bodies))
            continue
        size = len(dumps(value, None))
        if size <= 300:
            field = pre(text("b", name) + ": " + json_html(value, None))
        else:
            field = bodies.details(f"{text('b', name)} ({size:,} chars)", f"request:{name}")
        parts.append(_break_row(field) if _breaks_at(rec, name, inside=True) else field)
    return "".join(parts)


def _breaks_at(rec: RequestRecord, path: str, *, inside: bool = False) -> bool:
    """The request's cache break is at `path` (an item: at a part of it too; `inside`: at
    anything within the field `path`, e.g. a system section at `system.0`)."""
    where = rec.cache.cache_break.where if rec.cache.cache_break is not None else None
    if where is None:
        return False
    return where == path or item_path(where) == path or (inside and where.startswith(path + "."))


def _break_row(html: str) -> str:
    """A field (or a list's heading) where the cache breaks, linked to the break's marks."""
    classes = link_classes(key("brk", "here"), cls="dtl-row")
    return element("div", html + badge("cache breaks here", BREAK), cls=classes)


def _list_field(
    name: str,
    items: list[Any],
    loads: dict[str, Any],
    recent: set[str],
    loaded: set[str],
    bodies: Bodies,
) -> str:
    rows = [heading(f"{name} [{len(items)}]")]
    if _breaks_at(bodies.rec, name):  # the list as a whole, e.g. the deferred-tool prompt
        rows = [_break_row(rows[0])]
    if name == "tools":
        return "".join(rows) + _tools_field(items, loaded, bodies)
    keep = {int(p.split(".")[1]) for p in recent if p.startswith(name + ".")}
    for entry in windowed(len(items), keep):
        if isinstance(entry, tuple):
            rows.append(hidden_row(*entry, "items", f"request:{name}"))
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
        tool = tool_name(item)
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
        rows.append(names_list(earlier, "more immediate tools"))
    if waiting:
        rows.append(
            names_list(
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
        style += "border-left:3px dashed rgba(128, 128, 128, .8);"
    if carrier:
        marks += " " + badge(f"carrier: {carrier}", CARRIER)
        style += "border-left:3px solid rgba(64, 140, 255, .9);"
    if lp is not None:
        marks += " " + badge(load_point_label(lp.kind, lp.tools), LOAD)
    if _breaks_at(bodies.rec, f"{field_name}.{i}"):
        keys = [*(keys or []), key("brk", "here")]
        marks += " " + badge("cache breaks here", BREAK)
    details = bodies.details(text("code", label) + marks, f"request:{field_name}.{i}", open_=open_)
    classes = link_classes(*(keys or []), cls="dtl-row")
    return element("div", details, cls=classes, style=style or None)


# -- model context -------------------------------------------------------------------------------


# how each kind of load point reads: tools entering, withdrawn, or redefined at this item
_KIND_SIGNS = {"load": "+", "addition": "+", "removal": "-", "redefinition": "redefined"}


def load_point_label(kind: str, tools: list[str]) -> str:
    """E.g. "load point: + get_weather", "removal: - get_weather"."""
    title = "load point" if kind in ("load", "addition") else kind
    return f"{title}: {_KIND_SIGNS.get(kind, kind)} {', '.join(tools)}"
