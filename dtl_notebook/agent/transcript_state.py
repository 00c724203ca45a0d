"""A session's transcript: its messages, the tool calls still waiting for a result, and the
checks a message must pass to be appended."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from dtl_notebook._reuse.transcript import Transcript
from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import TranscriptError, UnknownToolError
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ContentPart,
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
from dtl_notebook.agent.sections import check_section_name
from dtl_notebook.agent.tools import ToolRegistry

_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
_NEUTRAL = (UserMessage, AssistantMessage, ToolResultMessage, SystemUpdate)


def neutral_message(message: Any) -> Message:
    """A neutral message, or its dict form validated into one; anything else is refused."""
    if isinstance(message, dict):
        try:
            return _MESSAGE.validate_python(message)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = checks.json_path(first["loc"], message, "message")
            raise TranscriptError(f"invalid {where}: {first['msg']}") from None
    if not isinstance(message, _NEUTRAL):
        raise checks.type_error(
            "message", "a UserMessage, AssistantMessage, ToolResultMessage or SystemUpdate", message
        )
    return message


def user_message(content: str | list[ContentPart]) -> UserMessage:
    """A user message of text or parts (checked)."""
    if isinstance(content, str):
        checks.text(content, "content")
    elif not isinstance(content, list) or not content:
        raise checks.type_error("content", "a non-empty string or list of parts", content)
    return UserMessage(content=parts(content))


def assistant_message(
    text: str | None, tool_calls: Iterable[ToolCall], native: Iterable[NativeBlock]
) -> AssistantMessage:
    """An assistant message: text first, then native blocks, then tool calls (checked)."""
    if text is not None:
        checks.text(text, "text", empty=True)
    tool_calls = checks.model_list(tool_calls, ToolCall, "tool_calls")
    native = checks.model_list(native, NativeBlock, "native")
    content: list[TextPart | ToolCallPart | NativePart] = []
    if text:
        content.append(TextPart(text=text))
    content.extend(NativePart(block=b) for b in native)
    content.extend(ToolCallPart(call=c) for c in tool_calls)
    return AssistantMessage(content=content)


class TranscriptState:
    """The messages of one session (append-only by contract, every other change counted in
    `Transcript.rewrites`) and what is pending at their end."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self.messages: Transcript[Message] = Transcript(messages)
        # the calls pending at the end of the transcript seen: (transcript, rewrites, seen, calls)
        self._open: tuple[Transcript[Message], int, int, tuple[ToolCall, ...]] | None = None

    def copy(self) -> TranscriptState:
        """A transcript of its own holding the same messages."""
        return TranscriptState(self.messages)

    def replace(self, messages: Iterable[Message]) -> None:
        """Replace the messages, counted as a rewrite."""
        replaced: Transcript[Message] = Transcript(messages)
        replaced.rewrites = self.messages.rewrites + 1
        self.messages = replaced

    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant message that have no result yet.

        Folded forward from where the last look stopped while the transcript only grew, so a
        long run of messages after the last assistant message is not walked on every append.
        """
        transcript, start = self.messages, 0
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

    def check(self, message: Message, registry: ToolRegistry) -> None:
        """Refuse a message that does not fit at the end of the transcript."""
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
                if n not in registry and message.snapshot(n) is None
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
