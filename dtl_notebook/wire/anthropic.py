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

Anthropic adds hidden scaffolding to the rendered prompt once any tool is deferred, so the first
request carrying a `defer_loading` tool misses the whole cache (measured by Claude Code and Pi).
In client search the builder therefore declares one never-called deferred placeholder tool from
the first request (profile flag `deferred_placeholder`); it is never referenced, so it is
neither a load point nor a loaded tool.

Blocks a model produced with more than the neutral fields (a `tool_use` with `caller` from
programmatic tool calling, or `toolset_name`) are kept verbatim next to the neutral call and
replayed as they came.
"""

from __future__ import annotations

import bisect
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook._reuse.frozen import FrozenDict, freeze
from dtl_notebook._reuse.items import tool_item, tool_items
from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook._reuse.registry import Memo, active
from dtl_notebook._reuse.walks import Carried, Checkpoint, HistoryScan, Walks, copied
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
from dtl_notebook.agent.sections import render_section
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec
from dtl_notebook.wire.native_changes import growth_note, kept_declared, pinned, versioned_specs
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.reply import Reply, ResponseFormatError, as_dict, require
from dtl_notebook.wire.request import JSON, LoadPoint, Plan, WireRequest, render_patch
from dtl_notebook.wire.rules import split_references, tool_reference
from dtl_notebook.wire.tool_changes import TOOL_CHANGES, Change, ToolChanges, notice, update_text

PROVIDER = "anthropic"
# the server tool search variants:
# https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool
NATIVE_SEARCH: dict[str, JSON] = {  # by AnthropicSearch (wire/modes.py)
    "native-bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "native-regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
SEARCH_TOOL_NAMES = {tool["name"] for tool in NATIVE_SEARCH.values()}
SERVER_SEARCH_BLOCKS = {"server_tool_use", "tool_search_tool_result"}
CACHE_MODES = ("automatic", "explicit", "none")
# a cache read walks back at most 20 blocks from a breakpoint:
# https://docs.claude.com/en/docs/build-with-claude/prompt-caching
LOOKBACK_BLOCKS = 20
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
NEUTRAL_TOOL_USE = {"type", "id", "name", "input"}
MAX_NEW_BLOCKS = 18  # beyond this, add an intermediate breakpoint so the lookback still hits


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
    # the builder's block ends and how many of them are this state's (shared while appended to)
    block_ends: tuple[list[int], int] = ([], 0)


_walks: Walks[_Walked] = Walks(open_last=True)  # earlier walks, resumed as the transcript grew


def tool_json(tool: ToolSpec, deferred: bool = False) -> JSON:
    """A tool's definition item, made once per definition and shared by every body that
    declares it (frozen: copy it to change it)."""
    return tool_item(_tool_json, tool, deferred)


def tool_json_items(tools: list[ToolSpec]) -> list[JSON]:
    """`tool_json` of each tool (the same tools as last time are found at C speed)."""
    return tool_items(_tool_json, tools, False)


def _tool_json(tool: ToolSpec, deferred: bool) -> JSON:
    out: JSON = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters
    if deferred:
        out["defer_loading"] = True
    return out


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


class _Calls:
    """What the native-search tool list reads from the transcript: every called tool name,
    and the names Anthropic's server-side search referenced, in order."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.loaded: dict[str, None] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> _Calls:
        copied = _Calls()
        copied.used, copied.loaded = set(self.used), dict(self.loaded)
        return copied


def _calls_step(calls: _Calls, message: Message) -> None:
    if not isinstance(message, AssistantMessage):
        return
    calls.used.update(c.name for c in message.tool_calls)
    for block in message.native_blocks:
        if block.provider == PROVIDER and block.type == "tool_search_tool_result":
            refs = (block.data.get("content") or {}).get("tool_references") or []
            calls.loaded.update((r["tool_name"], None) for r in refs if isinstance(r, dict))


_CALLS = HistoryScan(_Calls, _calls_step)  # resumed over the grown transcript


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
    items = tool_items(_tool_json, candidates, True)
    if active() and all(type(item) is FrozenDict for item in items):  # made once, kept
        _DEFERRED_ITEMS.put_held(key, [registry, *replaced.values()], items)
    return items


def _last_immediate_step(found: list[int], index: int, tool: JSON) -> None:
    if not tool.get("defer_loading") and "type" not in tool:  # a client tool sent in full
        found[:] = [index]


# the last immediate tool of the shared part of a tools list: native search shares its catalog
_LAST_IMMEDIATE: PrefixScan[list[int]] = PrefixScan(list, _last_immediate_step, remembered=2)


class _Builder:
    def __init__(
        self,
        plan: Plan,
        profile: ModelProfile,
        search: str,
        registry: ToolRegistry,
        changes: str = "rewrite",
    ) -> None:
        self.plan = plan
        self.registry = registry
        self.profile = profile
        self.search = search
        self.changes = changes
        empty = ToolChanges()
        self.tool_changes = plan.tool_changes or empty if changes != "rewrite" else empty
        self.pending_changes: list[tuple[int, list[str], str] | None] = []
        self.notes: list[str] = list(plan.notes)
        self.messages: list[JSON] = []
        self.load_points: list[LoadPoint] = []
        self.server_loaded: set[str] = set()
        self.siblings: list[JSON] = []
        self.pending_system: list[JSON] = []
        self.block_ends: list[int] = []  # blocks in messages[: i + 1], for closed messages

    # -- tools ----------------------------------------------------------------------------
    def tools(self) -> tuple[list[JSON], str, bool]:
        """Top-level tools, the mode, and whether load points become tool_reference blocks."""
        split, profile = self.plan.split, self.profile
        immediate, deferred = list(split.immediate), dict(split.deferred)
        if self.search != "client":
            return self._native_tools(immediate, deferred)
        if self.tool_changes.changes:
            return self._declared_tools(deferred)
        full = tool_json_items(self.plan.full_list())
        if not deferred and not self.plan.retired:
            if not profile.tool_reference:
                return full, "full_list", False
            return full + self._placeholder(full), "tool_reference", False
        if not profile.tool_reference:
            self.notes.append(
                f"{profile.model} does not support defer_loading/tool_reference: sending the "
                "full active list (tool prefix changes: cache miss)"
            )
            return full, "full_list", False
        if not immediate:  # Anthropic rejects a request whose tools are all deferred
            self.notes.append(
                "every active tool is deferred and Anthropic rejects an all-deferred request: "
                "sending all tools as immediate"
            )
            return full + self._placeholder(full), "full_list", False
        # a tool deactivated after its load point keeps its definition, so history stays valid
        later = [*deferred.items(), *self.plan.retired.items()]
        snapshots = self.plan.loaded_snapshots()
        deferred_json = tool_items(_tool_json, [snapshots.get(n) or t for n, t in later], True)
        shown = tool_json_items(immediate)
        return shown + self._placeholder(shown) + deferred_json, "tool_reference", True

    def _declared_tools(self, deferred: dict[str, ToolSpec]) -> tuple[list[JSON], str, bool]:
        """The tools of a session whose tool set changed: everything ever declared stays
        declared, the initial tools first with their first definitions (a withdrawn one in its
        place), then the placeholder, the deferred tools loaded at markers, and (by reference,
        or without tool changes in system messages) the definitions the changes added, under
        versioned names where a name was redefined."""
        changes, profile = self.tool_changes, self.profile
        shown = tool_json_items([t for t in changes.initial if t.name not in deferred])
        later = [*deferred.items(), *self.plan.retired.items()]
        loaded = {n: tool_json(self.plan.loaded_snapshot(n) or t, deferred=True) for n, t in later}
        declared = {t["name"] for t in shown}
        tail: list[JSON] = []  # in the order the transcript declared them: the list only grows
        extra: list[JSON] = []
        for name, spec in changes.later:
            if name in declared:
                continue
            if name in loaded:
                tail.append(loaded[name])
            elif self.changes != "by_value":  # by value, the system message defines it
                renamed = spec if spec.name == name else spec.model_copy(update={"name": name})
                extra.append(tool_json(renamed, deferred=self.changes == "by_reference"))
                tail.append(extra[-1])
            declared.add(name)
        tail += [t for n, t in loaded.items() if n not in declared]
        if self.changes == "soft" and extra:
            self.notes.append(
                f"{profile.model} takes no tool changes in system messages: tool(s) "
                f"{[t['name'] for t in extra]} are declared after the others (tool prefix "
                "changes: cache miss)"
            )
        references = profile.tool_reference and bool(shown)
        if not references:
            if not shown and profile.tool_reference:
                self.notes.append(
                    "every declared tool is deferred and Anthropic rejects an all-deferred "
                    "request: sending all tools as immediate"
                )
            plain = [{k: v for k, v in t.items() if k != "defer_loading"} for t in tail]
            return [*shown, *plain], "full_list", False
        # without tool changes in system messages a new immediate tool still changes what the
        # model is shown, at the end of the list (the note above says so)
        return shown + self._placeholder(shown) + tail, "tool_reference", True

    def _placeholder(self, immediate: list[JSON]) -> list[JSON]:
        """The never-called deferred placeholder, after the immediate tools. None without an
        immediate tool (an all-deferred request is rejected), nor where nothing can be loaded
        later: no deferred tool and every registered tool active already (a tool run, a
        search or a tool change can load any other, so the first one keeps the cache)."""
        if not self.profile.deferred_placeholder or not immediate:
            return []
        loadable = len(self.registry) > len(self.plan.order) or TOOL_SEARCH in self.registry
        if not (self.plan.split.deferred or self.plan.retired or loadable):
            return []
        if PLACEHOLDER["name"] in self.registry:
            self.notes.append(
                f"a registered tool is named {PLACEHOLDER['name']!r}: no deferred placeholder is "
                "declared (the first deferred tool will miss the cache once)"
            )
            return []
        return [_SHARED_PLACEHOLDER if active() else copy.deepcopy(PLACEHOLDER)]

    def _native_tools(
        self, immediate: list[ToolSpec], deferred: dict[str, ToolSpec]
    ) -> tuple[list[JSON], str, bool]:
        if not self.profile.native_tool_search:
            raise ValueError(
                f"{self.profile.model} does not support Anthropic's tool search tool; "
                "use search='client' or override native_tool_search=True"
            )
        calls = _CALLS.scan(self.plan)
        used, loaded = calls.used, calls.loaded
        changes = self.tool_changes
        if changes.changes:  # what was shown stays shown, with its first definition
            immediate = [t for t in changes.initial if t.name not in deferred]
        keep = [
            t
            for t in immediate
            if t.name not in loaded and (t.name != TOOL_SEARCH or TOOL_SEARCH in used)
        ]
        left_out = {t.name for t in keep} | {TOOL_SEARCH}
        replaced = {n: t for n, t in deferred.items() if n not in left_out}
        replaced.update(
            (n, t) for n, t in self.plan.loaded_snapshots().items() if n not in left_out
        )
        tail: list[JSON] = []
        if changes.changes:
            replaced.update(pinned(changes, left_out, self.plan.loaded_snapshot))
            tail = self._native_tail(left_out)
        # the search tool and the shown ones are plain (one of them takes the cache marker):
        # the scans over tools[] resume from the first read-only item, the deferred catalog
        tools = [dict(NATIVE_SEARCH[self.search]), *(dict(t) for t in tool_json_items(keep))]
        tools += _deferred_items(self.registry, left_out, replaced)
        return [*tools, *tail], "native_search", True

    def _native_tail(self, left_out: set[str]) -> list[JSON]:
        """After the registered tools: the withdrawn ones no longer registered, then (by
        reference, or told in text) each redefinition under its versioned name, deferred where
        a tool_addition names it, shown otherwise (the note says what that costs)."""
        changes = self.tool_changes
        tail = [tool_json(t, True) for t in kept_declared(changes, self.registry, left_out)]
        note = growth_note(changes, PROVIDER)
        if note:
            self.notes.append(note)
        if self.changes == "by_value":  # the system messages define them
            return tail
        versioned = versioned_specs(changes)
        tail += [tool_json(t, deferred=self.changes == "by_reference") for t in versioned]
        if versioned and self.changes == "soft":
            self.notes.append(
                f"{self.profile.model} takes no tool changes in system messages: tool(s) "
                f"{[t.name for t in versioned]} are declared shown at the end of tools[] (a shown "
                "tool appended to tools[] edits the rendered tools: cache miss from there)"
            )
        return tail

    # -- messages -------------------------------------------------------------------------
    def add(self, role: str, blocks: list[JSON]) -> None:
        if not blocks:
            return
        if self.messages and self.messages[-1]["role"] == role and role != "system":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": role, "content": blocks})

    def flush_siblings(self) -> None:
        if self.siblings:
            self.add("user", self.siblings)
            self.siblings = []

    def flush_system(self) -> None:
        """Place pending system messages: right after a user turn, and last or before an
        assistant turn (Anthropic's placement rule, https://docs.claude.com/en/docs/
        build-with-claude/mid-conversation-system-messages), so they wait for the next user
        text."""
        if self.pending_system and self.messages and self.messages[-1]["role"] == "user":
            for message, change in zip(self.pending_system, self.pending_changes, strict=True):
                self.messages.append(message)
                if change is not None:
                    index, names, kind = change
                    path = f"messages.{len(self.messages) - 1}"
                    self.load_points.append(LoadPoint(index, names, path, kind))
            self.pending_system, self.pending_changes = [], []

    def system_update(self, index: int, message: SystemUpdate | None, collapse: bool) -> None:
        """A system update (or a tool run's swap, `message` None) as the strategy writes it:
        a system message with the sections patch and tool_removal / tool_addition blocks, or
        the changes told in text (soft removal: the definitions stay declared)."""
        change = self.tool_changes.changes.get(index)
        sections = dict(message.sections) if message is not None else {}
        if change is None and (collapse or not sections):
            return  # tool changes written as the current list (rewrite), or nothing to say
        patch = render_patch(sections) if sections and not collapse else None
        blocks: list[JSON] = []
        told = self.changes in ("by_value", "by_reference")
        if change is not None and told:
            blocks = self._change_blocks(change)
        lines = notice(change, self.changes != "by_value") if change and not told else []
        text = update_text(patch, lines) or None
        if collapse:  # no mid-conversation system messages: the notice is user text
            if text:
                self.flush_siblings()
                self.add("user", [{"type": "text", "text": text}])
                if change is not None:
                    row = len(self.messages) - 1
                    path = f"messages.{row}.content.{len(self.messages[row]['content']) - 1}"
                    self.load_points.append(LoadPoint(index, change.names, path, change.kind))
            return
        content = ([{"type": "text", "text": text}] if text else []) + blocks
        if not content:
            return
        self.pending_system.append({"role": "system", "content": content})
        self.pending_changes.append((index, change.names, change.kind) if change else None)

    def _change_blocks(self, change: Change) -> list[JSON]:
        """tool_removal blocks, then tool_addition blocks: a reference to a declared tool, or
        (by value) the definition itself, which keeps tools[] fixed and the name unchanged."""
        by_value = self.changes == "by_value"
        aliases = self.tool_changes.aliases
        blocks: list[JSON] = []
        for wire in change.withdrawn_aliased:
            name = aliases.get(wire, wire) if by_value else wire
            blocks.append({"type": "tool_removal", "tool": tool_reference_change(name)})
        native = self.search != "client"  # there every first definition is in tools[]
        for added in change.added:
            in_tools = native and added.new and added.version == 1
            if by_value and not in_tools and (added.new or not added.latest):
                definition = {"type": "tool_definition", "definition": tool_json(added.spec)}
                blocks.append({"type": "tool_addition", "tool": definition})
            else:
                name = added.name if by_value else added.alias
                blocks.append({"type": "tool_addition", "tool": tool_reference_change(name)})
        return blocks

    def tool_result(self, index: int, message: ToolResultMessage, references: bool) -> None:
        specs = self.plan.loads.get(index, []) if references else []
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
            self.siblings.extend(ordinary)
        else:
            if message.is_error:
                content = [{"type": "text", "text": message.text or "Error"}]
                block["is_error"] = True
            if content:
                block["content"] = content
        self.add("user", [block])
        if specs:
            row = len(self.messages) - 1
            path = f"messages.{row}.content.{len(self.messages[row]['content']) - 1}.content"
            self.load_points.append(LoadPoint(index, [s.name for s in specs], path))

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
                if self.changes in ("by_reference", "soft"):  # a redefined tool's new name
                    name = self.tool_changes.wire_name(name, index)
                blocks.append(
                    {"type": "tool_use", "id": call.id, "name": name, "input": call.arguments}
                )
            elif isinstance(part, NativePart):
                if part.block.provider == PROVIDER and (
                    self.search != "client" or not _server_search_block(part.block.data)
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
        offset = len(self.messages[-1]["content"]) if self._continues("assistant") else 0
        self.add("assistant", blocks)
        for position, data in server_loads:
            self._server_load_point(index, offset + position, data)

    def _continues(self, role: str) -> bool:
        return bool(self.messages) and self.messages[-1]["role"] == role

    def _server_load_point(self, index: int, position: int, data: JSON) -> None:
        """Where Anthropic's server search loaded tools: a load point like a client one."""
        refs = (data.get("content") or {}).get("tool_references") or []
        names = [str(r["tool_name"]) for r in refs if isinstance(r, dict) and "tool_name" in r]
        new = [n for n in dict.fromkeys(names) if n not in self.server_loaded]
        self.server_loaded.update(new)
        if new:
            path = f"messages.{len(self.messages) - 1}.content.{position}"
            self.load_points.append(LoadPoint(index, new, path))

    def build_messages(self, references: bool) -> None:
        plan = self.plan
        collapse = not self.profile.mid_conversation_system
        settings = _Walked(self.profile, self.search, references, plan.first, self.changes)
        start = plan.first
        resumed = _walks.find(plan, settings.key())
        if resumed is not None:
            start = resumed.seen
            self.messages = resumed.messages
            self.notes.extend(resumed.notes)
            walked = resumed.state
            self.load_points, self.server_loaded = walked.load_points, walked.server_loaded
            self.siblings, self.pending_system = walked.siblings, walked.pending_system
            self.pending_changes = walked.pending_changes
            ends, counted = walked.block_ends  # shared while only appended to
            self.block_ends = ends if len(ends) == counted else ends[:counted]
        notes_before = len(self.notes) - (len(resumed.notes) if resumed is not None else 0)
        for index in range(start, len(plan.messages)):
            message = plan.messages[index]
            if not isinstance(message, ToolResultMessage):
                self.flush_siblings()
            if isinstance(message, SystemUpdate):
                self.system_update(index, message, collapse)
            elif isinstance(message, UserMessage):
                self.add("user", _content(message.content))
            elif isinstance(message, AssistantMessage):
                self.flush_system()
                self.assistant(index, message)
            elif isinstance(message, ToolResultMessage):
                self.tool_result(index, message, references)
                if message.non_append_change is not None:
                    self.system_update(index, None, collapse)
        self._close_blocks()
        state = copied(
            settings,
            load_points=self.load_points,
            server_loaded=self.server_loaded,
            siblings=self.siblings,
            pending_system=self.pending_system,
            pending_changes=self.pending_changes,
            block_ends=(self.block_ends, len(self.block_ends)),
        )
        frozen = resumed.frozen if resumed is not None else 0
        checkpoint = Checkpoint(
            len(plan.messages), self.messages, state, self.notes[notes_before:], frozen
        )
        _walks.keep(plan, checkpoint)  # keeps a copy of the state
        self.flush_siblings()
        self.flush_system()
        if self.pending_system:
            self.notes.append(
                "a system prompt update follows no user turn and was left out (Anthropic takes "
                "a system message only right after a user turn)"
            )

    def system(self) -> list[JSON]:
        sections = self.plan.system
        if self.plan.later_updates and not self.profile.mid_conversation_system:
            sections = self.plan.held
            self.notes.append(
                f"{self.profile.model} takes no mid-conversation system messages: the system "
                "prompt is re-rendered with the current sections (system prefix changes: "
                "cache miss)"
            )
        return [{"type": "text", "text": render_section(n, t)} for n, t in sections.items() if t]

    # -- caching --------------------------------------------------------------------------
    def breakpoints(self, tools: list[JSON], cache: str, ttl: str | None) -> JSON | None:
        """Place cache breakpoints; returns the top-level automatic cache_control, if any."""
        if cache == "none":
            return None
        marker: JSON = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
        # a deferred tool cannot carry cache_control: the tools' breakpoint is on the last
        # immediate one (deferred tools are outside the cached prefix, tool search page)
        at, own, shared = _LAST_IMMEDIATE.scan_split(tools)  # the deferred catalog is shared
        last = at + shared[0] if shared else own[0] if own else None
        if last is not None:  # a copy: the item itself is shared with every body declaring it
            tools[last] = {**tools[last], "cache_control": dict(marker)}
        total = self._close_blocks() + (len(self.messages[-1]["content"]) if self.messages else 0)
        previous_end = self._previous_request_blocks()
        if previous_end and total - previous_end > MAX_NEW_BLOCKS:
            self._mark(previous_end - 1, marker)
        # an entry written on a trailing system message is never read again (the next request
        # holds it before an assistant turn): the last breakpoint goes on the block before it
        trailing = 0
        for message in reversed(self.messages):
            if message["role"] != "system":
                break
            trailing += len(message["content"])
        if trailing and total > trailing:
            self._mark(total - trailing - 1, marker)
            return None
        if cache == "explicit" and total:
            self._mark(total - 1, marker)
            return None
        return dict(marker)

    def _close_blocks(self) -> int:
        """Count the blocks of every message but the last (which may still grow); returns the
        total. Counted once: a closed message keeps its blocks (a breakpoint marks a copy)."""
        ends = self.block_ends
        for message in self.messages[len(ends) : len(self.messages) - 1]:
            ends.append((ends[-1] if ends else 0) + len(message["content"]))
        return ends[-1] if ends else 0

    def _mark(self, position: int, marker: JSON) -> None:
        """Mark the block at `position` (counted over all messages) on a copy of it and of its
        message: payload messages are shared with later requests (`_reuse.walks`)."""
        row = bisect.bisect_right(self.block_ends, position)  # ends of the closed messages
        offset = position - (self.block_ends[row - 1] if row else 0)
        message = self.messages[row]
        block = message["content"][offset]
        if block.get("type") in {"thinking", "redacted_thinking"}:
            return  # thinking blocks cannot be marked with cache_control (prompt caching page)
        content = list(message["content"])
        content[offset] = {**block, "cache_control": dict(marker)}
        self.messages[row] = {**message, "content": content}

    def _previous_request_blocks(self) -> int:
        """Blocks in the messages the previous request ended with (before the last reply)."""
        last = next(
            (
                i
                for i in range(len(self.messages) - 1, -1, -1)
                if self.messages[i]["role"] == "assistant"
            ),
            -1,
        )
        return self.block_ends[last - 1] if last > 0 else 0


def tool_reference_change(name: str) -> JSON:
    """The tool a tool_addition / tool_removal names (`name`, where a tool_result's
    reference says `tool_name`)."""
    return {"type": "tool_reference", "name": name}


def _server_search_block(data: JSON) -> bool:
    """A block of Anthropic's server-side tool search (other server tools, such as code
    execution or web search, are replayed in every search mode)."""
    if data.get("type") == "server_tool_use":
        return data.get("name") in SEARCH_TOOL_NAMES
    return data.get("type") in SERVER_SEARCH_BLOCKS


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
    builder = _Builder(plan, profile, search, registry, changes)
    tools, mode, references = builder.tools()
    builder.build_messages(references)
    system = builder.system()
    automatic = builder.breakpoints(tools, cache, ttl)
    payload: JSON = {"model": profile.model, "max_tokens": max_tokens}
    if automatic:
        payload["cache_control"] = automatic
    if system:
        payload["system"] = system
    payload["messages"] = builder.messages
    if tools:
        payload["tools"] = tools
    if isinstance(diagnostics, dict):  # the body field itself, passed through
        payload["diagnostics"] = diagnostics
    elif diagnostics:  # compared with the previous response (prompt caching page)
        payload["diagnostics"] = {"previous_message_id": previous_response_id}
    payload.update(params)
    request = WireRequest(
        PROVIDER, profile.model, payload, mode, builder.load_points, builder.notes, profile
    )
    if changes in ("by_reference", "soft"):  # calls to a versioned name map back
        request.aliases = dict(builder.tool_changes.aliases)
    return request


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


def parse(response: Any, model: str | None = None) -> Reply:
    """A Messages response (SDK `Message` or dict) as a neutral assistant message."""
    data = as_dict(response, PROVIDER)
    blocks = require(data, "content", list, PROVIDER, "")
    content: list[TextPart | ToolCallPart | NativePart] = []
    loaded: list[str] = []
    for i, block in enumerate(blocks):
        where = f"content.{i}"
        kind = require(block, "type", str, PROVIDER, where)
        if kind == "text":
            content.append(TextPart(text=require(block, "text", str, PROVIDER, where)))
        elif kind == "tool_use":
            call_id = require(block, "id", str, PROVIDER, where)
            name = require(block, "name", str, PROVIDER, where)
            arguments = block.get("input")
            if isinstance(arguments, dict):
                call = ToolCall(id=call_id, name=name, arguments=arguments)
            else:
                call = ToolCall(id=call_id, name=name, invalid_arguments=json.dumps(arguments))
            if set(block) - NEUTRAL_TOOL_USE:  # e.g. `caller`: replayed exactly as produced
                content.append(NativePart(block=NativeBlock(provider=PROVIDER, data=block)))
            content.append(ToolCallPart(call=call))
        else:
            if kind == "tool_search_tool_result":
                loaded.extend(_referenced_names(block, where))
            content.append(NativePart(block=NativeBlock(provider=PROVIDER, data=block)))
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ResponseFormatError(PROVIDER, "usage", "expected an object")
    message = AssistantMessage(content=content, provider=PROVIDER, model=data.get("model", model))
    return Reply(message, usage, data.get("stop_reason"), loaded, data)


def _referenced_names(block: JSON, where: str) -> list[str]:
    """The tools a `tool_search_tool_result` loads: its content is a search result with
    `tool_references`, or an error (`tool_search_tool_result_error`, which loads none)."""
    result = require(block, "content", dict, PROVIDER, where)
    refs = result.get("tool_references", [])
    if not isinstance(refs, list):
        raise ResponseFormatError(
            PROVIDER,
            f"{where}.content.tool_references",
            f"expected list, got {type(refs).__name__}",
        )
    at = f"{where}.content.tool_references"
    return [require(ref, "tool_name", str, PROVIDER, f"{at}.{r}") for r, ref in enumerate(refs)]
