"""OpenAI Responses: request JSON from a session, and responses back to neutral messages.

Only immediate tools go top-level. A deferred tool enters right after the `function_call_output`
of its marked result, as an `additional_tools` item (preferred), or as a completed client
`tool_search_call` + `tool_search_output` pair with a call id derived from the tool call id and
the names (so the bytes never change), or not at all when the model supports neither: then the
full active list is sent top-level. Native search: `search="hosted"` declares every registered
tool (deferred, grouped by `Tool.namespace`) and OpenAI searches them; `search="native-client"`
declares a client-executed `tool_search` whose calls the session's own engine answers. Tool
changes keep the declared tools in every search mode (hosted: wire/native_changes.py).

Client `tool_search_call` / `tool_search_output` items are valid only next to a declared
client `tool_search` tool, so `load_mode="tool_search"` declares one from the first request (its
parameters are those of the synthetic calls; the model is told to use the tool_search function).
Tool search: https://platform.openai.com/docs/guides/tools-tool-search.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any

from dtl_notebook._reuse.frozen import FrozenDict, freeze
from dtl_notebook._reuse.items import tool_item, tool_items
from dtl_notebook._reuse.registry import Memo, active
from dtl_notebook._reuse.walks import Checkpoint, HistoryScan, Keyed, Walks, copied
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    NativeBlock,
    NativePart,
    SystemUpdate,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.agent.sections import render_sections
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec
from dtl_notebook.wire.native_changes import growth_note, kept_declared, pinned, versioned_specs
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.reply import Reply, ResponseFormatError, as_dict, call_from_json, require
from dtl_notebook.wire.request import (
    JSON,
    LoadPoint,
    Plan,
    WireRequest,
    arguments_json,
    render_patch,
    stable_id,
)
from dtl_notebook.wire.tool_changes import TOOL_CHANGES, ToolChanges, notice, update_text

PROVIDER = "openai-responses"
LOADER_DESCRIPTION = (
    "Records the tools that the tool_search function loaded. Call the tool_search function "
    "to search for tools."
)


@dataclass
class _Walked(Keyed):
    """The input walk's state at a checkpoint: the settings it read (`key`) and what it
    carries into the next messages."""

    KEY = ("profile", "search", "load_mode", "first", "changes")

    profile: ModelProfile
    search: str
    load_mode: str
    first: int
    changes: str  # "keep" (changes where they happened) or "rewrite" (the current list)
    load_points: list[LoadPoint] = field(default_factory=list)
    hosted_loaded: set[str] = field(default_factory=set)
    search_calls: set[str] = field(default_factory=set)

    def copy(self) -> _Walked:
        return copied(
            self,
            load_points=list(self.load_points),
            hosted_loaded=set(self.hosted_loaded),
            search_calls=set(self.search_calls),
        )


_walks: Walks[_Walked] = Walks()  # earlier input walks, resumed as the transcript grew


def function_json(tool: ToolSpec, deferred: bool = False) -> JSON:
    """A function tool's item, made once per definition and shared by every body that
    declares it (frozen: copy it to change it)."""
    return tool_item(_function_json, tool, deferred)


def function_items(tools: Iterable[ToolSpec]) -> list[JSON]:
    """`function_json` of each tool (the same tools as last time are found at C speed)."""
    return tool_items(_function_json, list(tools), False)


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


def _user_content(parts: list[TextPart | ImagePart]) -> list[JSON]:
    out: list[JSON] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "input_text", "text": part.text})
        else:
            url = part.url or f"data:{part.media_type or 'image/png'};base64,{part.data or ''}"
            out.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return out


def _output(message: ToolResultMessage) -> str | list[JSON]:
    if all(isinstance(p, TextPart) for p in message.content):
        text = message.text
        return f"Error: {text}" if message.is_error and not text.startswith("Error") else text
    return _user_content(message.content)


class _Builder:
    def __init__(
        self,
        plan: Plan,
        profile: ModelProfile,
        search: str,
        load_mode: str,
        registry: ToolRegistry,
        namespaces: dict[str, str],
        changes: str = "rewrite",
    ) -> None:
        self.plan, self.profile, self.search = plan, profile, search
        self.load_mode, self.registry, self.namespaces = load_mode, registry, namespaces
        self.changes = changes
        empty = ToolChanges()
        self.tool_changes = plan.tool_changes or empty if changes == "keep" else empty
        self.notes: list[str] = list(plan.notes)
        self.input: list[JSON] = []
        self.load_points: list[LoadPoint] = []
        self.hosted_loaded: set[str] = set()
        self.search_calls: set[str] = set()

    def tools(self) -> list[JSON]:
        split = self.plan.split
        changes = self.tool_changes
        if changes.changes and self.search == "client":
            return self._declared_tools()
        if self.load_mode == "full_list":
            return function_items(self.plan.full_list())
        immediate = list(split.immediate)
        if self.search == "hosted":
            return self._hosted(immediate)
        if self.search == "native-client":
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
        if self.load_mode == "tool_search":
            tools.append(self._loader_declaration())
        return tools

    def _declared_tools(self) -> list[JSON]:
        """The top-level tools of a session whose tool set changed: the initial tools with
        their first definitions, a withdrawn one in its place (soft removal and
        `allowed_tools` keep the list stable). In the full list, the tools loaded at markers
        follow, then every definition the changes added (a redefinition under a versioned
        name)."""
        changes, split = self.tool_changes, self.plan.split
        if self.load_mode != "full_list":
            tools = function_items([t for t in changes.initial if t.name not in split.deferred])
            if self.load_mode == "tool_search":
                tools.append(self._loader_declaration())
            return tools
        return function_items(changes.declared_list())

    def _renamed(self, spec: ToolSpec, name: str) -> ToolSpec:
        return spec if name == spec.name else spec.model_copy(update={"name": name})

    def change(self, index: int) -> None:
        """A tool change where it happened: a developer notice of what was withdrawn or
        redefined, and the new definitions in an `additional_tools` item (or a completed search
        pair); a versioned name where a name is redefined. `allowed_tools` (top level, outside
        the cached prefix) keeps the model to what it may call now."""
        change = self.tool_changes.changes.get(index)
        if change is None:
            return
        fresh = [a for a in change.added if a.new]
        if self.search == "hosted":  # first definitions are declared among the registered
            # tools, or (registered later) where the registration was recorded
            fresh = [a for a in fresh if a.version > 1] if self.profile.additional_tools else []
        lines = notice(change, aliased=True)
        if lines:
            text = update_text(None, lines)
            self.input.append({"role": "developer", "content": text})
        if fresh and self.load_mode != "full_list":
            specs = [self._renamed(a.spec, a.alias if a.version > 1 else a.name) for a in fresh]
            names = [t.name for t in specs]
            if self.load_mode == "additional_tools":
                item = {"type": "additional_tools", "role": "developer"}
                self.input.append({**item, "tools": function_items(specs)})
            else:
                call_id = stable_id("dtl_tool_change_", str(index), ",".join(names))
                self.input.extend(_search_pair(call_id, specs))
        self.load_points.append(
            LoadPoint(index, change.names, f"input.{len(self.input) - 1}", change.kind)
        )

    def registration(self, index: int, message: SystemUpdate) -> None:
        """Under hosted search, the tools that entered the registry here, declared in an
        `additional_tools` item (loaded: callable from here on, a load point) instead of among
        the tools registered at the start, so tools[] stays what earlier requests sent."""
        later = self._registered_later()
        specs = []
        for name in message.tools_registered:
            spec = self.tool_changes.first.get(name)
            if spec is None and name in self.registry:
                spec = self.registry[name]
            if name in later and spec is not None:
                specs.append(spec)
        if specs:
            item = {"type": "additional_tools", "role": "developer"}
            self.input.append({**item, "tools": function_items(specs)})
            path = f"input.{len(self.input) - 1}"
            change = self.tool_changes.changes.get(index)
            offered = {a.name for a in change.added} if change is not None else set()
            last = self.load_points[-1] if self.load_points else None
            if offered and last is not None and last.message_index == index:
                # the change offering them: its definitions are here
                self.load_points[-1] = replace(last, path=path)
            loads = [t.name for t in specs if t.name not in offered]
            if loads:  # only registered: loaded here, as a search would load them
                self.load_points.append(LoadPoint(index, loads, path))

    def allowed_tools(self, tools: list[JSON]) -> JSON | None:
        """`tool_choice` restricting calls to the visible tools, where a declared tool is
        withdrawn (or an old version of a redefined one still declared), None otherwise, or
        where the model cannot name a tool declared outside the top-level list."""
        changes = self.tool_changes
        if not changes.changes or not self.profile.allowed_tools:
            return None
        if not changes.withdrawn and not changes.aliases:
            return None
        if self.search == "hosted":
            self.notes.append(
                "hosted tool search: allowed_tools would have to name every registered tool the "
                "search may load, so withdrawn tools are told in a developer message only (calls "
                "to them are refused locally)"
            )
            return None
        end = len(self.plan.messages)
        names = sorted(changes.wire_name(n, end) for n in changes.visible)
        top = {t.get("name") for t in tools}
        if not self.profile.allowed_tools_loaded and any(n not in top for n in names):
            self.notes.append(
                f"{self.profile.model} takes allowed_tools over top-level tools only and some "
                "visible tools were loaded later: withdrawn tools are told in text only"
            )
            return None
        allowed: list[JSON] = [{"type": "function", "name": n} for n in names]
        if any(t.get("type") == "tool_search" for t in tools):
            allowed.append({"type": "tool_search"})
        return {"type": "allowed_tools", "mode": "auto", "tools": allowed}

    def _loader_declaration(self) -> JSON:
        """The client tool_search declaration that the synthetic search pairs need (client
        search items are accepted only beside a declared client tool_search tool)."""
        local = self.registry.get(TOOL_SEARCH) if TOOL_SEARCH in self.registry else None
        spec: JSON = {"type": "tool_search", "execution": "client"}
        spec["description"] = LOADER_DESCRIPTION
        spec["parameters"] = (
            local.parameters
            if local is not None
            else {"type": "object", "properties": {"query": {"type": "string"}}}
        )
        return spec

    def _hosted(self, immediate: list[ToolSpec]) -> list[JSON]:
        """Every registered tool, the shown ones first, then OpenAI's hosted search. After a
        tool change what was shown stays shown with its first definition, a redefined tool
        keeps its first one where it is declared, and a withdrawn tool no longer registered
        stays declared after the search (native_changes)."""
        changes = self.tool_changes
        if changes.changes:
            immediate = [t for t in changes.initial if t.name not in self.plan.split.deferred]
        # a tool the hosted search loaded stays deferred when the session activates it
        loaded = _HOSTED_LOADED.scan(self.plan)  # resumed over the grown transcript
        # a tool registered after the start is declared where its registration was recorded
        # (an additional_tools item), so the registry growing leaves tools[] as it was
        later = self._registered_later()
        shown = {
            t.name
            for t in immediate
            if t.name != TOOL_SEARCH and t.name not in loaded and t.name not in later
        }
        shown_tools = [t for t in immediate if t.name in shown]
        if not changes.changes:
            return [
                *_hosted_items(self.registry, shown_tools, self.namespaces, None, later),
                {"type": "tool_search"},
            ]
        # a withdrawn tool leaves the hosted catalog (one no longer registered too), or the
        # search could load it again: OpenAI shows deferred names up front, so the rendered
        # tools change there (a miss from that tool on); one shown from the start stays shown
        gone = {
            n
            for n in changes.withdrawn
            if n not in shown and (n in self.plan.withdrawn or n not in self.registry)
        }
        if gone:
            self.notes.append(
                f"hosted tool search: withdrawn tool(s) {sorted(gone)} are no longer declared, "
                "so the search cannot load them (OpenAI shows deferred names up front: tool "
                "prefix changes, cache miss from there)"
            )
        later = later | gone
        left_out = shown | later | {TOOL_SEARCH}
        # a redefined tool loaded at a marker: its first definition is that load's snapshot
        replaced = pinned(changes, left_out, lambda name: None)
        note = growth_note(changes, PROVIDER) if not self._hosts_registrations() else None
        if note:
            self.notes.append(note)
        kept = kept_declared(changes, self.registry, left_out)
        tail = [function_json(t, True) for t in kept]
        versioned = versioned_specs(changes) if not self.profile.additional_tools else []
        if versioned:  # no additional_tools item can carry them: they go here instead
            tail += function_items(versioned)
            self.notes.append(
                f"{self.profile.model} takes no additional_tools: tool(s) "
                f"{[t.name for t in versioned]} are declared at the end of tools[] (tool prefix "
                "changes: cache miss from there)"
            )
        items = _hosted_items(self.registry, shown_tools, self.namespaces, replaced, later)
        return [*items, {"type": "tool_search"}, *tail]

    def _hosts_registrations(self) -> bool:
        """Whether tools registered after the start are declared where their registration was
        recorded (hosted search with additional_tools items) rather than in tools[]."""
        return (
            self.search == "hosted"
            and self.load_mode == "additional_tools"
            and self.profile.additional_tools
        )

    def _registered_later(self) -> frozenset[str]:
        """The names `_hosts_registrations` keeps out of tools[] (none where it does not)."""
        return self.tool_changes.registered if self._hosts_registrations() else frozenset()

    def call(self, call: ToolCall, index: int) -> JSON:
        if self.search == "native-client" and call.name == TOOL_SEARCH:
            self.search_calls.add(call.id)
            return {
                "type": "tool_search_call",
                "call_id": call.id,
                "execution": "client",
                "status": "completed",
                "arguments": call.arguments,
            }
        if call.invalid_arguments is not None:
            arguments = call.invalid_arguments
        else:
            arguments = arguments_json(call.arguments)
        item: JSON = {
            "type": "function_call",
            "call_id": call.id,
            "name": self.tool_changes.wire_name(call.name, index),
            "arguments": arguments,
        }
        if call.namespace:  # a namespaced call carries the namespace beside the plain name
            item["namespace"] = call.namespace
        return item

    def result(self, index: int, message: ToolResultMessage) -> None:
        specs = self.plan.loads.get(index, []) if self.load_mode != "full_list" else []
        names = [s.name for s in specs]
        if message.call_id in self.search_calls:
            self.input.append(
                {
                    "type": "tool_search_output",
                    "call_id": message.call_id,
                    "execution": "client",
                    "status": "completed",
                    "tools": [function_json(s, True) for s in specs],
                }
            )
            if message.is_error:  # tool_search_output carries tools only, no text
                self.notes.append(
                    f"tool_search call {message.call_id!r} failed; a tool_search_output has no "
                    "text, so the model sees an empty result"
                )
            if specs:
                self.load_points.append(LoadPoint(index, names, f"input.{len(self.input) - 1}"))
            return
        self.input.append(
            {"type": "function_call_output", "call_id": message.call_id, "output": _output(message)}
        )
        if not specs:
            return
        if self.load_mode == "additional_tools":
            # tools become available where the item stands; its role can only be "developer"
            self.input.append(
                {
                    "type": "additional_tools",
                    "role": "developer",
                    "tools": function_items(specs),
                }
            )
        else:
            # a completed client search pair: the output answers its call by call_id, and the
            # id is derived from the names so that the bytes never change
            call_id = stable_id("dtl_tool_load_", message.call_id, ",".join(names))
            self.input.extend(_search_pair(call_id, specs))
        self.load_points.append(LoadPoint(index, names, f"input.{len(self.input) - 1}"))

    def assistant(self, index: int, message: AssistantMessage) -> None:
        for part in message.content:
            if isinstance(part, TextPart):
                if part.text:
                    self.input.append({"role": "assistant", "content": part.text})
            elif isinstance(part, ToolCallPart):
                self.input.append(self.call(part.call, index))
            elif isinstance(part, NativePart):
                hosted_item = part.block.type.startswith("tool_search") and (
                    part.block.data.get("execution") == "server"
                )
                if part.block.provider == PROVIDER and (self.search == "hosted" or not hosted_item):
                    # earlier output items are replayed verbatim, hosted search items included
                    self.input.append(copy.deepcopy(part.block.data))
                    if hosted_item and part.block.type == "tool_search_output":
                        self._hosted_load_point(index, part.block.data)
                elif part.block.provider == PROVIDER:
                    self.notes.append(
                        f"dropped a hosted {part.block.type!r} item from message {index}: hosted "
                        "search is not declared (its tools are sent as active tools instead)"
                    )
                else:
                    self.notes.append(
                        f"dropped a {part.block.provider} {part.block.type!r} block from message "
                        f"{index}: another provider's JSON is never replayed"
                    )

    def _hosted_load_point(self, index: int, data: JSON) -> None:
        """Where OpenAI's hosted search loaded tools (a namespace counts as its members)."""
        names: list[str] = []
        for tool in data.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            members = tool.get("tools") if tool.get("type") == "namespace" else None
            for inner in members if isinstance(members, list) else [tool]:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    names.append(inner["name"])
        new = [n for n in dict.fromkeys(names) if n not in self.hosted_loaded]
        self.hosted_loaded.update(new)
        if new:
            self.load_points.append(LoadPoint(index, new, f"input.{len(self.input) - 1}"))

    def build_input(self) -> None:
        plan = self.plan
        settings = _Walked(self.profile, self.search, self.load_mode, plan.first, self.changes)
        start = plan.first
        resumed = _walks.find(plan, settings.key())
        if resumed is not None:
            start = resumed.seen
            self.input = resumed.messages
            self.notes.extend(resumed.notes)
            walked = resumed.state
            self.load_points, self.hosted_loaded = walked.load_points, walked.hosted_loaded
            self.search_calls = walked.search_calls
        notes_before = len(self.notes) - (len(resumed.notes) if resumed is not None else 0)
        for index in range(start, len(plan.messages)):
            message = plan.messages[index]
            if isinstance(message, SystemUpdate):
                if message.sections:
                    text = render_patch(dict(message.sections))
                    self.input.append({"role": "developer", "content": text})
                self.change(index)
                if message.tools_registered:  # after the notice of a change offering them
                    self.registration(index, message)
            elif isinstance(message, UserMessage):
                self.input.append({"role": "user", "content": _user_content(message.content)})
            elif isinstance(message, AssistantMessage):
                self.assistant(index, message)
            elif isinstance(message, ToolResultMessage):
                self.result(index, message)
                self.change(index)
        state = copied(
            settings,
            load_points=self.load_points,
            hosted_loaded=self.hosted_loaded,
            search_calls=self.search_calls,
        )
        frozen = resumed.frozen if resumed is not None else 0
        checkpoint = Checkpoint(
            len(plan.messages), self.input, state, self.notes[notes_before:], frozen
        )
        _walks.keep(plan, checkpoint)  # keeps a copy of the state


def _search_pair(call_id: str, specs: list[ToolSpec]) -> list[JSON]:
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
    items = tool_items(_function_json, shown_tools, False)
    items += tool_items(_function_json, deferred, True)
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


def _hosted_step(loaded: dict[str, None], message: Message) -> None:
    """Tool names that OpenAI's hosted tool search loaded, in order."""
    if isinstance(message, AssistantMessage):
        for block in message.native_blocks:
            if block.provider == PROVIDER and block.type == "tool_search_output":
                loaded.update(dict.fromkeys(_tool_names(block.data.get("tools") or [])))


_HOSTED_LOADED: HistoryScan[dict[str, None]] = HistoryScan(dict, _hosted_step)


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


def build(
    plan: Plan,
    profile: ModelProfile,
    registry: ToolRegistry,
    *,
    search: str = "client",
    load_mode: str | None = None,
    namespaces: dict[str, str] | None = None,
    diagnostics: bool = False,
    previous_response_id: str | None = None,
    tool_changes: str = "keep",
    **params: Any,
) -> WireRequest:
    """The Responses request body.

    `search`: "client" (the session's tool_search function), "hosted" (OpenAI searches every
    registered tool) or "native-client" (a client-executed tool_search answered locally).
    `load_mode` forces "additional_tools", "tool_search" or "full_list". `namespaces` gives
    namespace descriptions. `diagnostics=True` asks for OpenAI's prompt cache diagnostics
    against `previous_response_id` (`prompt_cache_options.comparison_response_id`; GPT-5.6 and
    later). `tool_changes`: "keep" (a removal told in a developer message and enforced with
    `allowed_tools` where the model takes it, new definitions where they happened, a redefined
    tool under a versioned name; hosted search: the developer message only, as allowed_tools
    would have to name every deferred tool) or "rewrite" (the current list: a miss). Other
    keyword arguments go into the body as they are.
    """
    if tool_changes not in TOOL_CHANGES:
        raise ValueError(f"tool_changes must be one of {TOOL_CHANGES}, got {tool_changes!r}")
    if search != "client" and not profile.native_tool_search:
        raise ValueError(
            f"{profile.model} does not support OpenAI tool_search; "
            "use search='client' or override native_tool_search=True"
        )
    mode = choose_mode(profile, search, load_mode, plan)
    if mode == "full_list" and plan.split.deferred and load_mode is None:
        plan.notes.append(
            f"{profile.model} supports neither additional_tools nor tool_search items: sending "
            "the full active list (tool prefix changes: cache miss)"
        )
    builder = _Builder(plan, profile, search, mode, registry, namespaces or {}, tool_changes)
    tools = builder.tools()
    builder.build_input()
    choice = builder.allowed_tools(tools)
    payload: JSON = {"model": profile.model}
    if plan.system:
        payload["instructions"] = render_sections(plan.system)
    payload["input"] = builder.input
    if tools:
        payload["tools"] = tools
    if choice is not None:
        payload["tool_choice"] = choice
    payload.update(params)
    if diagnostics:
        _request_diagnostics(payload, profile, previous_response_id, builder.notes)
    label = {"hosted": "native_hosted", "native-client": "native_client"}.get(search, mode)
    request = WireRequest(
        PROVIDER, profile.model, payload, label, builder.load_points, builder.notes, profile
    )
    request.aliases = dict(builder.tool_changes.aliases)
    return request


def _request_diagnostics(
    payload: JSON, profile: ModelProfile, previous: str | None, notes: list[str]
) -> None:
    """Ask for prompt cache diagnostics; request metadata, not part of the cached prefix
    (`prompt_cache_options`: https://platform.openai.com/docs/guides/prompt-caching)."""
    if not profile.exact_cache_boundary:
        notes.append(
            f"{profile.model} takes no prompt_cache_options (GPT-5.6 and later): no prompt "
            "cache diagnostics requested"
        )
    elif previous is None:
        notes.append("prompt cache diagnostics need the previous response id: none on this turn")
    else:
        options = dict(payload.get("prompt_cache_options") or {})
        payload["prompt_cache_options"] = {**options, "comparison_response_id": previous}


def parse(response: Any, model: str | None = None) -> Reply:
    """A Responses `Response` (SDK object or dict) as a neutral assistant message. A `failed`
    response raises ProviderError (its error's code and message); an `incomplete` one keeps
    `incomplete_details` on the Reply; a refusal is kept as text and on `Reply.refusal`."""
    data = as_dict(response, PROVIDER)
    items = require(data, "output", list, PROVIDER, "")
    content: list[TextPart | ToolCallPart | NativePart] = []
    loaded: list[str] = []
    refusals: list[str] = []
    for i, item in enumerate(items):
        where = f"output.{i}"
        kind = require(item, "type", str, PROVIDER, where)
        if kind == "message":
            for j, part in enumerate(require(item, "content", list, PROVIDER, where)):
                ptype = require(part, "type", str, PROVIDER, f"{where}.content.{j}")
                if ptype == "output_text":
                    text = require(part, "text", str, PROVIDER, f"{where}.content.{j}")
                    content.append(TextPart(text=text))
                elif ptype == "refusal":
                    refusal = require(part, "refusal", str, PROVIDER, f"{where}.content.{j}")
                    content.append(TextPart(text=refusal))
                    refusals.append(refusal)
        elif kind == "function_call":
            content.append(ToolCallPart(call=_function_call(item, where)))
        elif kind == "tool_search_call" and item.get("execution") == "client":
            call_id = require(item, "call_id", str, PROVIDER, where)
            arguments = item.get("arguments")
            call = ToolCall(
                id=call_id,
                name=TOOL_SEARCH,
                arguments=arguments if isinstance(arguments, dict) else {},
            )
            content.append(ToolCallPart(call=call))
        else:
            if kind == "tool_search_output":
                loaded.extend(_tool_names(item.get("tools") or []))
            content.append(NativePart(block=NativeBlock(provider=PROVIDER, data=item)))
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ResponseFormatError(PROVIDER, "usage", "expected an object")
    message = AssistantMessage(content=content, provider=PROVIDER, model=data.get("model", model))
    details = data.get("incomplete_details")
    if details is not None and not isinstance(details, dict):
        raise ResponseFormatError(PROVIDER, "incomplete_details", "expected an object")
    return Reply(
        message,
        usage,
        data.get("status"),
        loaded,
        data,
        refusal="".join(refusals) or None,
        incomplete_details=details if data.get("status") == "incomplete" else None,
    )


def _function_call(item: JSON, where: str) -> ToolCall:
    call_id = require(item, "call_id", str, PROVIDER, where)
    name = require(item, "name", str, PROVIDER, where)
    raw = require(item, "arguments", str, PROVIDER, where)
    namespace = item.get("namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else None  # kept as sent
    return call_from_json(call_id, name, raw, namespace)


def _tool_names(tools: list[Any]) -> list[str]:
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names.extend(_tool_names(tool.get("tools") or []))
        elif isinstance(tool.get("name"), str):
            names.append(tool["name"])
    return names
