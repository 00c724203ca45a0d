"""Anthropic Messages with server-side tool search: every registered tool declared deferred.

`search="native-bm25"` or `"native-regex"` declares Anthropic's search tool, the shown tools
and every other registered tool deferred; the server searches them and loads what it finds in
a `tool_search_tool_result` (https://docs.claude.com/en/docs/agents-and-tools/tool-use/
tool-search-tool). Tool changes keep the declared tools (wire/native_changes.py).
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from dtl_notebook._reuse.frozen import FrozenDict
from dtl_notebook._reuse.registry import Memo, active
from dtl_notebook._reuse.walks import HistoryScan
from dtl_notebook.agent.messages import AssistantMessage, Message
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec
from dtl_notebook.wire.anthropic_tools import (
    PROVIDER,
    Setting,
    deferred_json_items,
    tool_json,
    tool_json_items,
)
from dtl_notebook.wire.native_changes import growth_note, kept_declared, pinned, versioned_specs
from dtl_notebook.wire.request import JSON

# the server tool search variants:
# https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool
NATIVE_SEARCH: dict[str, JSON] = {  # by AnthropicSearch (wire/modes.py)
    "native-bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "native-regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
SEARCH_TOOL_NAMES = {tool["name"] for tool in NATIVE_SEARCH.values()}
SERVER_SEARCH_BLOCKS = {"server_tool_use", "tool_search_tool_result"}


class Calls:
    """What the native-search tool list reads from the transcript: every called tool name,
    and the names Anthropic's server-side search referenced, in order."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.loaded: dict[str, None] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> Calls:
        copied = Calls()
        copied.used, copied.loaded = set(self.used), dict(self.loaded)
        return copied


def _calls_step(calls: Calls, message: Message) -> None:
    if not isinstance(message, AssistantMessage):
        return
    calls.used.update(c.name for c in message.tool_calls)
    for block in message.native_blocks:
        if block.provider == PROVIDER and block.type == "tool_search_tool_result":
            refs = (block.data.get("content") or {}).get("tool_references") or []
            calls.loaded.update((r["tool_name"], None) for r in refs if isinstance(r, dict))


CALLS = HistoryScan(Calls, _calls_step)  # resumed over the grown transcript


def native_tools(
    setting: Setting, used: Container[str], loaded: Container[str]
) -> tuple[list[JSON], str, bool]:
    """Top-level tools in server-side search (`used`: every tool called so far, `loaded`: the
    tools the search loaded): the search tool, the shown tools, then every other registered
    tool deferred, and after a tool change what stays declared (`_native_tail`)."""
    split = setting.plan.split
    immediate, deferred = list(split.immediate), dict(split.deferred)
    changes = setting.tool_changes
    if changes.changes:  # what was shown stays shown, with its first definition
        immediate = [t for t in changes.initial if t.name not in deferred]
    keep = [
        t
        for t in immediate
        if t.name not in loaded and (t.name != TOOL_SEARCH or TOOL_SEARCH in used)
    ]
    left_out = {t.name for t in keep} | {TOOL_SEARCH}
    replaced = {n: t for n, t in deferred.items() if n not in left_out}
    replaced.update((n, t) for n, t in setting.plan.loaded_snapshots().items() if n not in left_out)
    tail: list[JSON] = []
    if changes.changes:
        replaced.update(pinned(changes, left_out, setting.plan.loaded_snapshot))
        tail = _native_tail(setting, left_out)
    # the search tool and the shown ones are plain (one of them takes the cache marker):
    # the scans over tools[] resume from the first read-only item, the deferred catalog
    tools = [dict(NATIVE_SEARCH[setting.search]), *(dict(t) for t in tool_json_items(keep))]
    tools += _deferred_items(setting.registry, left_out, replaced)
    return [*tools, *tail], "native_search", True


def _native_tail(setting: Setting, left_out: set[str]) -> list[JSON]:
    """After the registered tools: the withdrawn ones no longer registered, then (by
    reference, or told in text) each redefinition under its versioned name, deferred where
    a tool_addition names it, shown otherwise (the note says what that costs)."""
    changes = setting.tool_changes
    tail = [tool_json(t, True) for t in kept_declared(changes, setting.registry, left_out)]
    note = growth_note(changes, PROVIDER)
    if note:
        setting.notes.append(note)
    if setting.changes == "by_value":  # the system messages define them
        return tail
    versioned = versioned_specs(changes)
    tail += [tool_json(t, deferred=setting.changes == "by_reference") for t in versioned]
    if versioned and setting.changes == "soft":
        setting.notes.append(
            f"{setting.profile.model} takes no tool changes in system messages: tool(s) "
            f"{[t.name for t in versioned]} are declared shown at the end of tools[] (a shown "
            "tool appended to tools[] edits the rendered tools: cache miss from there)"
        )
    return tail


# -- messages -------------------------------------------------------------------------


def server_search_block(data: JSON) -> bool:
    """A block of Anthropic's server-side tool search (other server tools, such as code
    execution or web search, are replayed in every search mode)."""
    if data.get("type") == "server_tool_use":
        return data.get("name") in SEARCH_TOOL_NAMES
    return data.get("type") in SERVER_SEARCH_BLOCKS


# (id(registry), its version, names left out, the replacing definitions' ids) -> (refs to
# the registry and those definitions, the deferred items): a native-search body's every tool
_DEFERRED_ITEMS = Memo("native tool lists")


def _deferred_items(
    registry: ToolRegistry, left_out: set[str], replaced: dict[str, ToolSpec]
) -> list[JSON]:
    """Every registered tool but `left_out`, deferred, in registry order. tool_json reads only
    the definition: a registered Tool serves as is, unless it was loaded (its snapshot) or is
    deferred in the session (its current definition), as `replaced` says."""
    key = (
        id(registry),
        registry.version,
        frozenset(left_out),
        tuple((name, id(tool)) for name, tool in replaced.items()),
    )
    found = _DEFERRED_ITEMS.get(key) if active() else None
    if found is not None:
        return list(found[1])
    candidates: list[ToolSpec] = [t for t in registry if t.name not in left_out]
    if replaced:
        candidates = [replaced.get(t.name, t) for t in candidates]
    items = deferred_json_items(candidates)
    if active() and all(type(item) is FrozenDict for item in items):  # made once, kept
        _DEFERRED_ITEMS.put_held(key, [registry, *replaced.values()], items)
    return items
