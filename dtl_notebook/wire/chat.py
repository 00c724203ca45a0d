"""OpenAI Chat Completions: request JSON from a session, and responses back (`parse`, from
`wire.chat_reply`).

Chat Completions has no deferred-loading protocol: every request carries the full active list,
newly active tools at the end (activation order) so the longest prefix survives (tools are part
of the cached prefix, order included: https://platform.openai.com/docs/guides/prompt-caching).
System prompt patches go in as appended system messages, or (`system_updates="rerender"`)
re-render the first system message, which rewrites the prefix. The message walk is shared
with Kimi (`chat_messages`) and the bridge (its carriers).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook._reuse.frozen import freeze
from dtl_notebook._reuse.items import tool_item, tool_items
from dtl_notebook._reuse.registry import active, memoized
from dtl_notebook._reuse.walks import Carried, ResumableWalk
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    NativePart,
    SystemUpdate,
    TextPart,
    ToolCallPart,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.agent.sections import render_sections
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.wire.chat_reply import PROVIDER, parse
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import (
    JSON,
    LoadPoint,
    Plan,
    WireRequest,
    arguments_json,
    render_patch,
)
from dtl_notebook.wire.tool_changes import TOOL_CHANGES, ToolChanges, notice, update_text

SYSTEM_UPDATES = ("append", "rerender")
__all__ = [
    "PROVIDER",
    "SYSTEM_UPDATES",
    "allowed_tools",
    "build",
    "chat_messages",
    "function_items",
    "function_json",
    "parse",
]


_Ref = Callable[[], ToolSpec | None]
# what a builder sends for a SystemUpdate besides its section patch (the bridge's carriers)
Carrier = Callable[[SystemUpdate], list[JSON]]


def _none() -> None:
    return None


def _ref(tool: ToolSpec | None) -> _Ref:
    return _none if tool is None else weakref.ref(tool)


@dataclass
class _Walked(Carried):
    """The message walk's state at a checkpoint: the settings it read (`key`) and what it
    carries into the next messages."""

    KEY = ("provider", "system_updates", "first", "batches", "changes", "carrier")

    provider: str
    system_updates: str
    first: int
    batches: bool  # Kimi's tool declarations after each run of tool messages
    changes: str  # "keep" (soft removal, changes where they happened) or "rewrite"
    carrier: Carrier | None = None
    batch: list[int] = field(default_factory=list)  # the open run of tool messages
    # (row in the messages, index, names, load point kind)
    loads: list[tuple[int, int, list[str], str]] = field(default_factory=list)
    marked: dict[str, None] = field(default_factory=dict)
    # each name a batch looked up: its active and retired definitions then, held weakly (an
    # active tool's implementation may hold the session, which must stay free to go)
    reads: dict[str, tuple[_Ref, _Ref]] = field(default_factory=dict)


def function_json(tool: ToolSpec) -> JSON:
    """A function tool's item, made once per definition and shared by every body that
    declares it (frozen: copy it to change it)."""
    return tool_item(_function_json, tool, False)


def function_items(tools: Iterable[ToolSpec]) -> list[JSON]:
    """`function_json` of each tool (the same tools as last time are found at C speed)."""
    return tool_items(_function_json, list(tools), False)


def _function_json(tool: ToolSpec, _deferred: bool) -> JSON:
    function: JSON = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = tool.parameters
    return {"type": "function", "function": function}


def _user_content(parts: list[TextPart | ImagePart]) -> str | list[JSON]:
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    out: list[JSON] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        else:
            url = part.url or f"data:{part.media_type or 'image/png'};base64,{part.data or ''}"
            out.append({"type": "image_url", "image_url": {"url": url}})
    return out


def chat_messages(
    plan: Plan,
    provider: str,
    system_updates: str,
    notes: list[str],
    batch_tools: dict[str, ToolSpec] | None = None,
    tool_changes: str = "keep",
    carrier: Carrier | None = None,
) -> tuple[list[JSON], list[LoadPoint], set[str]]:
    """The messages array, its load points and the tool names they declare.

    With `carrier`, each SystemUpdate also sends the messages it returns (after the update's
    section patch).

    With `batch_tools` (Kimi: the active tools by name), a `{"role": "system", "tools": [...]}`
    message follows each run of tool messages, declaring what that run's markers added (the
    definition recorded at the marker, else the active or retired one), and each tool change
    declares its new definitions the same way. A change is told in a system message where it
    happened (soft removal: every definition stays declared; the session refuses calls to a
    withdrawn tool)."""
    if system_updates not in SYSTEM_UPDATES:
        raise ValueError(f"system_updates must be one of {SYSTEM_UPDATES}, got {system_updates!r}")
    if tool_changes not in TOOL_CHANGES:
        raise ValueError(f"tool_changes must be one of {TOOL_CHANGES}, got {tool_changes!r}")
    sections = plan.system
    if plan.later_updates and system_updates == "rerender":
        sections = plan.held
        notes.append("system prompt re-rendered with the current sections (prefix changes)")
    text = render_sections(sections)
    head: list[JSON] = []
    if text:
        head.append(_system_message(text) if active() else {"role": "system", "content": text})
    walk = _HistoryWalk(plan, provider, system_updates, notes, batch_tools, tool_changes, carrier)
    walk.walk()
    if walk.state.batch:
        walk.flush()
    out = head + walk.out
    points = [
        LoadPoint(index, names, f"messages.{len(head) + row}" + (".tools" * (kind == "load")), kind)
        for row, index, names, kind in walk.state.loads
    ]
    return out, points, set(walk.state.marked)


@memoized("system messages")
def _system_message(text: str) -> JSON:
    """The leading system message, one frozen object per text: later bodies repeat it."""
    return freeze({"role": "system", "content": text})  # type: ignore[no-any-return]


class _HistoryWalk(ResumableWalk[_Walked, Plan]):
    """The messages after the system message, resumed from the last walk of the transcript."""

    def __init__(
        self,
        plan: Plan,
        provider: str,
        system_updates: str,
        notes: list[str],
        batch_tools: dict[str, ToolSpec] | None,
        changes: str = "keep",
        carrier: Carrier | None = None,
    ) -> None:
        settings = _Walked(
            provider, system_updates, plan.first, batch_tools is not None, changes, carrier
        )
        super().__init__(plan, settings, notes)
        self.provider, self.system_updates = provider, system_updates
        self.batch_tools, self.carrier = batch_tools, carrier
        empty = ToolChanges()
        self.tool_changes = plan.tool_changes or empty if changes == "keep" else empty

    def resumes(self, state: _Walked) -> bool:
        """Whether each tool a batch looked up is still the same definition."""
        active, retired = self.batch_tools or {}, self.plan.retired
        return all(
            active.get(name) is a() and retired.get(name) is r()
            for name, (a, r) in state.reads.items()
        )

    def step(self, index: int, message: Message) -> None:
        out = self.out
        if self.state.batch and not isinstance(message, ToolResultMessage):
            self.flush()
        if isinstance(message, SystemUpdate):
            patch = None
            if self.system_updates == "append" and message.sections:
                patch = render_patch(dict(message.sections))
            if self.carrier is None:
                self.change(index, patch)
            else:  # the bridge carries tool changes in messages of its own
                if patch:
                    out.append({"role": "system", "content": patch})
                out.extend(self.carrier(message))
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            wire = self.tool_changes.wire_name
            out.append(_assistant(index, message, self.provider, self.notes, wire))
        elif isinstance(message, ToolResultMessage):
            if any(isinstance(p, ImagePart) for p in message.content):  # tool messages: text
                self.notes.append(
                    f"tool result {message.call_id!r}: images dropped (text only here)"
                )
            text = message.text
            if message.is_error and not text.startswith("Error"):
                text = f"Error: {text}"
            out.append({"role": "tool", "tool_call_id": message.call_id, "content": text})
            self.state.batch.append(index)

    def change(self, index: int, patch: str | None) -> None:
        """A system update's patch and tool change: told in a system message (the
        definitions stay declared), Kimi's new definitions in a tool-bearing one after it."""
        change = self.tool_changes.changes.get(index)
        lines = notice(change, aliased=True) if change is not None else []
        text = update_text(patch, lines)
        if text:
            self.out.append({"role": "system", "content": text})
        if change is None:
            return
        fresh = [a for a in change.added if a.new]
        if fresh and self.batch_tools is not None:
            specs = [a.spec.model_copy(update={"name": a.alias}) for a in fresh]
            self.out.append({"role": "system", "tools": function_items(specs)})
        self.state.loads.append((len(self.out) - 1, index, change.names, change.kind))

    def flush(self) -> None:
        """Close a run of tool messages (Kimi: declare the tools its markers added); the
        tool changes its runs made follow."""
        batch, self.state.batch = self.state.batch, []
        self._flush_markers(batch)
        for index in batch:
            message = self.plan.messages[index]
            if isinstance(message, ToolResultMessage) and message.non_append_change is not None:
                self.change(index, None)

    def _flush_markers(self, batch: list[int]) -> None:
        if self.batch_tools is None:
            return
        active, retired = self.batch_tools, self.plan.retired
        reads, marked = self.state.reads, self.state.marked
        specs: dict[str, ToolSpec] = {}
        for index in batch:
            message = self.plan.messages[index]
            assert isinstance(message, ToolResultMessage)
            for name in message.added_tool_names or []:
                if name in specs:
                    continue
                reads[name] = (_ref(active.get(name)), _ref(retired.get(name)))
                if name in active:
                    specs[name] = message.snapshot(name) or active[name].spec()
                    marked[name] = None
                elif name in retired:  # deactivated later: history keeps the definition
                    specs[name] = message.snapshot(name) or retired[name]
        if specs:
            self.out.append({"role": "system", "tools": function_items(specs.values())})
            self.state.loads.append((len(self.out) - 1, batch[-1], list(specs), "load"))


def _assistant(
    index: int,
    message: AssistantMessage,
    provider: str,
    notes: list[str],
    wire: Callable[[str, int], str],
) -> JSON:
    item: JSON = {"role": "assistant"}
    text = message.text
    if text:
        item["content"] = text
    calls = []
    for part in message.content:
        if isinstance(part, ToolCallPart):
            call = part.call
            arguments = call.invalid_arguments or arguments_json(call.arguments)
            calls.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": wire(call.name, index), "arguments": arguments},
                }
            )
        elif isinstance(part, NativePart):
            notes.append(
                f"dropped a {part.block.provider} {part.block.type!r} block from message {index}:"
                f" {provider} has no such block"
            )
    if calls:
        item["tool_calls"] = calls
    if "content" not in item and not calls:  # content may be left out only beside tool_calls
        item["content"] = ""
    return item


def build(
    plan: Plan,
    profile: ModelProfile,
    *,
    system_updates: str = "append",
    tool_changes: str = "keep",
    **params: Any,
) -> WireRequest:
    """The Chat Completions body: the full active tool list, newest last. `tool_changes`:
    "keep" (soft removal: every definition ever declared stays, a redefinition is appended
    under a versioned name, the model is told in a system message and the session refuses
    calls to a withdrawn tool) or "rewrite" (the current list: a miss, hides a definition)."""
    notes = list(plan.notes)
    messages, points, _ = chat_messages(
        plan, PROVIDER, system_updates, notes, tool_changes=tool_changes
    )
    changes = plan.tool_changes if tool_changes == "keep" else None
    keep = changes is not None and bool(changes.changes)
    tools = changes.declared_list() if changes is not None and keep else plan.full_list()
    if plan.split.deferred:
        notes.append(
            "Chat Completions has no deferred-loading protocol: loaded tools are appended to the "
            "full list (tool prefix changes: cache miss)"
        )
    payload: JSON = {"model": profile.model, "messages": messages}
    if tools:
        payload["tools"] = function_items(tools)
    if keep and changes is not None:
        choice = allowed_tools(profile, changes, len(plan.messages))
        if choice is not None:
            payload["tool_choice"] = choice
    payload.update(params)
    request = WireRequest(PROVIDER, profile.model, payload, "full_list", points, notes, profile)
    request.aliases = dict(changes.aliases) if keep and changes is not None else {}
    return request


def allowed_tools(profile: ModelProfile, changes: ToolChanges, end: int) -> JSON | None:
    """Chat's `allowed_tools` tool choice over the visible tools, where the server honours it
    (profile flag) and a declared tool is withdrawn."""
    if not profile.allowed_tools or not (changes.withdrawn or changes.aliases):
        return None
    names = sorted(changes.wire_name(n, end) for n in changes.visible)
    tools = [{"type": "function", "function": {"name": n}} for n in names]
    return {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": tools}}
