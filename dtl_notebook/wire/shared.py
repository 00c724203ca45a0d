"""Tool items built once per definition and shared by every request that declares them.

A native or hosted search body declares the whole registry, so building each definition's
item again for every request was most of its cost (and, as tens of thousands of new objects,
set off the garbage collector). A validated tool is immutable (`agent.frozen`), so its item is
made once, frozen, and the same object goes into every later body: validation, the model
context and the cache analysis then find it unchanged by identity. A tool whose `parameters`
are not read-only (one built without validation) gets a fresh item every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from dtl_notebook.agent.frozen import FrozenDict, freeze
from dtl_notebook.agent.tools import ToolSpec

JSON = dict[str, Any]
MAX_ITEMS = 200_000  # beyond this the memo starts over (registries come and go)

_items: dict[tuple[int, bool, Callable[..., JSON]], tuple[ToolSpec, JSON]] = {}
# per (make, deferred): the last list of tools asked for, their ids and their items
_lists: dict[
    tuple[Callable[..., JSON], bool], tuple[list[ToolSpec], tuple[int, ...], list[JSON]]
] = {}
_lock = threading.Lock()
_switch = threading.local()  # .off: this thread builds every item afresh and keeps none


@contextmanager
def unshared() -> Iterator[None]:
    """Within this block (this thread), every tool item is built afresh and nothing is kept."""
    before = getattr(_switch, "off", False)
    _switch.off = True
    try:
        yield
    finally:
        _switch.off = before


def sharing() -> bool:
    """Whether this thread may reuse earlier work (not inside `unshared`)."""
    return not getattr(_switch, "off", False)


def tool_items(
    make: Callable[[ToolSpec, bool], JSON], tools: list[ToolSpec], deferred: bool
) -> list[JSON]:
    """`tool_item` for each of `tools`; the same list of tools as last time (the same objects,
    checked at C speed) gives the same items without looking at each one."""
    if getattr(_switch, "off", False):
        return [make(tool, deferred) for tool in tools]
    ids = tuple(map(id, tools))
    last = _lists.get((make, deferred))
    if last is not None and last[1] == ids:
        return list(last[2])
    items = [tool_item(make, tool, deferred) for tool in tools]
    if all(type(tool.parameters) is FrozenDict for tool in tools):
        with _lock:
            _lists[(make, deferred)] = (list(tools), ids, items)  # kept: ids stay unique
    return list(items)


def tool_item(make: Callable[[ToolSpec, bool], JSON], tool: ToolSpec, deferred: bool) -> JSON:
    """`make(tool, deferred)`, frozen and shared while `tool` is alive and validated."""
    if type(tool.parameters) is not FrozenDict or getattr(_switch, "off", False):
        return make(tool, deferred)
    key = (id(tool), deferred, make)
    found = _items.get(key)
    if found is not None and found[0] is tool:
        return found[1]
    item: JSON = freeze(make(tool, deferred))
    with _lock:
        if len(_items) >= MAX_ITEMS:
            _items.clear()
        _items[key] = (tool, item)  # the tool is kept, so its id is not reused meanwhile
    return item


def forget() -> None:
    """Drop every shared item (the next bodies build theirs again)."""
    with _lock:
        _items.clear()
        _lists.clear()
