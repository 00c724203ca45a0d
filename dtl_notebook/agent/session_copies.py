"""Copies of a session: a scratch copy to try a request on, the session as it stood after n
messages, and the checkpoint a failed turn rolls back to."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

from dtl_notebook._reuse.transcript import Transcript
from dtl_notebook.agent.execution import ExecutionHost, ToolExecution
from dtl_notebook.agent.messages import Message
from dtl_notebook.agent.prompt_state import PromptState
from dtl_notebook.agent.sections import Sections
from dtl_notebook.agent.tool_records import RecordsHost
from dtl_notebook.agent.tool_set import ToolSet
from dtl_notebook.agent.tool_sources import ToolSources
from dtl_notebook.agent.transcript_state import TranscriptState


class Copied(RecordsHost, ExecutionHost, Protocol):
    """The parts of a session that a copy makes its own (a `Session`)."""

    transcript: TranscriptState
    prompt_state: PromptState
    tool_set: ToolSet
    execution: ToolExecution
    sources: ToolSources
    prompt: Sections

    @property
    def messages(self) -> Transcript[Message]: ...
    @messages.setter
    def messages(self, messages: Iterable[Message]) -> None: ...


S = TypeVar("S", bound=Copied)
Checkpoint = tuple[Any, ...]


def scratch_copy(session: S) -> S:
    """A session to try a request on: the same registry, prompt and active tools (shared, not
    copied), and a transcript of its own holding the same messages, so appending to it leaves
    `session` as it is."""
    scratch = copy.copy(session)
    scratch.transcript = session.transcript.copy()
    scratch.prompt_state = session.prompt_state.copy()
    scratch.tool_set = session.tool_set.copy_for(scratch)
    scratch.execution = session.execution.copy_for(scratch.tool_set, scratch)
    scratch.sources = ToolSources()  # a rehearsal never syncs the real MCP connections
    return scratch


def as_of(session: S, count: int, active_tools: Iterable[str] | None = None) -> S:
    """A scratch copy of `session` as it stood after its first `count` messages: those
    messages, and `active_tools` as they were then; by default the tools the transcript shows
    the model could call there (an append outside a tool run records nothing, so a caller that
    kept the active tools passes them). A tool unregistered since drops out."""
    tool_set = session.tool_set
    visible = tool_set.visible_tools(count)  # checks `count`
    if active_tools is None:
        active_tools = [n for n in tool_set.declared_order if n in visible]
        active_tools += sorted(visible.difference(active_tools))
    registry = tool_set.registry
    scratch = scratch_copy(session)
    scratch.messages = session.messages[:count]
    order = tool_set.declared_order_at(count)
    scratch.tool_set.restore_active_tools([n for n in active_tools if n in registry], order)
    return scratch


def checkpoint(session: Copied) -> Checkpoint:
    """What `rollback` needs to put `session` back as it is now (a failed turn's undo)."""
    tool_set = session.tool_set
    prompt = copy.deepcopy(session.prompt)
    return list(session.messages), tool_set.active_tools, prompt, tool_set.frozen_order


def rollback(session: Copied, saved: Checkpoint) -> None:
    """`session` as it was at the checkpoint: its messages, active tools and prompt."""
    messages, active, prompt, order = saved
    session.messages[:] = messages
    session.tool_set.restore_active_tools(active, order)
    session.prompt = prompt
