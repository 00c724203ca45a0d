"""OpenAI Responses: what a request declares in `tools` and `tool_choice`, but hosted search.

Only immediate tools go top-level; deferred ones enter the input at their load points. A
client `tool_search` is declared where the input carries client search items
(`load_mode="tool_search"`: they are valid only beside one) or where the session's search is
client-executed (`search="native-client"`). After a tool change what was shown stays shown
with its first definition, and `allowed_tools` keeps the model to what it may call now.
Tool search: https://platform.openai.com/docs/guides/tools-tool-search. Hosted search
declares every registered tool: `wire.responses_hosted`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dtl_notebook._reuse.items import tool_item, tool_items
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import JSON, Plan
from dtl_notebook.wire.tool_changes import ToolChanges

PROVIDER = "openai-responses"
LOADER_DESCRIPTION = (
    "Records the tools that the tool_search function loaded. Call the tool_search function "
    "to search for tools."
)


@dataclass
class Setting:
    """What a Responses request is built from besides the history: the plan, the model, the
    search mode ("client", "hosted", "native-client"), the load mode, the registry, namespace
    descriptions, how tool changes are written ("keep" or "rewrite") and the notes it adds."""

    plan: Plan
    profile: ModelProfile
    search: str
    load_mode: str
    registry: ToolRegistry
    namespaces: dict[str, str]
    changes: str
    notes: list[str]
    tool_changes: ToolChanges = field(init=False)  # the plan's, kept where they are written

    def __post_init__(self) -> None:
        empty = ToolChanges()
        self.tool_changes = self.plan.tool_changes or empty if self.changes == "keep" else empty

    def hosts_registrations(self) -> bool:
        """Whether tools registered after the start are declared where their registration was
        recorded (hosted search with additional_tools items) rather than in tools[]."""
        return (
            self.search == "hosted"
            and self.load_mode == "additional_tools"
            and self.profile.additional_tools
        )

    def registered_later(self) -> frozenset[str]:
        """The names `hosts_registrations` keeps out of tools[] (none where it does not)."""
        return self.tool_changes.registered if self.hosts_registrations() else frozenset()


def function_json(tool: ToolSpec, deferred: bool = False) -> JSON:
    """A function tool's item, made once per definition and shared by every body that
    declares it (frozen: copy it to change it)."""
    return tool_item(_function_json, tool, deferred)


def function_items(tools: Iterable[ToolSpec]) -> list[JSON]:
    """`function_json` of each tool (the same tools as last time are found at C speed)."""
    return tool_items(_function_json, list(tools), False)


def deferred_items(tools: Iterable[ToolSpec]) -> list[JSON]:
    """`function_json` of each tool, deferred."""
    return tool_items(_function_json, list(tools), True)


def _function_json(tool: ToolSpec, deferred: bool) -> JSON:
    out: JSON = {"type": "function", "name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    # our schemas need not meet strict mode's rules (every property required, no extra
    # properties): https://platform.openai.com/docs/guides/function-calling
    out["strict"] = False
    if deferred:
        out["defer_loading"] = True
    return out


def choose_mode(profile: ModelProfile, search: str, load_mode: str | None, plan: Plan) -> str:
    """The load mode: the override (build_request checked it), else the best the model
    supports, else the full list."""
    if load_mode is not None:
        return load_mode
    if profile.additional_tools:
        return "additional_tools"
    if profile.tool_search_items or search != "client":  # native search implies the items
        return "tool_search"
    return "full_list"


def declared_tools(setting: Setting) -> list[JSON]:
    """The top-level tools in client search, client-executed search or the full list."""
    split, changes = setting.plan.split, setting.tool_changes
    if changes.changes and setting.search == "client":
        return _changed_tools(setting)
    if setting.load_mode == "full_list":
        return function_items(setting.plan.full_list())
    immediate = list(split.immediate)
    if setting.search == "native-client":
        if changes.changes:  # what was shown stays shown, with its first definition
            immediate = [t for t in changes.initial if t.name not in split.deferred]
        local = next((t for t in immediate if t.name == TOOL_SEARCH), None)
        tools = function_items([t for t in immediate if t.name != TOOL_SEARCH])
        spec: JSON = {
            "type": "tool_search",
            "execution": "client",
            "description": local.description if local else "Find tools.",
        }
        if local is not None:
            spec["parameters"] = local.parameters
        return [*tools, spec]
    tools = function_items(immediate)
    if setting.load_mode == "tool_search":
        tools.append(_loader_declaration(setting.registry))
    return tools


def _changed_tools(setting: Setting) -> list[JSON]:
    """The top-level tools of a session whose tool set changed: the initial tools with
    their first definitions, a withdrawn one in its place (soft removal and
    `allowed_tools` keep the list stable). In the full list, the tools loaded at markers
    follow, then every definition the changes added (a redefinition under a versioned
    name)."""
    changes, split = setting.tool_changes, setting.plan.split
    if setting.load_mode != "full_list":
        tools = function_items([t for t in changes.initial if t.name not in split.deferred])
        if setting.load_mode == "tool_search":
            tools.append(_loader_declaration(setting.registry))
        return tools
    return function_items(changes.declared_list())


def _loader_declaration(registry: ToolRegistry) -> JSON:
    """The client tool_search declaration that the synthetic search pairs need (client
    search items are accepted only beside a declared client tool_search tool)."""
    local = registry.get(TOOL_SEARCH) if TOOL_SEARCH in registry else None
    spec: JSON = {"type": "tool_search", "execution": "client"}
    spec["description"] = LOADER_DESCRIPTION
    spec["parameters"] = (
        local.parameters
        if local is not None
        else {"type": "object", "properties": {"query": {"type": "string"}}}
    )
    return spec


def allowed_tools(setting: Setting, tools: list[JSON]) -> JSON | None:
    """`tool_choice` restricting calls to the visible tools, where a declared tool is
    withdrawn (or an old version of a redefined one still declared), None otherwise, or
    where the model cannot name a tool declared outside the top-level list."""
    changes, profile = setting.tool_changes, setting.profile
    if not changes.changes or not profile.allowed_tools:
        return None
    if not changes.withdrawn and not changes.aliases:
        return None
    if setting.search == "hosted":
        setting.notes.append(
            "hosted tool search: allowed_tools would have to name every registered tool the "
            "search may load, so withdrawn tools are told in a developer message only (calls "
            "to them are refused locally)"
        )
        return None
    end = len(setting.plan.messages)
    names = sorted(changes.wire_name(n, end) for n in changes.visible)
    top = {t.get("name") for t in tools}
    if not profile.allowed_tools_loaded and any(n not in top for n in names):
        setting.notes.append(
            f"{profile.model} takes allowed_tools over top-level tools only and some "
            "visible tools were loaded later: withdrawn tools are told in text only"
        )
        return None
    allowed: list[JSON] = [{"type": "function", "name": n} for n in names]
    if any(t.get("type") == "tool_search" for t in tools):
        allowed.append({"type": "tool_search"})
    return {"type": "allowed_tools", "mode": "auto", "tools": allowed}


def search_pair(call_id: str, specs: list[ToolSpec]) -> list[JSON]:
    """A completed client search pair loading `specs` (its output answers its call)."""
    names = [s.name for s in specs]
    call: JSON = {
        "type": "tool_search_call",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "arguments": {"query": " ".join(names), "limit": len(names)},
    }
    output: JSON = {
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": [function_json(s, True) for s in specs],
    }
    return [call, output]
