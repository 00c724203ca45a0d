"""OpenAI Responses with hosted tool search: every registered tool declared, OpenAI searches.

`search="hosted"` declares every registered tool (the shown ones first, the others deferred,
grouped by `Tool.namespace`), then the hosted `tool_search`; a tool the search loaded stays
deferred when the session activates it. Tools registered after the start are declared where
their registration was recorded (an `additional_tools` item), so tools[] stays what earlier
requests sent. Tool changes keep the declared tools (wire/native_changes.py).
Tool search: https://platform.openai.com/docs/guides/tools-tool-search.
"""

from __future__ import annotations

from collections.abc import Container
from operator import attrgetter

from dtl_notebook._reuse.frozen import FrozenDict, freeze
from dtl_notebook._reuse.registry import Memo, active
from dtl_notebook._reuse.walks import HistoryScan
from dtl_notebook.agent.messages import AssistantMessage, Message
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec
from dtl_notebook.wire.native_changes import growth_note, kept_declared, pinned, versioned_specs
from dtl_notebook.wire.request import JSON
from dtl_notebook.wire.responses_reply import tool_names
from dtl_notebook.wire.responses_tools import (
    PROVIDER,
    Setting,
    deferred_items,
    function_items,
    function_json,
)


def hosted_tools(setting: Setting, loaded: Container[str]) -> list[JSON]:
    """Every registered tool, the shown ones first, then OpenAI's hosted search (`loaded`:
    the tools the search loaded so far). After a tool change what was shown stays shown with
    its first definition, a redefined tool keeps its first one where it is declared, and a
    withdrawn tool no longer registered stays declared after the search (native_changes)."""
    changes, registry, namespaces = setting.tool_changes, setting.registry, setting.namespaces
    immediate = list(setting.plan.split.immediate)
    if changes.changes:
        immediate = [t for t in changes.initial if t.name not in setting.plan.split.deferred]
    # a tool registered after the start is declared where its registration was recorded
    # (an additional_tools item), so the registry growing leaves tools[] as it was
    later = setting.registered_later()
    shown = {
        t.name
        for t in immediate
        if t.name != TOOL_SEARCH and t.name not in loaded and t.name not in later
    }
    shown_tools = [t for t in immediate if t.name in shown]
    if not changes.changes:
        return [
            *_hosted_items(registry, shown_tools, namespaces, None, later),
            {"type": "tool_search"},
        ]
    # a withdrawn tool leaves the hosted catalog (one no longer registered too), or the
    # search could load it again: OpenAI shows deferred names up front, so the rendered
    # tools change there (a miss from that tool on); one shown from the start stays shown
    gone = {
        n
        for n in changes.withdrawn
        if n not in shown and (n in setting.plan.withdrawn or n not in registry)
    }
    if gone:
        setting.notes.append(
            f"hosted tool search: withdrawn tool(s) {sorted(gone)} are no longer declared, "
            "so the search cannot load them (OpenAI shows deferred names up front: tool "
            "prefix changes, cache miss from there)"
        )
    later = later | gone
    left_out = shown | later | {TOOL_SEARCH}
    # a redefined tool loaded at a marker: its first definition is that load's snapshot
    replaced = pinned(changes, left_out, lambda name: None)
    note = growth_note(changes, PROVIDER) if not setting.hosts_registrations() else None
    if note:
        setting.notes.append(note)
    kept = kept_declared(changes, registry, left_out)
    tail = [function_json(t, True) for t in kept]
    versioned = versioned_specs(changes) if not setting.profile.additional_tools else []
    if versioned:  # no additional_tools item can carry them: they go here instead
        tail += function_items(versioned)
        setting.notes.append(
            f"{setting.profile.model} takes no additional_tools: tool(s) "
            f"{[t.name for t in versioned]} are declared at the end of tools[] (tool prefix "
            "changes: cache miss from there)"
        )
    items = _hosted_items(registry, shown_tools, namespaces, replaced, later)
    return [*items, {"type": "tool_search"}, *tail]


def _hosted_step(loaded: dict[str, None], message: Message) -> None:
    """Tool names that OpenAI's hosted tool search loaded, in order."""
    if isinstance(message, AssistantMessage):
        for block in message.native_blocks:
            if block.provider == PROVIDER and block.type == "tool_search_output":
                loaded.update(dict.fromkeys(tool_names(block.data.get("tools") or [])))


HOSTED_LOADED: HistoryScan[dict[str, None]] = HistoryScan(dict, _hosted_step)


def _hosted_items(
    registry: ToolRegistry,
    shown_tools: list[ToolSpec],
    namespaces: dict[str, str],
    replaced: dict[str, ToolSpec] | None = None,
    left_out: frozenset[str] = frozenset(),
) -> list[JSON]:
    """The shown tools, then every other registered one deferred (a name in `replaced` with
    that definition: the one it was first declared with; one in `left_out` not at all),
    grouped by namespace: made once per registry version, shown tools, replacements, names
    left out and namespace descriptions, and shared (frozen)."""
    replaced = replaced or {}
    key = (
        id(registry),
        registry.version,
        tuple(map(id, shown_tools)),
        tuple(sorted(namespaces.items())),
        tuple((name, id(tool)) for name, tool in replaced.items()),
        left_out,
    )
    found = _HOSTED_ITEMS.get(key) if active() else None
    if found is not None:
        return list(found[1])
    tools = _hosted_groups(registry, shown_tools, namespaces, replaced, left_out)
    if active() and all(type(item) is FrozenDict for item in tools):
        _HOSTED_ITEMS.put_held(key, [registry, *shown_tools, *replaced.values()], tools)
    return tools


# (id(registry), its version, the shown tools' ids, namespace descriptions, the replacing
# definitions' ids) -> (refs to the registry, the shown tools and the replacing definitions,
# the items and frozen namespace groups)
_HOSTED_ITEMS = Memo("hosted tool lists")


def _hosted_groups(
    registry: ToolRegistry,
    shown_tools: list[ToolSpec],
    namespaces: dict[str, str],
    replaced: dict[str, ToolSpec],
    left_out: frozenset[str],
) -> list[JSON]:
    hidden = {t.name for t in shown_tools} | left_out | {TOOL_SEARCH}
    deferred: list[ToolSpec] = [t for t in registry if t.name not in hidden]
    if replaced:
        deferred = [replaced.get(t.name, t) for t in deferred]
    items = function_items(shown_tools) + deferred_items(deferred)
    every = [*shown_tools, *deferred]
    if not any(map(attrgetter("namespace"), every)):
        return items
    tools: list[JSON] = []
    groups: dict[str, JSON] = {}
    for tool, item in zip(every, items, strict=True):
        if tool.namespace is None:
            tools.append(item)
            continue
        if tool.namespace not in groups:  # defer_loading stays on the members, never here
            description = namespaces.get(tool.namespace, f"{tool.namespace} tools")
            groups[tool.namespace] = {
                "type": "namespace",
                "name": tool.namespace,
                "description": description,
                "tools": [],
            }
            tools.append(groups[tool.namespace])
        groups[tool.namespace]["tools"].append(item)
    return [freeze(item) if item.get("type") == "namespace" else item for item in tools]
