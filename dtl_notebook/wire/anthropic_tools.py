"""Anthropic Messages: what a request declares in `tools` in client search, and the blocks
that name tools in a tool change's system message.

Deferred tools stay in top-level `tools` with `defer_loading: true` and enter the context at a
`tool_reference` block (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool).
Anthropic adds hidden scaffolding to the rendered prompt once any tool is deferred, so the first
request carrying a `defer_loading` tool misses the whole cache (measured by Claude Code and Pi).
In client search the builder therefore declares one never-called deferred placeholder tool from
the first request (profile flag `deferred_placeholder`); it is never referenced, so it is
neither a load point nor a loaded tool. A tool change is written by one of four strategies
(`change_strategy`). Server-side search declares every tool: `wire.anthropic_search`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from dtl_notebook._reuse.frozen import freeze
from dtl_notebook._reuse.items import tool_item, tool_items
from dtl_notebook._reuse.registry import active
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import JSON, Plan
from dtl_notebook.wire.tool_changes import TOOL_CHANGES, Change, ToolChanges

PROVIDER = "anthropic"
PLACEHOLDER = {
    "name": "deferred_tool_placeholder",
    "description": (
        "Placeholder, never call it. Declared deferred from the first request so that tools "
        "loaded later keep the prompt cache."
    ),
    "input_schema": {"type": "object", "properties": {}},
    "defer_loading": True,
}
# the same read-only object in every body (with reuse on), as registered tools' items are
_SHARED_PLACEHOLDER = freeze(PLACEHOLDER)


@dataclass
class Setting:
    """What an Anthropic request is built from besides the history: the plan, the model, the
    search mode ("client", "native-bm25", "native-regex"), the registry, how tool changes are
    written ("by_value", "by_reference", "soft", "rewrite": `change_strategy`) and the notes
    it adds."""

    plan: Plan
    profile: ModelProfile
    search: str
    registry: ToolRegistry
    changes: str
    notes: list[str]
    tool_changes: ToolChanges = field(init=False)  # the plan's, where they are kept

    def __post_init__(self) -> None:
        empty = ToolChanges()
        self.tool_changes = self.plan.tool_changes or empty if self.changes != "rewrite" else empty


def tool_json(tool: ToolSpec, deferred: bool = False) -> JSON:
    """A tool's definition item, made once per definition and shared by every body that
    declares it (frozen: copy it to change it)."""
    return tool_item(_tool_json, tool, deferred)


def tool_json_items(tools: list[ToolSpec]) -> list[JSON]:
    """`tool_json` of each tool (the same tools as last time are found at C speed)."""
    return tool_items(_tool_json, tools, False)


def deferred_json_items(tools: list[ToolSpec]) -> list[JSON]:
    """`tool_json` of each tool, deferred."""
    return tool_items(_tool_json, tools, True)


def _tool_json(tool: ToolSpec, deferred: bool) -> JSON:
    out: JSON = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters
    if deferred:
        out["defer_loading"] = True
    return out


def client_tools(setting: Setting) -> tuple[list[JSON], str, bool]:
    """Top-level tools in client search, the mode, and whether load points become
    tool_reference blocks."""
    split, profile = setting.plan.split, setting.profile
    immediate, deferred = list(split.immediate), dict(split.deferred)
    if setting.tool_changes.changes:
        return _changed_tools(setting, deferred)
    full = tool_json_items(setting.plan.full_list())
    if not deferred and not setting.plan.retired:
        if not profile.tool_reference:
            return full, "full_list", False
        return full + placeholder(setting, full), "tool_reference", False
    if not profile.tool_reference:
        setting.notes.append(
            f"{profile.model} does not support defer_loading/tool_reference: sending the "
            "full active list (tool prefix changes: cache miss)"
        )
        return full, "full_list", False
    if not immediate:  # Anthropic rejects a request whose tools are all deferred
        setting.notes.append(
            "every active tool is deferred and Anthropic rejects an all-deferred request: "
            "sending all tools as immediate"
        )
        return full + placeholder(setting, full), "full_list", False
    # a tool deactivated after its load point keeps its definition, so history stays valid
    later = [*deferred.items(), *setting.plan.retired.items()]
    snapshots = setting.plan.loaded_snapshots()
    deferred_json = deferred_json_items([snapshots.get(n) or t for n, t in later])
    shown = tool_json_items(immediate)
    return shown + placeholder(setting, shown) + deferred_json, "tool_reference", True


def _changed_tools(setting: Setting, deferred: dict[str, ToolSpec]) -> tuple[list[JSON], str, bool]:
    """The tools of a session whose tool set changed: everything ever declared stays
    declared, the initial tools first with their first definitions (a withdrawn one in its
    place), then the placeholder, the deferred tools loaded at markers, and (by reference,
    or without tool changes in system messages) the definitions the changes added, under
    versioned names where a name was redefined."""
    changes, profile = setting.tool_changes, setting.profile
    shown = tool_json_items([t for t in changes.initial if t.name not in deferred])
    later = [*deferred.items(), *setting.plan.retired.items()]
    loaded = {n: tool_json(setting.plan.loaded_snapshot(n) or t, deferred=True) for n, t in later}
    declared = {t["name"] for t in shown}
    tail: list[JSON] = []  # in the order the transcript declared them: the list only grows
    extra: list[JSON] = []
    for name, spec in changes.later:
        if name in declared:
            continue
        if name in loaded:
            tail.append(loaded[name])
        elif setting.changes != "by_value":  # by value, the system message defines it
            renamed = spec if spec.name == name else spec.model_copy(update={"name": name})
            extra.append(tool_json(renamed, deferred=setting.changes == "by_reference"))
            tail.append(extra[-1])
        declared.add(name)
    tail += [t for n, t in loaded.items() if n not in declared]
    if setting.changes == "soft" and extra:
        setting.notes.append(
            f"{profile.model} takes no tool changes in system messages: tool(s) "
            f"{[t['name'] for t in extra]} are declared after the others (tool prefix "
            "changes: cache miss)"
        )
    references = profile.tool_reference and bool(shown)
    if not references:
        if not shown and profile.tool_reference:
            setting.notes.append(
                "every declared tool is deferred and Anthropic rejects an all-deferred "
                "request: sending all tools as immediate"
            )
        plain = [{k: v for k, v in t.items() if k != "defer_loading"} for t in tail]
        return [*shown, *plain], "full_list", False
    # without tool changes in system messages a new immediate tool still changes what the
    # model is shown, at the end of the list (the note above says so)
    return shown + placeholder(setting, shown) + tail, "tool_reference", True


def placeholder(setting: Setting, immediate: list[JSON]) -> list[JSON]:
    """The never-called deferred placeholder, after the immediate tools. None without an
    immediate tool (an all-deferred request is rejected), nor where nothing can be loaded
    later: no deferred tool and every registered tool active already (a tool run, a
    search or a tool change can load any other, so the first one keeps the cache)."""
    if not setting.profile.deferred_placeholder or not immediate:
        return []
    loadable = len(setting.registry) > len(setting.plan.order) or TOOL_SEARCH in setting.registry
    if not (setting.plan.split.deferred or setting.plan.retired or loadable):
        return []
    if PLACEHOLDER["name"] in setting.registry:
        setting.notes.append(
            f"a registered tool is named {PLACEHOLDER['name']!r}: no deferred placeholder is "
            "declared (the first deferred tool will miss the cache once)"
        )
        return []
    return [_SHARED_PLACEHOLDER if active() else copy.deepcopy(PLACEHOLDER)]


def change_blocks(setting: Setting, change: Change) -> list[JSON]:
    """tool_removal blocks, then tool_addition blocks: a reference to a declared tool, or
    (by value) the definition itself, which keeps tools[] fixed and the name unchanged."""
    by_value = setting.changes == "by_value"
    aliases = setting.tool_changes.aliases
    blocks: list[JSON] = []
    for wire in change.withdrawn_aliased:
        name = aliases.get(wire, wire) if by_value else wire
        blocks.append({"type": "tool_removal", "tool": tool_reference_change(name)})
    native = setting.search != "client"  # there every first definition is in tools[]
    for added in change.added:
        in_tools = native and added.new and added.version == 1
        if by_value and not in_tools and (added.new or not added.latest):
            definition = {"type": "tool_definition", "definition": tool_json(added.spec)}
            blocks.append({"type": "tool_addition", "tool": definition})
        else:
            name = added.name if by_value else added.alias
            blocks.append({"type": "tool_addition", "tool": tool_reference_change(name)})
    return blocks


def tool_reference_change(name: str) -> JSON:
    """The tool a tool_addition / tool_removal names (`name`, where a tool_result's
    reference says `tool_name`)."""
    return {"type": "tool_reference", "name": name}


def change_strategy(plan: Plan, profile: ModelProfile, search: str, tool_changes: str) -> str:
    """How tool changes are written for this model: "by_value" (inline beta), "by_reference",
    "soft" (told in text, definitions kept) or "rewrite" (the current list)."""
    if tool_changes not in TOOL_CHANGES:
        raise ValueError(f"tool_changes must be one of {TOOL_CHANGES}, got {tool_changes!r}")
    changed = plan.tool_changes is not None and bool(plan.tool_changes.changes)
    if tool_changes == "rewrite":
        if not (changed and profile.refuses_tool_edits):
            return "rewrite"
        plan.notes.append(
            f"{profile.model} refuses an edit of tools[] mid-session (preserved thinking): "
            "tool changes are kept in system messages instead of rewriting the list"
        )
    if profile.mid_conversation_system and profile.tool_changes_by_value:
        return "by_value"
    if profile.mid_conversation_system and profile.tool_changes_by_reference:
        return "by_reference"
    return "soft"
