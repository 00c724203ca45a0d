"""The session: registry, append-only active set, transcript with load-point markers, prompt."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from dtl_notebook._reuse.transcript import Transcript
from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import InvalidArgumentError, TranscriptError, UnknownToolError
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
    ToolChange,
    ToolResultMessage,
    UserMessage,
    parts,
)
from dtl_notebook.agent.sections import (
    Sections,
    apply_patch,
    check_section_name,
    diff_sections,
    tools_section,
)
from dtl_notebook.agent.split import DeferredSplit, split_deferred_tools
from dtl_notebook.agent.storage import dump_session, load_session, write_atomic
from dtl_notebook.agent.tool_search import TOOL_SEARCH, SessionSearch, make_tool_search
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec

_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
_NEUTRAL = (UserMessage, AssistantMessage, ToolResultMessage, SystemUpdate)


@dataclass
class ToolOutput:
    """What a tool may return to report, besides its content, the tools it activated."""

    content: Any
    added_tool_names: list[str] | None = None


@dataclass(frozen=True)
class CacheHazard:
    """A deferred tool whose prompt contribution would change the system prompt on activation."""

    tool: str
    fields: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"deferred tool {self.tool!r} carries {' and '.join(self.fields)}: activating it "
            "rewrites the `tools` section of the system prompt"
        )


class Session:
    """One agent's provider-neutral state. See DESIGN.md for the contract."""

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
        if search is not None and search not in ("bm25", "regex", "keyword"):
            raise InvalidArgumentError(
                f"search: unknown search engine {checks.shown(search)}; "
                "choose one of bm25, regex, keyword (or None: no tool_search)"
            )
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
        self._active: list[str] = []
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
        return scratch

    # -- the active set -------------------------------------------------------------------
    @property
    def active_tools(self) -> list[str]:
        """Active tool names in activation order (unregistered ones drop out)."""
        return [n for n in self._active if n in self.registry]

    def set_active_tools(self, names: Iterable[str]) -> None:
        """Replace the active set (order kept, duplicates dropped). Writes no marker."""
        wanted = list(dict.fromkeys(checks.name_list(names, "names")))
        unknown = [n for n in wanted if n not in self.registry]
        if unknown:
            raise UnknownToolError(", ".join(unknown))
        self._active = wanted

    def prepare_search(self) -> None:
        """Build the local `tool_search` index now (otherwise the first search does), once per
        registry version."""
        if self.searcher is not None:
            self.searcher.refresh()

    def activate(self, names: Iterable[str]) -> list[str]:
        """Append tools to the active set; returns the names that were newly added."""
        new = [n for n in dict.fromkeys(checks.name_list(names, "names")) if n not in self._active]
        self.set_active_tools([*self._active, *new])
        return new

    def tools(self) -> list[Tool]:
        """The active tools' current definitions, in activation order."""
        return [self.registry[n] for n in self.active_tools]

    def split(self) -> DeferredSplit:
        """split_deferred_tools over the active tools and this transcript."""
        return split_deferred_tools(self.tools(), self.messages)

    # -- the system prompt ----------------------------------------------------------------
    def desired_sections(self) -> dict[str, str]:
        """The sections the next turn should hold: the prompt plus the derived `tools` section."""
        sections = self.prompt.copy()
        derived = tools_section(self.tools())
        if derived and "tools" not in sections:
            ordered = {k: v for k, v in sections.items() if k == "preamble"}
            ordered["tools"] = derived
            ordered.update(sections)
            sections = ordered
        return sections

    def held_sections(self) -> dict[str, str]:
        """The sections the model holds now, replayed from the transcript (from where the last
        replay stopped, while the transcript only grew)."""
        transcript, held, start = self._messages, {}, 0
        memo = self._held  # its dict is never edited: apply_patch makes a new one
        same = memo is not None and memo[0] is transcript and memo[1] == transcript.rewrites
        if memo is not None and same and memo[2] <= len(transcript):
            held, start = memo[3], memo[2]
        for message in transcript[start:]:
            if isinstance(message, SystemUpdate):
                held = apply_patch(held, message.sections)
        self._held = (transcript, transcript.rewrites, len(transcript), held)
        return dict(held)

    def cache_hazards(self) -> list[CacheHazard]:
        """Deferred tools carrying a prompt snippet or guidelines."""
        hazards = []
        for tool in self.split().deferred.values():
            fields = tuple(f for f in ("prompt_snippet", "prompt_guidelines") if getattr(tool, f))
            if fields:
                hazards.append(CacheHazard(tool.name, fields))
        return hazards

    def _sync_prompt(self) -> None:
        patch = diff_sections(self.held_sections(), self.desired_sections())
        if patch:
            self.messages.append(SystemUpdate(sections=patch))

    # -- the transcript -------------------------------------------------------------------
    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant message that have no result yet."""
        answered: set[str] = set()
        for message in reversed(self.messages):
            if isinstance(message, ToolResultMessage):
                answered.add(message.call_id)
            elif isinstance(message, AssistantMessage):
                return [c for c in message.tool_calls if c.id not in answered]
        return []

    def user(self, content: str | list[ContentPart]) -> UserMessage:
        """Start a turn: record any system prompt change (one update at most), then the text."""
        if isinstance(content, str):
            checks.text(content, "content")
        elif not isinstance(content, list) or not content:
            raise checks.type_error("content", "a non-empty string or list of parts", content)
        message = UserMessage(content=parts(content))
        self._check(message)
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
        self.messages.append(message)
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
            missing = [n for n in message.added_tool_names or [] if n not in self.registry]
            if missing:
                raise UnknownToolError(", ".join(missing), "registered (named in a marker)")
        elif isinstance(message, AssistantMessage):
            ids = [c.id for c in message.tool_calls]
            if len(ids) != len(set(ids)):
                raise TranscriptError(f"duplicate tool call ids in one message: {ids}")
        elif isinstance(message, UserMessage) and self.pending_calls():
            pending = [c.id for c in self.pending_calls()]
            raise TranscriptError(f"tool calls {pending} need results before the next user message")

    def tool_result(
        self,
        call_id: str,
        content: Any,
        added_tool_names: Iterable[str] | None = None,
        is_error: bool = False,
    ) -> ToolResultMessage:
        """Append a result; `added_tool_names` writes a marker (and activates those tools).

        The marker is taken as given (the importer's door): a name already active becomes
        deferred from here on, unlike in `execute`, which records only fresh names.
        """
        checks.text(call_id, "call_id")
        checks.boolean(is_error, "is_error")
        names = list(dict.fromkeys(checks.name_list(added_tool_names or [], "added_tool_names")))
        unknown = [n for n in names if n not in self.registry]
        if unknown:
            raise UnknownToolError(", ".join(unknown), "registered (named in a marker)")
        call = self._pending(call_id)
        message = self._result(call, parts(content), is_error, names)
        self.append(message)
        self.activate(names)
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
        before = list(self._active)
        try:
            content, reported = self._run(call)
        except BaseException as exc:
            self._active = before
            if not isinstance(exc, Exception):
                raise
            return self.append(self._result(call, parts(_error_text(call, exc)), True, []))  # type: ignore[return-value]
        after = list(self._active)
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
        return self.append(message)  # type: ignore[return-value]

    def _pending(self, call_id: str) -> ToolCall:
        for call in self.pending_calls():
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
        if call.name not in self._active:
            raise LookupError(f"tool {call.name!r} is registered but not active in this session")
        tool = self.registry[call.name]
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


def _error_text(call: ToolCall, exc: Exception) -> str:
    if isinstance(exc, UnknownToolError):
        return f"Error: {exc}"
    return f"Error in tool {call.name!r}: {type(exc).__name__}: {exc}"


__all__ = ["CacheHazard", "ImagePart", "Session", "ToolOutput", "ToolSpec"]
