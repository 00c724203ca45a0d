"""Tool items built once per definition and shared by every request that declares them.

A native or hosted search body declares the whole registry, so building each definition's
item again for every request was most of its cost (and, as tens of thousands of new objects,
set off the garbage collector). A validated tool is immutable (its `parameters` are frozen),
so its item is made once, frozen, and the same object goes into every later body: validation,
the model context and the cache analysis then find it unchanged by identity. A tool whose
`parameters` are not read-only (one built without validation) gets a fresh item every time.
An item is kept only while its tool lives (a dropped registry frees its items).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from dtl_notebook._reuse.frozen import FrozenDict, freeze
from dtl_notebook._reuse.registry import Memo, active

JSON = dict[str, Any]


class Definition(Protocol):
    """A tool definition: immutable where its `parameters` are frozen."""

    @property
    def parameters(self) -> dict[str, Any]: ...


Make = Callable[[Any, bool], JSON]
_ITEMS = Memo("tool items")  # (id(tool), deferred, make) -> (ref to the tool, its item)
# (make, deferred, ids of the tools) -> (refs to those tools, their items): the recent lists
_LISTS = Memo("tool lists")


def tool_items(make: Make, tools: list[Any], deferred: bool) -> list[JSON]:
    """`tool_item` for each of `tools`; a list of the same tools as a recent one (the same
    objects, found by their ids at C speed) gives the same items without looking at each."""
    if not active():
        return [make(tool, deferred) for tool in tools]
    key = (make, deferred, tuple(map(id, tools)))
    found = _LISTS.hit(key)
    if found is not None:
        return list(found[1])
    items = [tool_item(make, tool, deferred) for tool in tools]
    if all(type(tool.parameters) is FrozenDict for tool in tools):
        _LISTS.put_held(key, tools, items)  # while every tool lives: the ids stay theirs
    return list(items)


def tool_item(make: Make, tool: Any, deferred: bool) -> JSON:
    """`make(tool, deferred)`, frozen and shared while `tool` is alive and validated."""
    if type(tool.parameters) is not FrozenDict or not active():
        return make(tool, deferred)
    key = (id(tool), deferred, make)
    found = _ITEMS.get(key)
    if found is not None and found[0]() is tool:
        return found[1]  # type: ignore[no-any-return]
    item: JSON = freeze(make(tool, deferred))
    _ITEMS.put_owned(key, tool, item)
    return item
