"""Anthropic Messages: request JSON from a session, and responses back to neutral messages.

Deferred tools stay in top-level `tools` with `defer_loading: true` and enter the context at a
`tool_reference` block (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool).
A marked result follows the references-only rule (`wire.rules.split_references`): its
`tool_result.content` holds the references, and the ordinary result moves to sibling blocks
after all `tool_result` blocks of that user message.

An `is_error` result that carries references: Anthropic requires an error result to hold only
text, and references cannot live anywhere else, so the references win. The `tool_result` holds
the references without `is_error`, and the error text follows as a sibling block prefixed with
"Error:". The request notes say so.

Here: `build`, its message walk and `parse`. What `tools` declares is `wire.anthropic_tools`
(client search, the deferred placeholder, tool change strategies) and `wire.anthropic_search`
(server-side search); where `cache_control` goes is `wire.breakpoints`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

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
from dtl_notebook.agent.sections import render_section
from dtl_notebook.agent.tools import ToolRegistry
from dtl_notebook.wire.anthropic_reply import parse
from dtl_notebook.wire.anthropic_search import CALLS as _CALLS
from dtl_notebook.wire.anthropic_search import NATIVE_SEARCH, native_tools, server_search_block
from dtl_notebook.wire.anthropic_tools import (
    PLACEHOLDER,
    PROVIDER,
    Setting,
    change_blocks,
    change_strategy,
    client_tools,
)
from dtl_notebook.wire.breakpoints import CACHE_MODES, MAX_NEW_BLOCKS, close, place
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import JSON, LoadPoint, Plan, WireRequest, render_patch
from dtl_notebook.wire.rules import split_references, tool_reference
from dtl_notebook.wire.tool_changes import notice, update_text

__all__ = [
    "CACHE_MODES",
    "MAX_NEW_BLOCKS",
    "NATIVE_SEARCH",
    "PLACEHOLDER",
    "PROVIDER",
    "build",
    "change_strategy",
    "parse",
]


@dataclass
class _Walked(Carried):
    """The message walk's state at a checkpoint: the settings it read (`key`) and what it
    carries into the next messages."""

    KEY = ("profile", "search", "references", "first", "changes")

    profile: ModelProfile
    search: str
    references: bool
    first: int
    changes: str  # how tool changes are written: "by_value", "by_reference", "soft", "rewrite"
    load_points: list[LoadPoint] = field(default_factory=list)
    server_loaded: set[str] = field(default_factory=set)
    siblings: list[JSON] = field(default_factory=list)
    pending_system: list[JSON] = field(default_factory=list)
    # the change each pending system message carries: (message index, names, kind)
    pending_changes: list[tuple[int, list[str], str] | None] = field(default_factory=list)
    block_ends: list[int] = field(default_factory=list)  # of the closed messages (breakpoints)


def _content(parts: list[TextPart | ImagePart]) -> list[JSON]:
    blocks: list[JSON] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif part.data is not None:
            source = {
                "type": "base64",
                "media_type": part.media_type or "image/png",
                "data": part.data,
            }
            blocks.append({"type": "image", "source": source})
        else:
            blocks.append({"type": "image", "source": {"type": "url", "url": part.url or ""}})
    return blocks


class _Builder(ResumableWalk[_Walked, Plan], open_last=True):
    """The messages, resumed from the last walk of the transcript (its last message stays
    open: the next turn may extend it)."""

    def __init__(self, setting: Setting, references: bool) -> None:
        plan, profile = setting.plan, setting.profile
        state = _Walked(profile, setting.search, references, plan.first, setting.changes)
        super().__init__(plan, state, setting.notes)
        self.setting, self.references = setting, references
        self.collapse = not profile.mid_conversation_system  # system updates as user text

    def step(self, index: int, message: Message) -> None:
        if not isinstance(message, ToolResultMessage):
            self.flush_siblings()
        if isinstance(message, SystemUpdate):
            self.system_update(index, message)
        elif isinstance(message, UserMessage):
            self.add("user", _content(message.content))
        elif isinstance(message, AssistantMessage):
            self.flush_system()
            self.assistant(index, message)
        elif isinstance(message, ToolResultMessage):
            self.tool_result(index, message)
            if message.non_append_change is not None:
                self.system_update(index, None)

    def settle(self) -> None:
        close(self.out, self.state.block_ends)  # counted once, kept with the state

    def finish(self) -> None:
        """Place what waits for a next message: sibling blocks and system messages."""
        self.flush_siblings()
        self.flush_system()
        if self.state.pending_system:
            self.notes.append(
                "a system prompt update follows no user turn and was left out (Anthropic takes "
                "a system message only right after a user turn)"
            )

    def add(self, role: str, blocks: list[JSON]) -> None:
        if not blocks:
            return
        if self.out and self.out[-1]["role"] == role and role != "system":
            self.out[-1]["content"].extend(blocks)
        else:
            self.out.append({"role": role, "content": blocks})

    def flush_siblings(self) -> None:
        if self.state.siblings:
            self.add("user", self.state.siblings)
            self.state.siblings = []

    def flush_system(self) -> None:
        """Place pending system messages: right after a user turn, and last or before an
        assistant turn (Anthropic's placement rule, https://docs.claude.com/en/docs/
        build-with-claude/mid-conversation-system-messages), so they wait for the next user
        text."""
        state = self.state
        if state.pending_system and self.out and self.out[-1]["role"] == "user":
            for message, change in zip(state.pending_system, state.pending_changes, strict=True):
                self.out.append(message)
                if change is not None:
                    index, names, kind = change
                    path = f"messages.{len(self.out) - 1}"
                    state.load_points.append(LoadPoint(index, names, path, kind))
            state.pending_system, state.pending_changes = [], []

    def system_update(self, index: int, message: SystemUpdate | None) -> None:
        """A system update (or a tool run's swap, `message` None) as the strategy writes it:
        a system message with the sections patch and tool_removal / tool_addition blocks, or
        the changes told in text (soft removal: the definitions stay declared)."""
        change = self.setting.tool_changes.changes.get(index)
        sections = dict(message.sections) if message is not None else {}
        collapse = self.collapse
        if change is None and (collapse or not sections):
            return  # tool changes written as the current list (rewrite), or nothing to say
        patch = render_patch(sections) if sections and not collapse else None
        blocks: list[JSON] = []
        told = self.setting.changes in ("by_value", "by_reference")
        if change is not None and told:
            blocks = change_blocks(self.setting, change)
        lines = notice(change, self.setting.changes != "by_value") if change and not told else []
        text = update_text(patch, lines) or None
        if collapse:  # no mid-conversation system messages: the notice is user text
            if text:
                self.flush_siblings()
                self.add("user", [{"type": "text", "text": text}])
                if change is not None:
                    row = len(self.out) - 1
                    path = f"messages.{row}.content.{len(self.out[row]['content']) - 1}"
                    self.state.load_points.append(LoadPoint(index, change.names, path, change.kind))
            return
        content = ([{"type": "text", "text": text}] if text else []) + blocks
        if not content:
            return
        self.state.pending_system.append({"role": "system", "content": content})
        self.state.pending_changes.append((index, change.names, change.kind) if change else None)

    def tool_result(self, index: int, message: ToolResultMessage) -> None:
        specs = self.plan.loads.get(index, []) if self.references else []
        content = _content(message.content)
        block: JSON = {"type": "tool_result", "tool_use_id": message.call_id}
        if specs:
            if message.is_error:  # an error result holds only text, so the references win
                self.notes.append(
                    f"error result {message.call_id!r} carries tool references: the references "
                    "stay in tool_result, the error text follows as a sibling block"
                )
                content = [{"type": "text", "text": f"Error: {message.text}"}]
            # the references-only rule: the ordinary result follows as sibling blocks
            held, ordinary = split_references([*(tool_reference(s.name) for s in specs), *content])
            block["content"] = held
            self.state.siblings.extend(ordinary)
        else:
            if message.is_error:
                content = [{"type": "text", "text": message.text or "Error"}]
                block["is_error"] = True
            if content:
                block["content"] = content
        self.add("user", [block])
        if specs:
            row = len(self.out) - 1
            path = f"messages.{row}.content.{len(self.out[row]['content']) - 1}.content"
            self.state.load_points.append(LoadPoint(index, [s.name for s in specs], path))

    def assistant(self, index: int, message: AssistantMessage) -> None:
        blocks: list[JSON] = []
        server_loads: list[tuple[int, JSON]] = []
        verbatim = {  # calls whose block the model produced with more than the neutral fields
            p.block.data.get("id")
            for p in message.content
            if isinstance(p, NativePart)
            and p.block.provider == PROVIDER
            and p.block.type == "tool_use"
        }
        for part in message.content:
            if isinstance(part, TextPart):
                if part.text:
                    blocks.append({"type": "text", "text": part.text})
            elif isinstance(part, ToolCallPart):
                call = part.call
                if call.id in verbatim:
                    continue
                if call.invalid_arguments is not None:
                    self.notes.append(
                        f"tool call {call.id!r} had invalid JSON arguments; sent as an empty input"
                    )
                name = call.name
                if self.setting.changes in ("by_reference", "soft"):  # a redefined tool's new name
                    name = self.setting.tool_changes.wire_name(name, index)
                blocks.append(
                    {"type": "tool_use", "id": call.id, "name": name, "input": call.arguments}
                )
            elif isinstance(part, NativePart):
                if part.block.provider == PROVIDER and (
                    self.setting.search != "client" or not server_search_block(part.block.data)
                ):
                    # server_tool_use and tool_search_tool_result go back unchanged (tool
                    # search page); breakpoints mark the copy
                    blocks.append(copy.deepcopy(part.block.data))
                    if part.block.type == "tool_search_tool_result":
                        server_loads.append((len(blocks) - 1, part.block.data))
                elif part.block.provider == PROVIDER:
                    self.notes.append(
                        f"dropped a {part.block.type!r} block from message {index}: the server "
                        "search tool is not declared with search='client' (its tools are sent "
                        "as active tools instead)"
                    )
                else:
                    self.notes.append(
                        f"dropped a {part.block.provider} {part.block.type!r} block from message "
                        f"{index}: another provider's JSON is never replayed"
                    )
        if not blocks:
            self.notes.append(f"assistant message {index} is empty and was left out")
        offset = len(self.out[-1]["content"]) if self._continues("assistant") else 0
        self.add("assistant", blocks)
        for position, data in server_loads:
            self._server_load_point(index, offset + position, data)

    def _continues(self, role: str) -> bool:
        return bool(self.out) and self.out[-1]["role"] == role

    def _server_load_point(self, index: int, position: int, data: JSON) -> None:
        """Where Anthropic's server search loaded tools: a load point like a client one."""
        refs = (data.get("content") or {}).get("tool_references") or []
        names = [str(r["tool_name"]) for r in refs if isinstance(r, dict) and "tool_name" in r]
        new = [n for n in dict.fromkeys(names) if n not in self.state.server_loaded]
        self.state.server_loaded.update(new)
        if new:
            path = f"messages.{len(self.out) - 1}.content.{position}"
            self.state.load_points.append(LoadPoint(index, new, path))


def _system(setting: Setting) -> list[JSON]:
    plan, profile = setting.plan, setting.profile
    sections = plan.system
    if plan.later_updates and not profile.mid_conversation_system:
        sections = plan.held
        setting.notes.append(
            f"{profile.model} takes no mid-conversation system messages: the system "
            "prompt is re-rendered with the current sections (system prefix changes: "
            "cache miss)"
        )
    return [{"type": "text", "text": render_section(n, t)} for n, t in sections.items() if t]


def _declare(setting: Setting) -> tuple[list[JSON], str, bool]:
    """Top-level tools, the mode, and whether load points become tool_reference blocks."""
    if setting.search == "client":
        return client_tools(setting)
    if not setting.profile.native_tool_search:
        raise ValueError(
            f"{setting.profile.model} does not support Anthropic's tool search tool; "
            "use search='client' or override native_tool_search=True"
        )
    calls = _CALLS.scan(setting.plan)  # resumed over the grown transcript
    return native_tools(setting, calls.used, calls.loaded)


def build(
    plan: Plan,
    profile: ModelProfile,
    registry: ToolRegistry,
    *,
    max_tokens: int = 4096,
    search: str = "client",
    cache: str = "automatic",
    ttl: str | None = None,
    diagnostics: bool | JSON = False,
    previous_response_id: str | None = None,
    tool_changes: str = "keep",
    **params: Any,
) -> WireRequest:
    """The Messages request body. `search`: "client" (the session's tool_search tool),
    "native-bm25" or "native-regex" (Anthropic's server-side tool search over all tools).
    `cache`: "automatic" (top-level cache_control), "explicit" (a moving breakpoint on the
    last block) or "none". `diagnostics=True` asks for Anthropic's cache diagnostics against
    `previous_response_id` (the previous response's `msg_...` id; None on the first turn).
    `tool_changes`: "keep" (removals, additions and redefinitions in system messages, by value
    where the model takes the inline beta, else by reference, else told in text with the
    definitions kept; in every search mode, native search included: wire/native_changes.py)
    or "rewrite" (the full current list: a miss, for a definition the model must no longer
    see). Other keyword arguments go into the body as they are."""
    if cache not in CACHE_MODES:
        raise ValueError(f"cache must be one of {CACHE_MODES}, got {cache!r}")
    changes = change_strategy(plan, profile, search, tool_changes)
    setting = Setting(plan, profile, search, registry, changes, list(plan.notes))
    tools, mode, references = _declare(setting)
    builder = _Builder(setting, references)
    builder.walk()
    builder.finish()
    system = _system(setting)
    automatic = place(tools, builder.out, builder.state.block_ends, cache, ttl)
    payload: JSON = {"model": profile.model, "max_tokens": max_tokens}
    if automatic:
        payload["cache_control"] = automatic
    if system:
        payload["system"] = system
    payload["messages"] = builder.out
    if tools:
        payload["tools"] = tools
    if isinstance(diagnostics, dict):  # the body field itself, passed through
        payload["diagnostics"] = diagnostics
    elif diagnostics:  # compared with the previous response (prompt caching page)
        payload["diagnostics"] = {"previous_message_id": previous_response_id}
    payload.update(params)
    request = WireRequest(
        PROVIDER, profile.model, payload, mode, builder.state.load_points, setting.notes, profile
    )
    if changes in ("by_reference", "soft"):  # calls to a versioned name map back
        request.aliases = dict(setting.tool_changes.aliases)
    return request
