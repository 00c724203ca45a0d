"""OpenAI Chat Completions: a `ChatCompletion` back to a neutral assistant message (`parse`).

Compatible servers (Kimi, vLLM, ...) answer in the same shape; `provider` names whose reply
it is. A `content` list keeps its text parts as text and other parts as native blocks.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.agent.messages import (
    AssistantMessage,
    NativeBlock,
    NativePart,
    TextPart,
    ToolCallPart,
)
from dtl_notebook.wire.reply import Reply, ResponseFormatError, as_dict, call_from_json, require

PROVIDER = "openai-chat"


def parse(response: Any, model: str | None = None, provider: str = PROVIDER) -> Reply:
    """A `ChatCompletion` (SDK object or dict) as a neutral assistant message. `content` may
    be a text or (some compatible servers) a list of parts: text parts are kept as text, other
    parts as native blocks; a `refusal` is kept as text and on `Reply.refusal`."""
    data = as_dict(response, provider)
    choices = require(data, "choices", list, provider, "")
    if not choices:
        raise ResponseFormatError(provider, "choices", "empty")
    message = require(choices[0], "message", dict, provider, "choices.0")
    content, refusals = _content(message.get("content"), provider)
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise ResponseFormatError(
            provider, "choices.0.message.refusal", f"expected str, got {type(refusal).__name__}"
        )
    if refusal:  # on a line of its own after any text: the two are separate fields
        content.append(TextPart(text=("\n" if content else "") + refusal))
        refusals.append(refusal)
    for i, call in enumerate(message.get("tool_calls") or []):
        where = f"choices.0.message.tool_calls.{i}"
        function = require(call, "function", dict, provider, where)
        raw = require(function, "arguments", str, provider, f"{where}.function")
        call_id = require(call, "id", str, provider, where)
        name = require(function, "name", str, provider, f"{where}.function")
        content.append(ToolCallPart(call=call_from_json(call_id, name, raw)))
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ResponseFormatError(provider, "usage", "expected an object")
    reply = AssistantMessage(content=content, provider=provider, model=data.get("model", model))
    finish = choices[0].get("finish_reason")
    return Reply(reply, usage, finish, [], data, refusal="".join(refusals) or None)


def _content(
    value: Any, provider: str
) -> tuple[list[TextPart | ToolCallPart | NativePart], list[str]]:
    """The message content as parts, and the refusal parts' texts."""
    where = "choices.0.message.content"
    if value is None or isinstance(value, str):
        return ([TextPart(text=value)] if value else []), []
    if not isinstance(value, list):
        raise ResponseFormatError(
            provider, where, f"expected str or a list of parts, got {type(value).__name__}"
        )
    parts: list[TextPart | ToolCallPart | NativePart] = []
    refusals: list[str] = []
    for j, part in enumerate(value):
        kind = require(part, "type", str, provider, f"{where}.{j}")
        if kind in ("text", "output_text", "refusal"):
            field = "refusal" if kind == "refusal" else "text"
            text = require(part, field, str, provider, f"{where}.{j}")
            parts.extend([TextPart(text=text)] if text else [])
            refusals.extend([text] if kind == "refusal" else [])
        else:
            parts.append(NativePart(block=NativeBlock(provider=provider, data=part)))
    return parts, refusals
