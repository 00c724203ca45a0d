"""The session: registry, active set (tool_set.py), transcript with load points, prompt, the
execution wrapper (execution.py) and tool sources such as MCP servers (tool_sources.py; the
MCP client itself is in live/)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from dtl_notebook._reuse.transcript import Transcript
from dtl_notebook.agent import checks
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
    parts,
)
from dtl_notebook.agent.prompt_state import CacheHazard, PromptState, cache_hazards
from dtl_notebook.agent.search import LOCAL_ENGINES
from dtl_notebook.agent.sections import Patch, Sections
from dtl_notebook.agent.split import DeferredSplit, split_deferred_tools
from dtl_notebook.agent.storage import dump_session, load_session
from dtl_notebook.agent.tool_search import TOOL_SEARCH, SessionSearch, make_tool_search
from dtl_notebook.agent.tool_set import ToolSet
from dtl_notebook.agent.tool_sources import ToolSource, ToolSources, connect
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec
from dtl_notebook.agent.transcript_state import (
    TranscriptState,
    assistant_message,
    neutral_message,
)


class Session:
    """One agent's provider-neutral state: the tool registry, the active tools, the system
    prompt sections and the transcript, from which `wire` builds each provider's request.

    It owns its collaborators and delegates to them: the transcript (transcript_state.py), the
    tool set and the records of its changes (tool_set.py, tool_records.py), the execution
    wrapper (execution.py), the prompt (prompt_state.py) and its tool sources."""

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
        self.prompt_state = PromptState(Sections({"preamble": system} if system else {}))
        for name, text in (sections or {}).items():
            self.prompt[name] = text
        self.transcript = TranscriptState()
        self.tool_set = ToolSet(self.registry, self)
        self.execution = ToolExecution(self.tool_set, self)
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
        """A session to try a request on: the same registry, prompt and active tools (shared,
        not copied), and a transcript of its own holding the same messages, so appending to it
        leaves this session as it is."""
        scratch = copy.copy(self)
        scratch.transcript = self.transcript.copy()
        scratch.prompt_state = self.prompt_state.copy()
        scratch.tool_set = self.tool_set.copy_for(scratch)
        scratch.execution = self.execution.copy_for(scratch.tool_set, scratch)
        scratch._sources = ToolSources()  # a rehearsal never syncs the real MCP connections
        return scratch

    def as_of(self, count: int, active_tools: Iterable[str] | None = None) -> Session:
        """A scratch copy of the session as it stood after its first `count` messages (see
        `scratch_copy`): those messages, and `active_tools` as they were then; by default the
        tools the transcript shows the model could call there (an append outside a tool run
        records nothing, so a caller that kept the active tools passes them)."""
        visible = self.visible_tools(count)  # checks `count`
        if active_tools is None:
            active_tools = [n for n in self.declared_order if n in visible]
            active_tools += sorted(visible.difference(active_tools))
        registry = self.registry  # a tool unregistered since drops out, as from active_tools
        scratch = self.scratch_copy()
        scratch.messages = self.messages[:count]
        order = self.tool_set.declared_order_at(count)
        scratch.restore_active_tools([n for n in active_tools if n in registry], order)
        return scratch

    def entered(self) -> dict[str, int]:
        """Tool name -> the index of the tool result after which it entered the model's view
        (its load point); tools in the prefix are not listed."""
        return dict(self.timeline().entered)

    def checkpoint(self) -> tuple[Any, ...]:
        """What `rollback` needs to put the session back as it is now (a failed turn's undo)."""
        order = self.tool_set.frozen_order
        return list(self.messages), self.active_tools, copy.deepcopy(self.prompt), order

    def rollback(self, checkpoint: tuple[Any, ...]) -> None:
        """The session as it was at `checkpoint`: its messages, active tools and prompt."""
        messages, active, prompt, order = checkpoint
        self.messages[:] = messages
        self.restore_active_tools(active, order)
        self.prompt = prompt

    # -- the tool set (tool_set.py, tool_records.py) ---------------------------------------
    @property
    def active_tools(self) -> list[str]:
        """Active tool names in activation order (unregistered ones drop out)."""
        return self.tool_set.active_tools

    @property
    def declared_order(self) -> list[str]:
        """Every tool name in the order a request declares it (a withdrawn one keeps its place)."""
        return self.tool_set.declared_order

    @property
    def initial_specs(self) -> Mapping[str, ToolSpec]:
        """Initial definitions replaced since (no message records them)."""
        return self.tool_set.records.initial_specs

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
        """Build the local `tool_search` index now (otherwise the first search does), once per
        registry version."""
        if self.searcher is not None:
            self.searcher.refresh()

    def split(self) -> DeferredSplit:
        """split_deferred_tools over the active tools and this transcript."""
        return split_deferred_tools(self.tools(), self.messages)

    # -- the prompt (prompt_state.py) ------------------------------------------------------
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

    # -- execution (execution.py) ----------------------------------------------------------
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

    # -- tool sources ----------------------------------------------------------------------
    def between_turns(self) -> bool:
        """Neither inside a tool's run nor with a tool call waiting for its result: where a
        change of the tool set may be recorded."""
        return not self.execution.running and not self.pending_calls()

    def connect_mcp(
        self, command_or_url: str | list[str], namespace: str | None = None, timeout: float = 30.0
    ) -> ToolSource:
        """Connect an MCP server (a stdio command, as a list or a string, or a streamable
        HTTP URL) and register its tools, deferred; see `dtl_notebook.live.mcp_client`."""
        source: ToolSource = connect("mcp", self, command_or_url, namespace, timeout)
        self._sources.add(source)
        return source

    # -- the transcript (transcript_state.py) ----------------------------------------------
    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant message that have no result yet."""
        return self.transcript.pending_calls()

    def user(self, content: str | list[ContentPart]) -> UserMessage:
        """Start a turn: record any system prompt change (one update at most), then the text."""
        if isinstance(content, str):
            checks.text(content, "content")
        elif not isinstance(content, list) or not content:
            raise checks.type_error("content", "a non-empty string or list of parts", content)
        message = UserMessage(content=parts(content))
        self.transcript.check(message, self.registry)
        records = self.tool_set.records
        records.mark_start()
        self._sources.sync()
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
        return self.append(assistant_message(text, tool_calls, native))  # type: ignore[return-value]

    def append(self, message: Message) -> Message:
        """Append a neutral message (a model, or its dict form) after checking it fits."""
        message = neutral_message(message)
        self.transcript.check(message, self.registry)
        self.tool_set.records.mark_start()
        self.messages.append(message)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            self.execution.note_calls(message)
        elif isinstance(message, ToolResultMessage) and not self.execution.running:
            self._sources.sync()  # the end of a tool run is a turn boundary
            self.tool_set.records.anchor_queued()
        return message

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
