"""The session: one agent's neutral state, built of owned parts it delegates to (the class
docstring names them); the MCP client it connects lives in live/."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from dtl_notebook._reuse.transcript import Transcript
from dtl_notebook.agent import checks, session_copies, transcript_state
from dtl_notebook.agent.execution import ToolExecution, ToolOutput
from dtl_notebook.agent.files import write_atomic
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    NativeBlock,
    SystemUpdate,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.agent.prompt_state import CacheHazard, PromptState, cache_hazards
from dtl_notebook.agent.search import LOCAL_ENGINES
from dtl_notebook.agent.sections import Patch, Sections
from dtl_notebook.agent.session_copies import Checkpoint
from dtl_notebook.agent.split import DeferredSplit, split_deferred_tools
from dtl_notebook.agent.storage import dump_session, load_session
from dtl_notebook.agent.tool_search import TOOL_SEARCH, SessionSearch, make_tool_search
from dtl_notebook.agent.tool_set import ToolSet
from dtl_notebook.agent.tool_sources import ToolSource, ToolSources, connect
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec
from dtl_notebook.agent.transcript_state import TranscriptState


class Session:
    """One agent's provider-neutral state, from which `wire` builds each provider's request: the
    registry, and the parts it owns and delegates to: `transcript` (transcript_state.py),
    `tool_set` with its `records` (tool_set.py, tool_records.py), `execution` (execution.py),
    `prompt_state` (prompt_state.py) and `sources` (tool_sources.py)."""

    def __init__(
        self,
        system: str = "",
        tools: Iterable[Tool] = (),
        active: Iterable[str] | None = None,
        search: str | None = "bm25",
        sections: Mapping[str, str] | None = None,
    ) -> None:
        checks.text(system, "system", empty=True)
        tools = checks.model_list(tools, Tool, "tools")
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
        self.prompt_state = PromptState(Sections({"preamble": system} if system else {}))
        for name, text in (sections or {}).items():
            self.prompt[name] = text
        self.transcript = TranscriptState()
        self.tool_set = ToolSet(self.registry, self)
        self.execution = ToolExecution(self.tool_set, self)
        self.sources = ToolSources()  # e.g. MCP connections, synced at turn boundaries
        if active is None:
            active = [TOOL_SEARCH] if search is not None else self.registry.names()
        self.set_active_tools(active)

    def __repr__(self) -> str:
        tools, messages = f"{len(self.active_tools)}/{len(self.registry)}", len(self.messages)
        return f"Session(tools={tools}, messages={messages}, search={self.search!r})"

    @property
    def messages(self) -> Transcript[Message]:
        """The transcript (append-only; assigning a list replaces it, counted as a rewrite)."""
        return self.transcript.messages

    @messages.setter
    def messages(self, messages: Iterable[Message]) -> None:
        self.transcript.replace(messages)

    @property
    def prompt(self) -> Sections:
        """The ordered, named system prompt sections."""
        return self.prompt_state.sections

    @prompt.setter
    def prompt(self, sections: Sections) -> None:
        self.prompt_state.sections = sections

    def scratch_copy(self) -> Session:
        """A session to try a request on (see `session_copies.scratch_copy`)."""
        return session_copies.scratch_copy(self)

    def as_of(self, count: int, active_tools: Iterable[str] | None = None) -> Session:
        """A scratch copy as the session stood after `count` messages (session_copies.py)."""
        return session_copies.as_of(self, count, active_tools)

    def entered(self) -> dict[str, int]:
        """Tool name -> the index of the tool result after which it entered (its load point)."""
        return dict(self.timeline().entered)

    def checkpoint(self) -> Checkpoint:
        """What `rollback` needs to put the session back as it is now (a failed turn's undo)."""
        return session_copies.checkpoint(self)

    def rollback(self, checkpoint: Checkpoint) -> None:
        """The session as it was at `checkpoint`: its messages, active tools and prompt."""
        session_copies.rollback(self, checkpoint)

    @property
    def active_tools(self) -> list[str]:
        """Active tool names in activation order (unregistered ones drop out)."""
        return self.tool_set.active_tools

    @property
    def declared_order(self) -> list[str]:
        """Every tool name in the order a request declares it (a withdrawn one keeps its place)."""
        return self.tool_set.declared_order

    def tools(self) -> list[Tool]:
        """The active tools' current definitions, in activation order."""
        return self.tool_set.tools()

    def set_active_tools(self, names: Iterable[str]) -> None:
        """Replace the active set; see `ToolSet.set_active_tools`."""
        self.tool_set.set_active_tools(names)

    def activate(self, names: Iterable[str]) -> list[str]:
        """Append tools to the active set (a withdrawn one is refused); returns the new ones."""
        return self.tool_set.activate(names)

    def activate_found(self, names: Iterable[str]) -> list[str]:
        """Activate what a search found, withdrawn tools left out; returns the new ones."""
        return self.tool_set.activate_found(names)

    def withdrawn(self) -> frozenset[str]:
        """The tools withdrawn and not re-added: out of every search and load."""
        return self.tool_set.withdrawn()

    def restore_active_tools(
        self, names: Iterable[str], declared_order: Iterable[str] = ()
    ) -> None:
        """Set the active set as a saved (or rolled back) session had it, recording nothing."""
        self.tool_set.restore_active_tools(names, declared_order)

    def remove_tools(self, names: Iterable[str]) -> list[str]:
        """Withdraw active tools from the model; see `ToolSet.remove_tools`."""
        return self.tool_set.remove_tools(names)

    def redefine_tool(self, tool: Tool) -> Tool:
        """Replace a registered tool's definition; see `ToolSet.redefine_tool`."""
        return self.tool_set.redefine_tool(tool)

    def timeline(self) -> ToolTimeline:
        """The transcript's tool changes, folded up to its last message."""
        return self.tool_set.timeline()

    def visible_tools(self, position: int | None = None) -> frozenset[str]:
        """The tools the model may call in message `position` (default: the next message)."""
        return self.tool_set.visible_tools(position)

    def declared_tools(self) -> dict[str, list[tuple[int, ToolSpec]]]:
        """Every definition ever declared: name -> [(message index, definition)]."""
        return self.tool_set.declared_tools()

    def prompt_tools(self) -> dict[str, ToolSpec]:
        """What the prompt holds now: the visible tools with their current definitions."""
        return self.tool_set.prompt_tools()

    def record_registrations(self) -> None:
        """Record the tools registered since the last turn boundary, where one may go now."""
        self.tool_set.records.anchor_queued()

    def prepare_search(self) -> None:
        """Build the local `tool_search` index now (otherwise the first search does)."""
        if self.searcher is not None:
            self.searcher.refresh()

    def split(self) -> DeferredSplit:
        """split_deferred_tools over the active tools and this transcript."""
        return split_deferred_tools(self.tools(), self.messages)

    def desired_sections(self) -> dict[str, str]:
        """The sections the next turn should hold: the prompt plus the derived `tools` section."""
        return self.prompt_state.desired(self.tools())

    def held_sections(self) -> dict[str, str]:
        """The sections the model holds now, replayed from the transcript."""
        return self.prompt_state.held(self.messages)

    def section_patch(self) -> Patch | None:
        """The sections a `SystemUpdate` must change for the model to hold the desired ones."""
        return self.prompt_state.patch(self.messages, self.tools())

    def cache_hazards(self) -> list[CacheHazard]:
        """Deferred tools carrying a prompt snippet or guidelines."""
        return cache_hazards(self.split().deferred.values())

    @property
    def running(self) -> bool:
        """Inside a tool's own run (`execute`)."""
        return self.execution.running

    def tool_result(
        self,
        call_id: str,
        content: Any,
        added_tool_names: Iterable[str] | None = None,
        is_error: bool = False,
    ) -> ToolResultMessage:
        """Append a result; `added_tool_names` marks it as their load point (see execution.py)."""
        return self.execution.tool_result(call_id, content, added_tool_names, is_error)

    def execute(self, tool_call: ToolCall) -> ToolResultMessage:
        """Run a pending tool call inside the wrapper and append its result."""
        return self.execution.execute(tool_call)

    def run_dispatched(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run `name(**arguments)` for the call `execute` is running (a dispatcher tool)."""
        return self.execution.run_dispatched(name, arguments)

    def between_turns(self) -> bool:
        """Neither in a tool's run nor with a call waiting for its result (tool changes go here)."""
        return not self.execution.running and not self.pending_calls()

    def connect_mcp(
        self, command_or_url: str | list[str], namespace: str | None = None, timeout: float = 30.0
    ) -> ToolSource:
        """Connect an MCP server (stdio command or HTTP URL); its tools enter deferred (live/)."""
        source: ToolSource = connect("mcp", self, command_or_url, namespace, timeout)
        self.sources.add(source)
        return source

    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant message that have no result yet."""
        return self.transcript.pending_calls()

    def user(self, content: str | list[ContentPart]) -> UserMessage:
        """Start a turn: record any system prompt change (one update at most), then the text."""
        message = transcript_state.user_message(content)
        self.transcript.check(message, self.registry)
        records = self.tool_set.records
        records.mark_start()
        self.sources.sync()
        records.anchor_queued()
        patch = self.section_patch()
        if patch:
            self.messages.append(SystemUpdate(sections=patch))
        self.messages.append(message)
        return message

    def assistant(
        self,
        text: str | None = None,
        tool_calls: Iterable[ToolCall] = (),
        native: Iterable[NativeBlock] = (),
    ) -> AssistantMessage:
        """Append an assistant message: text first, then native blocks, then tool calls."""
        return self.append(transcript_state.assistant_message(text, tool_calls, native))  # type: ignore[return-value]

    def append(self, message: Message) -> Message:
        """Append a neutral message (a model, or its dict form) after checking it fits."""
        message = transcript_state.neutral_message(message)
        self.transcript.check(message, self.registry)
        self.tool_set.records.mark_start()
        self.messages.append(message)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            self.execution.note_calls(message)
        elif isinstance(message, ToolResultMessage) and not self.execution.running:
            self.sources.sync()  # the end of a tool run is a turn boundary
            self.tool_set.records.anchor_queued()
        return message

    def to_dict(self) -> dict[str, Any]:
        return dump_session(self)

    def save(self, path: str | Path) -> None:
        """Write the session as JSON (tool specs, active set, transcript, sections), atomically."""
        checks.file_path(path, "path")
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))

    @classmethod
    def load(
        cls, path: str | Path, functions: Mapping[str, Callable[..., Any]] | Iterable[Tool] = ()
    ) -> Session:
        """Read a saved session; implementations are re-bound by tool name from `functions`."""
        checks.file_path(path, "path")
        return load_session(cls, Path(path), functions)


__all__ = ["CacheHazard", "ImagePart", "Session", "ToolOutput", "ToolSpec"]
