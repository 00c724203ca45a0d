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

Here: `build` and its input walk. What tools[] and tool_choice declare is
`wire.responses_tools`, hosted search's tool list `wire.responses_hosted`, and `parse`
comes from `wire.responses_reply`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from dtl_notebook._reuse.walks import Carried, ResumableWalk
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ImagePart,
    Message,
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
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import (
    JSON,
    LoadPoint,
    Plan,
    WireRequest,
    arguments_json,
    render_patch,
    stable_id,
)
from dtl_notebook.wire.responses_hosted import HOSTED_LOADED as _HOSTED_LOADED
from dtl_notebook.wire.responses_hosted import hosted_tools
from dtl_notebook.wire.responses_reply import parse
from dtl_notebook.wire.responses_tools import (
    PROVIDER,
    Setting,
    allowed_tools,
    choose_mode,
    declared_tools,
    function_items,
    function_json,
    search_pair,
)
from dtl_notebook.wire.tool_changes import TOOL_CHANGES, notice, update_text

__all__ = ["PROVIDER", "build", "parse"]


@dataclass
class _Walked(Carried):
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


class _Builder(ResumableWalk[_Walked, Plan]):
    """The input items after the instructions, resumed from the last walk of the transcript."""

    def __init__(self, setting: Setting) -> None:
        plan = setting.plan
        state = _Walked(
            setting.profile, setting.search, setting.load_mode, plan.first, setting.changes
        )
        super().__init__(plan, state, setting.notes)
        self.setting = setting

    def step(self, index: int, message: Message) -> None:
        if isinstance(message, SystemUpdate):
            if message.sections:
                text = render_patch(dict(message.sections))
                self.out.append({"role": "developer", "content": text})
            self.change(index)
            if message.tools_registered:  # after the notice of a change offering them
                self.registration(index, message)
        elif isinstance(message, UserMessage):
            self.out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            self.assistant(index, message)
        elif isinstance(message, ToolResultMessage):
            self.result(index, message)
            self.change(index)

    def change(self, index: int) -> None:
        """A tool change where it happened: a developer notice of what was withdrawn or
        redefined, and the new definitions in an `additional_tools` item (or a completed search
        pair); a versioned name where a name is redefined. `allowed_tools` (top level, outside
        the cached prefix) keeps the model to what it may call now."""
        setting = self.setting
        change = setting.tool_changes.changes.get(index)
        if change is None:
            return
        fresh = [a for a in change.added if a.new]
        if setting.search == "hosted":  # first definitions are declared among the registered
            # tools, or (registered later) where the registration was recorded
            fresh = [a for a in fresh if a.version > 1] if setting.profile.additional_tools else []
        lines = notice(change, aliased=True)
        if lines:
            text = update_text(None, lines)
            self.out.append({"role": "developer", "content": text})
        if fresh and setting.load_mode != "full_list":
            specs = [_renamed(a.spec, a.alias if a.version > 1 else a.name) for a in fresh]
            names = [t.name for t in specs]
            if setting.load_mode == "additional_tools":
                item = {"type": "additional_tools", "role": "developer"}
                self.out.append({**item, "tools": function_items(specs)})
            else:
                call_id = stable_id("dtl_tool_change_", str(index), ",".join(names))
                self.out.extend(search_pair(call_id, specs))
        self.state.load_points.append(
            LoadPoint(index, change.names, f"input.{len(self.out) - 1}", change.kind)
        )

    def registration(self, index: int, message: SystemUpdate) -> None:
        """Under hosted search, the tools that entered the registry here, declared in an
        `additional_tools` item (loaded: callable from here on, a load point) instead of among
        the tools registered at the start, so tools[] stays what earlier requests sent."""
        later = self.setting.registered_later()
        specs = []
        for name in message.tools_registered:
            spec = self.setting.tool_changes.first.get(name)
            if spec is None and name in self.setting.registry:
                spec = self.setting.registry[name]
            if name in later and spec is not None:
                specs.append(spec)
        if specs:
            item = {"type": "additional_tools", "role": "developer"}
            self.out.append({**item, "tools": function_items(specs)})
            path = f"input.{len(self.out) - 1}"
            change = self.setting.tool_changes.changes.get(index)
            offered = {a.name for a in change.added} if change is not None else set()
            last = self.state.load_points[-1] if self.state.load_points else None
            if offered and last is not None and last.message_index == index:
                # the change offering them: its definitions are here
                self.state.load_points[-1] = replace(last, path=path)
            loads = [t.name for t in specs if t.name not in offered]
            if loads:  # only registered: loaded here, as a search would load them
                self.state.load_points.append(LoadPoint(index, loads, path))

    def call(self, call: ToolCall, index: int) -> JSON:
        if self.setting.search == "native-client" and call.name == TOOL_SEARCH:
            self.state.search_calls.add(call.id)
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
            "name": self.setting.tool_changes.wire_name(call.name, index),
            "arguments": arguments,
        }
        if call.namespace:  # a namespaced call carries the namespace beside the plain name
            item["namespace"] = call.namespace
        return item

    def result(self, index: int, message: ToolResultMessage) -> None:
        specs = self.plan.loads.get(index, []) if self.setting.load_mode != "full_list" else []
        names = [s.name for s in specs]
        if message.call_id in self.state.search_calls:
            self.out.append(
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
                self.state.load_points.append(LoadPoint(index, names, f"input.{len(self.out) - 1}"))
            return
        self.out.append(
            {"type": "function_call_output", "call_id": message.call_id, "output": _output(message)}
        )
        if not specs:
            return
        if self.setting.load_mode == "additional_tools":
            # tools become available where the item stands; its role can only be "developer"
            self.out.append(
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
            self.out.extend(search_pair(call_id, specs))
        self.state.load_points.append(LoadPoint(index, names, f"input.{len(self.out) - 1}"))

    def assistant(self, index: int, message: AssistantMessage) -> None:
        for part in message.content:
            if isinstance(part, TextPart):
                if part.text:
                    self.out.append({"role": "assistant", "content": part.text})
            elif isinstance(part, ToolCallPart):
                self.out.append(self.call(part.call, index))
            elif isinstance(part, NativePart):
                hosted_item = part.block.type.startswith("tool_search") and (
                    part.block.data.get("execution") == "server"
                )
                if part.block.provider == PROVIDER and (
                    self.setting.search == "hosted" or not hosted_item
                ):
                    # earlier output items are replayed verbatim, hosted search items included
                    self.out.append(copy.deepcopy(part.block.data))
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
        new = [n for n in dict.fromkeys(names) if n not in self.state.hosted_loaded]
        self.state.hosted_loaded.update(new)
        if new:
            self.state.load_points.append(LoadPoint(index, new, f"input.{len(self.out) - 1}"))


def _renamed(spec: ToolSpec, name: str) -> ToolSpec:
    return spec if name == spec.name else spec.model_copy(update={"name": name})


def _declare(setting: Setting) -> list[JSON]:
    """The top-level tools: every registered one under hosted search, else `declared_tools`."""
    if setting.search == "hosted" and setting.load_mode != "full_list":
        return hosted_tools(setting, _HOSTED_LOADED.scan(setting.plan))  # resumed, grown
    return declared_tools(setting)


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
    notes = list(plan.notes)
    setting = Setting(plan, profile, search, mode, registry, namespaces or {}, tool_changes, notes)
    tools = _declare(setting)
    builder = _Builder(setting)
    builder.walk()
    choice = allowed_tools(setting, tools)
    payload: JSON = {"model": profile.model}
    if plan.system:
        payload["instructions"] = render_sections(plan.system)
    payload["input"] = builder.out
    if tools:
        payload["tools"] = tools
    if choice is not None:
        payload["tool_choice"] = choice
    payload.update(params)
    if diagnostics:
        _request_diagnostics(payload, profile, previous_response_id, notes)
    label = {"hosted": "native_hosted", "native-client": "native_client"}.get(search, mode)
    request = WireRequest(
        PROVIDER, profile.model, payload, label, builder.state.load_points, notes, profile
    )
    request.aliases = dict(setting.tool_changes.aliases)
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
