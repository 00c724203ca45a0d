"""A complete response object as the server-sent events the provider streams for it.

What the emulator answers to `"stream": true`: the event sequence whose accumulation (the SDKs'
own accumulators, `wire.stream`) gives back the same object.
Anthropic: https://docs.claude.com/en/docs/build-with-claude/streaming
OpenAI Responses: https://platform.openai.com/docs/api-reference/responses-streaming
Chat Completions: https://platform.openai.com/docs/api-reference/chat-streaming
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from dtl_notebook.wire.providers import spec

JSON = dict[str, Any]
Event = tuple[JSON | str, str | None]  # an event's data, and its SSE `event:` name if any


def sse_events(body: JSON, provider: str) -> Iterator[bytes]:
    """The SSE frames (`event:`/`data:` blocks) streaming `body` for `provider`."""
    for data, name in stream_events(body, provider):
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {text}\n\n".encode()


def stream_events(body: JSON, provider: str) -> Iterator[Event]:
    """The events streaming `body` for `provider`, in order (over a Responses WebSocket each
    event's data is one text message)."""
    yield from _STREAMS[spec(provider).stream_format](body)


def _event(data: JSON | str, event: str | None = None) -> Event:
    return data, event


def _anthropic(message: JSON) -> Iterator[Event]:
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield _event({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(message.get("content") or []):
        kind = block.get("type")
        if kind == "text":
            opened: JSON = {**block, "text": ""}
            delta: JSON | None = {"type": "text_delta", "text": block.get("text", "")}
        elif kind == "tool_use":
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}
        else:  # server tool blocks arrive whole
            opened, delta = block, None
        yield _event(
            {"type": "content_block_start", "index": index, "content_block": opened},
            "content_block_start",
        )
        if delta is not None:
            yield _event(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        yield _event({"type": "content_block_stop", "index": index}, "content_block_stop")
    final = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    yield _event(
        {"type": "message_delta", "delta": final, "usage": usage},
        "message_delta",
    )
    yield _event({"type": "message_stop"}, "message_stop")


def _responses(response: JSON) -> Iterator[Event]:
    created = {**response, "status": "in_progress", "output": [], "usage": None}
    sequence = 0
    yield _event({"type": "response.created", "response": created, "sequence_number": sequence})
    for index, item in enumerate(response.get("output") or []):
        for kind in ("response.output_item.added", "response.output_item.done"):
            sequence += 1
            event = {"type": kind, "output_index": index, "item": item}
            yield _event({**event, "sequence_number": sequence}, kind)
    sequence += 1
    done = {"type": "response.completed", "response": response, "sequence_number": sequence}
    yield _event(done, "response.completed")


def _chat(completion: JSON) -> Iterator[Event]:
    head: JSON = {k: completion[k] for k in ("id", "created", "model") if k in completion}
    head["object"] = "chat.completion.chunk"
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        delta: JSON = {"role": "assistant", "content": message.get("content")}
        calls = message.get("tool_calls")
        if calls:
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(calls)]
        first = {"index": choice.get("index", 0), "delta": delta, "finish_reason": None}
        yield _event({**head, "choices": [first]})
        last = {"index": choice.get("index", 0), "delta": {}, "finish_reason": None}
        last["finish_reason"] = choice.get("finish_reason")
        yield _event({**head, "choices": [last]})
    if completion.get("usage") is not None:
        yield _event({**head, "choices": [], "usage": completion["usage"]})
    yield _event("[DONE]")


_STREAMS: dict[str, Callable[[JSON], Iterator[Event]]] = {  # by the table's stream format
    "message-events": _anthropic,
    "response-events": _responses,
    "chat-chunks": _chat,
}
