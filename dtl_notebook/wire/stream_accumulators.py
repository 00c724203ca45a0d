"""One stream's events folded into the response the provider would have returned unstreamed,
per provider, with the SDKs' own accumulators (the streams are found by `wire.stream`)."""

from __future__ import annotations

from typing import Any

import httpx2
from anthropic.lib.streaming._beta_messages import accumulate_event
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from pydantic import ValidationError

from dtl_notebook.wire.reply import JSON, ResponseFormatError

#: the terminal events of an OpenAI Responses stream, each carrying the whole response
RESPONSES_DONE = ("response.completed", "response.incomplete", "response.failed")

_MESSAGE_EVENTS = {
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
}


def accumulate_messages(events: list[JSON], provider: str, at: list[int]) -> JSON:
    """The Message one stream of message events adds up to; `at[i]` is where events[i] sits
    (for errors)."""
    snapshot: Any = None
    headers = httpx2.Headers()
    buffers: dict[int, bytes] = {}
    stopped = False
    for i, event in zip(at, events, strict=True):
        kind = event.get("type")
        if not isinstance(kind, str):
            raise ResponseFormatError(provider, f"<stream>.{i}.type", "missing")
        if kind not in _MESSAGE_EVENTS:  # ping, and event types newer than this code
            continue
        if snapshot is None and kind != "message_start":
            raise ResponseFormatError(
                provider, f"<stream>.{i}.type", f"{kind!r} before message_start"
            )
        stopped = kind == "message_stop"
        try:
            snapshot = accumulate_event(
                event=event,  # type: ignore[arg-type]  # the SDK constructs its model from a dict
                current_snapshot=snapshot,
                json_bufs=buffers,
                request_headers=headers,
            )
        except (ValueError, IndexError, AttributeError, TypeError, KeyError) as exc:
            raise ResponseFormatError(provider, f"<stream>.{i}", str(exc)) from None
    if snapshot is None:
        raise ResponseFormatError(provider, "<stream>", "no message_start event")
    if not stopped:
        raise ResponseFormatError(
            provider,
            "<stream>",
            f"no message_stop event (the stream ends with {events[-1].get('type')!r}: cut short?)",
        )
    data = snapshot.model_dump(mode="json", exclude_none=True, warnings=False)
    assert isinstance(data, dict)
    return data


def accumulate_responses(events: list[JSON], provider: str) -> JSON:
    """The response the stream's terminal event carries. Where its `output` is empty but the
    stream gave items (`response.output_item.done`: Codex's backend ends its socket streams
    so), the output is those items, in `output_index` order: what a continuation continues."""
    for event in reversed(events):
        if event.get("type") in RESPONSES_DONE and isinstance(event.get("response"), dict):
            response: JSON = event["response"]
            done = [] if response.get("output") else _items_done(events)
            return {**response, "output": done} if done else response
    last = events[-1].get("type")
    raise ResponseFormatError(
        provider,
        "<stream>",
        f"no response.completed event (the stream ends with {last!r}: cut short?)",
    )


def _items_done(events: list[JSON]) -> list[Any]:
    done = [
        (e.get("output_index"), n, e["item"])
        for n, e in enumerate(events)
        if e.get("type") == "response.output_item.done" and isinstance(e.get("item"), dict)
    ]
    done.sort(key=lambda d: (d[0] if isinstance(d[0], int) else d[1], d[1]))
    return [item for _, _, item in done]


def accumulate_chat(events: list[JSON], provider: str, at: list[int]) -> JSON:
    """The ChatCompletion one completion's chunks add up to, every choice finished."""
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for i, event in zip(at, events, strict=True):
        try:
            chunk = ChatCompletionChunk.model_validate(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ResponseFormatError(provider, f"<stream>.{i}.{where}", first["msg"]) from None
        try:
            state.handle_chunk(chunk)
        except (IndexError, KeyError, TypeError, ValueError) as exc:
            raise ResponseFormatError(provider, f"<stream>.{i}", f"{exc!r}") from None
    data = state.get_final_completion().model_dump(mode="json", exclude_none=True, warnings=False)
    assert isinstance(data, dict)
    unfinished = [c.get("index") for c in data.get("choices") or [] if not c.get("finish_reason")]
    if unfinished or not data.get("choices"):
        raise ResponseFormatError(
            provider,
            "<stream>",
            f"completion {data.get('id')!r}: no chunk with a finish_reason for choice "
            f"{unfinished[0] if unfinished else 0} (cut short?)",
        )
    if "usage" not in data:  # Moonshot puts a stream's usage in the last chunk's choice
        found = [c["usage"] for e in events for c in e.get("choices") or [] if "usage" in c]
        if found and isinstance(found[-1], dict):
            data["usage"] = found[-1]
    return data
