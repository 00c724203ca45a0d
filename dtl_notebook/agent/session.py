"""The session: registry, active set (tool_set.py), transcript with load points, prompt, the
execution wrapper (execution.py) and tool sources such as MCP servers (tool_sources.py; the
MCP client itself is in live/)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from dtl_notebook._reuse.transcript import Transcript
from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import TranscriptError, UnknownToolError
from dtl_notebook.agent.execution import ToolExecution, ToolOutput
from dtl_notebook.agent.files import write_atomic
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ContentPart,
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
    parts,
)
from dtl_notebook.agent.prompt_state import CacheHazard, PromptState
from dtl_notebook.agent.search import LOCAL_ENGINES
from dtl_notebook.agent.sections import (
    Sections,
    check_section_name,
)
from dtl_notebook.agent.split import DeferredSplit, split_deferred_tools
from dtl_notebook.agent.storage import dump_session, load_session
from dtl_notebook.agent.tool_search import TOOL_SEARCH, SessionSearch, make_tool_search
from dtl_notebook.agent.tool_set import ToolSetChanges
from dtl_notebook.agent.tool_sources import ToolSource, ToolSources, connect
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec

_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
_NEUTRAL = (UserMessage, AssistantMessage, ToolResultMessage, SystemUpdate)


class Session(ToolSetChanges, ToolExecution, PromptState):
    """One agent's provider-neutral state: the tool registry, the active tools, the system
    prompt sections and the transcript, from which `wire` builds each provider's request."""

    def __init__(
        self,
        system: str = "",
        tools: Iterable[Tool] = (),
        active: Iterable[str] | None = None,
        search: str | None = "bm25",
        sections: Mapping[str, str] | None = None,
    ) -> None:
        checks.text(system, "system", empty=True)
        if isinstance(tools, str | bytes | Mapping | Tool) or not isinstance(tools, Iterable):
            raise checks.type_error("tools", "a list of Tool objects", tools)
        tools = list(tools)
        strays = [i for i, t in enumerate(tools) if not isinstance(t, Tool)]
        if strays:
            raise checks.type_error(f"tools[{strays[0]}]", "a Tool", tools[strays[0]])
        if search is not None:
            checks.choice(search, "search engine", LOCAL_ENGINES)  # None: no tool_search
        if sections is not None:
            checks.mapping(sections, "sections")
        if active is not None:
            active = checks.name_list(active, "active")
        self.registry = ToolRegistry(tools)
        self.search = search
        self.searcher = SessionSearch(self, search) if search is not None else None
        if search is not None and TOOL_SEARCH not in self.registry:
            self.registry.register(make_tool_search(self, search, self.searcher))
        self.prompt = Sections({"preamble": system} if system else {})
        for name, text in (sections or {}).items():
            self.prompt[name] = text
        self._messages: Transcript[Message] = Transcript()
        # the held sections at the end of the transcript seen: (transcript, rewrites, seen, held)
        self._held: tuple[Transcript[Message], int, int, dict[str, str]] | None = None
        # the calls pending at the end of the transcript seen: (transcript, rewrites, seen, calls)
        self._open: tuple[Transcript[Message], int, int, tuple[ToolCall, ...]] | None = None
        # the active set when the latest assistant message with tool calls was appended
        self._called: tuple[AssistantMessage, frozenset[str]] | None = None
        self._active: list[str] = []
        self._running = False  # inside a tool's own run (execute)
        self._queued: list[SystemUpdate] = []  # tool changes waiting for the end of a tool run
        self._withdrawn: dict[str, int | None] = {}  # withdrawn tools -> their registry stamps
        self._timeline = ToolTimeline()
        self._initial_specs: dict[str, ToolSpec] = {}
        self._declared_order: list[str] = []
        self._registered_seen = 0  # registry arrivals recorded (all before the first message)
        self._sources = ToolSources()  # e.g. MCP connections, synced between turns
        if active is None:
            active = [TOOL_SEARCH] if search is not None else self.registry.names()
        self.set_active_tools(active)

    def __repr__(self) -> str:
        return (
            f"Session(tools={len(self.active_tools)}/{len(self.registry)}, "
            f"messages={len(self.messages)}, search={self.search!r})"
        )

    @property
    def messages(self) -> Transcript[Message]:
        """The transcript: append-only by contract, every other change counted
        (`Transcript.rewrites`). Assigning a list replaces it and counts as a rewrite."""
        return self._messages

    @messages.setter
    def messages(self, messages: Iterable[Message]) -> None:
        replaced: Transcript[Message] = Transcript(messages)
        replaced.rewrites = self._messages.rewrites + 1
        self._messages = replaced

    def scratch_copy(self) -> Session:
        """A session to try a request on: the same registry, prompt and active tools (shared,
        not copied), and a transcript of its own holding the same messages, so appending to it
        leaves this session as it is."""
        scratch = copy.copy(self)
        scratch._messages = Transcript(self._messages)
        scratch._held = None
        scratch._active = list(self._active)
        scratch._queued = list(self._queued)
        scratch._withdrawn = dict(self._withdrawn)
        scratch._timeline = ToolTimeline()
        scratch._initial_specs = dict(self._initial_specs)
        scratch._declared_order = list(self._declared_order)
        scratch._sources = ToolSources()  # a rehearsal never syncs the real MCP connections
        scratch._open = scratch._called = None
        return scratch

    def as_of(self, count: int, active_tools: Iterable[str] | None = None) -> Session:
        """A scratch copy of the session as it stood after its first `count` messages (see
        `scratch_copy`): those messages, and `active_tools` as they were then; by default the
        tools the transcript shows the model could call there (an append outside a tool run
        records nothing, so a caller that kept the active tools passes them)."""
        if active_tools is None:
            visible = self.visible_tools(count)  # checks `count`
            active_tools = [n for n in self.declared_order if n in visible]
            active_tools += sorted(visible.difference(active_tools))
        else:
            self.visible_tools(count)
        registry = self.registry  # a tool unregistered since drops out, as from active_tools
        scratch = self.scratch_copy()
        scratch.messages = self._messages[:count]
        order = self.declared_order_at(count)
        scratch.restore_active_tools([n for n in active_tools if n in registry], order)
        return scratch

    def entered(self) -> dict[str, int]:
        """Tool name -> the index of the tool result after which it entered the model's view
        (its load point); tools in the prefix are not listed."""
        return dict(self.timeline().entered)

    def checkpoint(self) -> tuple[Any, ...]:
        """What `rollback` needs to put the session back as it is now (a failed turn's undo)."""
        order = list(self._declared_order)
        return list(self._messages), self.active_tools, copy.deepcopy(self.prompt), order

    def rollback(self, checkpoint: tuple[Any, ...]) -> None:
        """The session as it was at `checkpoint`: its messages, active tools and prompt."""
        messages, active, prompt, order = checkpoint
        self.messages[:] = messages
        self.restore_active_tools(active, order)
        self.prompt = prompt

    # -- the active set: ToolSetChanges (tool_set.py) -----------------------------------
    def prepare_search(self) -> None:
        """Build the local `tool_search` index now (otherwise the first search does), once per
        registry version."""
        if self.searcher is not None:
            self.searcher.refresh()

    def split(self) -> DeferredSplit:
        """split_deferred_tools over the active tools and this transcript."""
        return split_deferred_tools(self.tools(), self.messages)

    # -- tool sources ---------------------------------------------------------------------
    def between_turns(self) -> bool:
        """Neither inside a tool's run nor with a tool call waiting for its result: where a
        change of the tool set may be recorded."""
        return not self._running and not self.pending_calls()

    def connect_mcp(
        self, command_or_url: str | list[str], namespace: str | None = None, timeout: float = 30.0
    ) -> ToolSource:
        """Connect an MCP server (a stdio command, as a list or a string, or a streamable
        HTTP URL) and register its tools, deferred; see `dtl_notebook.live.mcp_client`."""
        source: ToolSource = connect("mcp", self, command_or_url, namespace, timeout)
        self._sources.add(source)
        return source

    # -- the transcript -------------------------------------------------------------------
    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant message that have no result yet.

        Folded forward from where the last look stopped while the transcript only grew, so a
        long run of messages after the last assistant message is not walked on every append.
        """
        transcript, start = self._messages, 0
        calls: tuple[ToolCall, ...] = ()
        memo = self._open
        grown = memo is not None and memo[0] is transcript and memo[2] <= len(transcript)
        if memo is not None and grown and memo[1] == transcript.rewrites:
            start, calls = memo[2], memo[3]
        for message in transcript[start:] if start else transcript:
            if isinstance(message, AssistantMessage):
                calls = tuple(message.tool_calls)
            elif isinstance(message, ToolResultMessage) and calls:
                calls = tuple(c for c in calls if c.id != message.call_id)
        self._open = (transcript, transcript.rewrites, len(transcript), calls)
        return list(calls)

    def user(self, content: str | list[ContentPart]) -> UserMessage:
        """Start a turn: record any system prompt change (one update at most), then the text."""
        if isinstance(content, str):
            checks.text(content, "content")
        elif not isinstance(content, list) or not content:
            raise checks.type_error("content", "a non-empty string or list of parts", content)
        message = UserMessage(content=parts(content))
        self._check(message)
        self._mark_start()
        self._sources.sync()
        self._anchor_queued()
        self._sync_prompt()
        self.messages.append(message)
        return message

    def assistant(
        self,
        text: str | None = None,
        tool_calls: Iterable[ToolCall] = (),
        native: Iterable[NativeBlock] = (),
    ) -> AssistantMessage:
        """Append an assistant message: text first, then native blocks, then tool calls."""
        if text is not None:
            checks.text(text, "text", empty=True)
        tool_calls = checks.model_list(tool_calls, ToolCall, "tool_calls")
        native = checks.model_list(native, NativeBlock, "native")
        content: list[TextPart | ToolCallPart | NativePart] = []
        if text:
            content.append(TextPart(text=text))
        content.extend(NativePart(block=b) for b in native)
        content.extend(ToolCallPart(call=c) for c in tool_calls)
        return self.append(AssistantMessage(content=content))  # type: ignore[return-value]

    def append(self, message: Message) -> Message:
        """Append a neutral message (a model, or its dict form) after checking it fits."""
        if isinstance(message, dict):
            try:
                message = _MESSAGE.validate_python(message)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = checks.json_path(first["loc"], message, "message")
                raise TranscriptError(f"invalid {where}: {first['msg']}") from None
        elif not isinstance(message, _NEUTRAL):
            raise checks.type_error(
                "message",
                "a UserMessage, AssistantMessage, ToolResultMessage or SystemUpdate",
                message,
            )
        self._check(message)
        self._mark_start()
        self.messages.append(message)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            self._called = (message, frozenset(self._active))
        elif isinstance(message, ToolResultMessage) and not self._running:
            self._sources.sync()  # the end of a tool run is a turn boundary
            self._anchor_queued()
        return message

    def _check(self, message: Message) -> None:
        if isinstance(message, SystemUpdate):
            for name in message.sections:
                check_section_name(name)
        elif isinstance(message, ToolResultMessage):
            if message.call_id not in {c.id for c in self.pending_calls()}:
                raise TranscriptError(
                    f"tool result for call {message.call_id!r}: no pending tool call has that id"
                )
            missing = [
                n
                for n in message.added_tool_names or []
                if n not in self.registry and message.snapshot(n) is None
            ]
            if missing:
                raise UnknownToolError(", ".join(missing), "registered (named in a marker)")
        elif isinstance(message, AssistantMessage):
            ids = [c.id for c in message.tool_calls]
            if len(ids) != len(set(ids)):
                raise TranscriptError(f"duplicate tool call ids in one message: {ids}")
        elif isinstance(message, UserMessage) and self.pending_calls():
            pending = [c.id for c in self.pending_calls()]
            raise TranscriptError(f"tool calls {pending} need results before the next user message")

    # -- persistence ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return dump_session(self)

    def save(self, path: str | Path) -> None:
        """Write the session as JSON (tool specs, active set, transcript, sections), atomically."""
        checks.file_path(path, "path")
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))

    @classmethod
    def load(
        cls,
        path: str | Path,
        functions: Mapping[str, Callable[..., Any]] | Iterable[Tool] = (),
    ) -> Session:
        """Read a saved session; implementations are re-bound by tool name from `functions`."""
        checks.file_path(path, "path")
        return load_session(cls, Path(path), functions)


__all__ = ["CacheHazard", "ImagePart", "Session", "ToolOutput", "ToolSpec"]
