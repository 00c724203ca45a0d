"""The execution wrapper: a tool call runs inside the session and its result is recorded.

Only a pure append to the active set is a load point (a marker on the result); a removal or a
swap inside a tool's run is recorded as `non_append_change`. Every failure (unknown, withdrawn
or inactive tool, bad arguments, an exception in the tool) becomes an `is_error` result the
model can read, and the active set is restored when the tool failed. A call to a tool that was
not visible where the model made it is refused locally, whatever the provider did.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import DispatchError, TranscriptError, UnknownToolError
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    ToolCall,
    ToolChange,
    ToolResultMessage,
    parts,
)
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tool_set import ToolSet

if TYPE_CHECKING:
    from dtl_notebook._reuse.transcript import Transcript


@dataclass
class ToolOutput:
    """What a tool may return to report, besides its content, the tools it activated."""

    content: Any
    added_tool_names: list[str] | None = None


class ExecutionHost(Protocol):
    """What the execution reads of the session that owns it."""

    @property
    def messages(self) -> Transcript[Message]: ...

    def pending_calls(self) -> list[ToolCall]: ...

    def append(self, message: Message) -> Message: ...


class ToolExecution:
    """A session's execution wrapper: tool runs, and their results with markers."""

    def __init__(self, tool_set: ToolSet, host: ExecutionHost) -> None:
        self.tool_set, self.registry, self._host = tool_set, tool_set.registry, host
        self.running = False  # inside a tool's own run
        self._executing: ToolCall | None = None  # the call `execute` is running
        # the active set when the latest assistant message with tool calls was appended
        self._called: tuple[AssistantMessage, frozenset[str]] | None = None

    def copy_for(self, tool_set: ToolSet, host: ExecutionHost) -> ToolExecution:
        """This wrapper for a scratch copy of its session: not running, no call seen."""
        return ToolExecution(tool_set, host)

    def note_calls(self, message: AssistantMessage) -> None:
        """An assistant message with tool calls was appended: the active set it was made with."""
        self._called = (message, frozenset(self.tool_set.activated))

    def tool_result(
        self,
        call_id: str,
        content: Any,
        added_tool_names: Iterable[str] | None = None,
        is_error: bool = False,
    ) -> ToolResultMessage:
        """Append a result; `added_tool_names` activates those tools and marks the result as
        their load point.

        Only a pure append to the active set is a load point: a name that was active already
        when the call was made stays where it is (in the prefix, or at its own earlier marker)
        and is left out of the marker, as in `execute`; one activated since (for instance by
        `set_active_tools`) is marked. The returned `added_tool_names` shows what was marked.
        """
        checks.text(call_id, "call_id")
        checks.boolean(is_error, "is_error")
        names = list(dict.fromkeys(checks.name_list(added_tool_names or [], "added_tool_names")))
        unknown = [n for n in names if n not in self.registry]
        if unknown:
            raise UnknownToolError(", ".join(unknown), "registered (named in a marker)")
        self.tool_set.check_loadable(names, "added_tool_names")
        call = self._pending(call_id)
        called = self._called
        if called is not None and any(c is call for c in called[0].tool_calls):
            before: Collection[str] = called[1]
        else:  # a call made before this session was loaded: whatever is active counts as before
            before = self.tool_set.activated
        fresh = [n for n in names if n not in before]
        message = self._result(call, parts(content), is_error, fresh)
        self._host.append(message)
        self.tool_set.activate(fresh)
        return message

    def execute(self, tool_call: ToolCall) -> ToolResultMessage:
        """Run a pending tool call inside the wrapper and append its result.

        Only a pure append to the active set is recorded as a marker. Errors of any kind
        (unknown or inactive tool, bad arguments, an exception in the tool) become an
        `is_error` result; the active set is restored if the tool failed.
        """
        if not isinstance(tool_call, ToolCall):
            raise checks.type_error("tool_call", "a ToolCall", tool_call)
        call = self._pending(tool_call.id)
        if (call.name, call.namespace, call.arguments) != (
            tool_call.name,
            tool_call.namespace,
            tool_call.arguments,
        ):
            raise TranscriptError(
                f"tool_call {tool_call.id!r} differs from the call recorded under that id "
                f"({checks.shown(tool_call.model_dump(exclude_none=True))} vs "
                f"{checks.shown(call.model_dump(exclude_none=True))}); execute the recorded call"
            )
        state = self.tool_set.run_state()
        before = state[0]
        self.running, self._executing = True, call
        try:
            content, reported = self._run(call)
        except BaseException as exc:
            self.tool_set.restore_run_state(state)
            self.running, self._executing = False, None
            if not isinstance(exc, Exception):
                raise
            return self._host.append(self._result(call, parts(_error_text(call, exc)), True, []))  # type: ignore[return-value]
        self.running, self._executing = False, None
        after = list(self.tool_set.activated)
        change = None
        names: list[str] = []
        if after[: len(before)] == before:
            computed = after[len(before) :]
            # a name active before the run is no load point, whatever the tool reports
            fresh = set(after) - set(before)
            names = [n for n in dict.fromkeys([*reported, *computed]) if n in fresh]
        else:
            change = ToolChange(
                removed=[n for n in before if n not in after],
                added=[n for n in after if n not in before],
            )
        message = self._result(call, content, False, names, change)
        return self._host.append(message)  # type: ignore[return-value]

    def run_dispatched(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run `name(**arguments)` for the call `execute` is running, as a dispatcher tool does
        (the bridge's `call_tool`): the checks of a direct call, at that call's position (a tool
        not visible there is refused; the arguments are validated against its own schema).
        Any failure raises DispatchError naming `name`."""
        outer = self._executing
        if outer is None:
            raise TranscriptError("run_dispatched runs only inside a tool call's execution")
        checks.text(name, "name")
        checks.mapping(arguments, "arguments")
        try:
            if name == outer.name:
                raise ValueError(f"{name!r} cannot dispatch to itself: name the tool to run")
            content, reported = self._run(ToolCall(id=outer.id, name=name, arguments=arguments))
        except Exception as exc:
            raise DispatchError(name, exc) from exc
        return ToolOutput(content, reported)

    def _pending(self, call_id: str) -> ToolCall:
        for call in self._host.pending_calls():
            if call.id == call_id:
                return call
        raise TranscriptError(f"tool call {call_id!r} is not pending in the transcript")

    def _result(
        self,
        call: ToolCall,
        content: list[ContentPart],
        is_error: bool,
        names: list[str],
        change: ToolChange | None = None,
    ) -> ToolResultMessage:
        return ToolResultMessage(
            call_id=call.id,
            tool_name=call.name,
            content=content,
            is_error=is_error,
            added_tool_names=names or None,
            added_tools=[self.registry[n].spec() for n in names],
            non_append_change=change,
        )

    def _run(self, call: ToolCall) -> tuple[list[ContentPart], list[str]]:
        if call.invalid_arguments is not None:
            raise ValueError(f"arguments are not a JSON object: {call.invalid_arguments[:200]!r}")
        if call.name not in self.registry:
            raise UnknownToolError(call.name)
        refusal = self._refusal(call)
        if refusal:
            raise LookupError(refusal)
        tool = self.registry[call.name]
        from jsonschema import Draft202012Validator  # seconds to import: only where it runs

        error = next(iter(Draft202012Validator(tool.parameters).iter_errors(call.arguments)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "<arguments>"
            raise ValueError(f"invalid arguments at {where}: {error.message}")
        if tool.execute is None:
            raise RuntimeError(f"tool {call.name!r} has no implementation bound")
        output = tool.execute(**copy.deepcopy(call.arguments))
        if isinstance(output, ToolOutput):
            return parts(output.content), list(output.added_tool_names or [])
        return parts(output), []

    def _refusal(self, call: ToolCall) -> str | None:
        """Why the model may not call this tool where it did, or None."""
        position = self._call_position(call)
        timeline, active = self.tool_set.timeline(), self.tool_set.activated
        if not timeline.visible(call.name, position, active):
            last = timeline.last_change(call.name, position)
            if last is not None and not last.added:
                return (
                    f"tool {call.name!r} was removed from this conversation (after message "
                    f"{last.position}) and is not active here; it cannot be called"
                )
            how = f": find it with {TOOL_SEARCH} first" if TOOL_SEARCH in active else ""
            return f"tool {call.name!r} is registered but not active at this point{how}"
        if call.name not in active:
            return f"tool {call.name!r} is registered but not active in this session"
        return None

    def _call_position(self, call: ToolCall) -> int:
        called = self._called
        messages = self._host.messages
        if called is not None and any(c is call for c in called[0].tool_calls):
            for index in range(len(messages) - 1, -1, -1):
                if messages[index] is called[0]:
                    return index
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage) and any(
                c.id == call.id for c in message.tool_calls
            ):
                return index
        return len(messages)


def _error_text(call: ToolCall, exc: Exception) -> str:
    if isinstance(exc, DispatchError):  # the inner tool is the one that failed
        return f"Error in tool {exc.tool!r} (called through {call.name}): {exc}"
    if isinstance(exc, UnknownToolError):
        return f"Error: {exc}"
    return f"Error in tool {call.name!r}: {type(exc).__name__}: {exc}"
