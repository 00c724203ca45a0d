"""Streamed and textual responses: server-sent events (or event lists) folded into the response
object the provider would have returned unstreamed, with the SDKs' own accumulators.

- Anthropic: `anthropic.lib.streaming` accumulates `message_*`/`content_block_*` events into a
  message (the beta accumulator, which also tracks server tool blocks such as tool search).
- OpenAI Responses: the `response.completed` (or `.incomplete` / `.failed`) event carries the
  whole response.
- Chat Completions (and Kimi): `openai.lib.streaming.chat.ChatCompletionStreamState` folds the
  chunks into a `ChatCompletion`.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from anthropic._streaming import SSEDecoder
from anthropic.lib.streaming._beta_messages import accumulate_event
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from pydantic import ValidationError

from dtl_notebook.wire.reply import JSON, ResponseFormatError, body_preview, error_from_body

_RESPONSES_DONE = ("response.completed", "response.incomplete", "response.failed")


def response_body(value: Any, provider: str) -> Any:
    """`value` as the provider's response object: JSON text and bytes are decoded, an event
    stream (SSE text/bytes, JSON lines, or a list of event dicts) is accumulated; SDK objects
    and dicts pass through. An error event or error body raises ProviderError."""
    if isinstance(value, (str, bytes)):
        return _from_text(value, provider)
    if isinstance(value, list):
        if not value:
            raise ResponseFormatError(provider, "<stream>", "no events")
        return accumulate(value, provider)
    return value


def _from_text(body: str | bytes, provider: str) -> Any:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    stripped = text.lstrip()
    kind = type(body).__name__
    if not stripped:
        raise ResponseFormatError(provider, "<root>", f"expected an object, got an empty {kind}")
    if stripped.startswith(("event:", "data:", ":")):
        return accumulate(sse_events(text, provider), provider)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        lines = [line for line in text.splitlines() if line.strip()]
        if exc.msg == "Extra data" and len(lines) > 1:  # one event JSON per line
            return accumulate(_json_lines(lines, provider), provider)
        raise ResponseFormatError(
            provider,
            "<root>",
            f"expected an object, got {kind} that is not JSON ({exc.msg}); "
            f"the body starts {body_preview(text)}",
        ) from None


def _json_lines(lines: list[str], provider: str) -> list[Any]:
    events = []
    for number, line in enumerate(lines, 1):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ResponseFormatError(
                provider, f"<stream>.line {number}", f"not JSON ({exc.msg}): {body_preview(line)}"
            ) from None
    return events


def sse_events(body: str | bytes, provider: str) -> list[Any]:
    """The JSON data of each server-sent event (the SDK's decoder); `[DONE]` ends the stream."""
    raw = body.encode() if isinstance(body, str) else body
    events: list[Any] = []
    for number, event in enumerate(SSEDecoder().iter_bytes(iter([raw]))):
        if event.data.strip() == "[DONE]":
            break
        if not event.data.strip():
            continue
        try:
            events.append(json.loads(event.data))
        except json.JSONDecodeError as exc:
            raise ResponseFormatError(
                provider,
                f"<stream>.event {number} ({event.event or 'message'})",
                f"data is not JSON ({exc.msg}): {body_preview(event.data)}",
            ) from None
    if not events:
        raise ResponseFormatError(provider, "<stream>", f"no events in {body_preview(body)}")
    return events


def accumulate(events: list[Any], provider: str) -> JSON:
    """The final response object a list of stream events adds up to."""
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise ResponseFormatError(
                provider, f"<stream>.{i}", f"expected an event object, got {type(event).__name__}"
            )
        error = error_from_body(event, provider)
        if error is not None:
            raise error
    if provider == "anthropic":
        return _anthropic(events)
    if provider == "openai-responses":
        return _responses(events)
    return _chat(events, provider)


_ANTHROPIC_EVENTS = {
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
}


def _anthropic(events: list[JSON]) -> JSON:
    snapshot: Any = None
    headers = httpx2.Headers()
    buffers: dict[int, bytes] = {}
    for i, event in enumerate(events):
        kind = event.get("type")
        if not isinstance(kind, str):
            raise ResponseFormatError("anthropic", f"<stream>.{i}.type", "missing")
        if kind not in _ANTHROPIC_EVENTS:  # ping, and event types newer than this code
            continue
        if snapshot is None and kind != "message_start":
            raise ResponseFormatError(
                "anthropic", f"<stream>.{i}.type", f"{kind!r} before message_start"
            )
        try:
            snapshot = accumulate_event(
                event=event,  # type: ignore[arg-type]  # the SDK constructs its model from a dict
                current_snapshot=snapshot,
                json_bufs=buffers,
                request_headers=headers,
            )
        except (ValueError, IndexError, AttributeError, TypeError) as exc:
            raise ResponseFormatError("anthropic", f"<stream>.{i}", str(exc)) from None
    if snapshot is None:
        raise ResponseFormatError("anthropic", "<stream>", "no message_start event")
    data = snapshot.model_dump(mode="json", exclude_none=True, warnings=False)
    assert isinstance(data, dict)
    return data


def _responses(events: list[JSON]) -> JSON:
    for event in reversed(events):
        if event.get("type") in _RESPONSES_DONE and isinstance(event.get("response"), dict):
            response: JSON = event["response"]
            return response
    last = events[-1].get("type")
    raise ResponseFormatError(
        "openai-responses",
        "<stream>",
        f"no response.completed event (the stream ends with {last!r}: cut short?)",
    )


def _chat(events: list[JSON], provider: str) -> JSON:
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for i, event in enumerate(events):
        try:
            chunk = ChatCompletionChunk.model_validate(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ResponseFormatError(provider, f"<stream>.{i}.{where}", first["msg"]) from None
        state.handle_chunk(chunk)
    data = state.get_final_completion().model_dump(mode="json", exclude_none=True, warnings=False)
    assert isinstance(data, dict)
    if "usage" not in data:  # Moonshot puts a stream's usage in the last chunk's choice
        found = [c["usage"] for e in events for c in e.get("choices") or [] if "usage" in c]
        if found and isinstance(found[-1], dict):
            data["usage"] = found[-1]
    return data
