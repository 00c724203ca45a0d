"""Streamed and textual responses: server-sent events (or event lists) folded into the response
object the provider would have returned unstreamed, with the SDKs' own accumulators
(`wire.stream_accumulators`).

A text may hold several streams one after another (a multi-step run logged as one body):
`response_bodies` splits it into one response per stream, `response_body` refuses it naming
where the second stream starts. A stream that lacks its terminal event is refused as cut short.

- Anthropic: each `message_start` … `message_stop` is one message, accumulated by
  `anthropic.lib.streaming` (the beta accumulator, which also tracks server tool blocks such as
  tool search).
- OpenAI Responses: each `response.created` … `response.completed` (or `.incomplete` /
  `.failed`) is one response; the terminal event carries the whole response.
- Chat Completions (and Kimi): the chunks of each completion `id` (in the order the ids first
  appear, so interleaved completions come apart) are folded by
  `openai.lib.streaming.chat.ChatCompletionStreamState` into a `ChatCompletion`.
"""

from __future__ import annotations

import json
from typing import Any

from dtl_notebook.wire.problems import as_list
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.reply import JSON, ResponseFormatError, body_preview, error_from_body


def response_body(value: Any, provider: str) -> Any:
    """`value` as the provider's response object: JSON text and bytes are decoded, an event
    stream (SSE text/bytes, JSON lines, or a list of event dicts) is accumulated; SDK objects
    and dicts pass through. An error event or error body raises ProviderError; a text holding
    more than one stream raises ResponseFormatError naming where the second one starts."""
    events = _events(value, provider)
    if events is None:
        return _decoded(value)
    streams = split_streams(events, provider)
    if len(streams) > 1:
        start = streams[1][0]
        raise ResponseFormatError(
            provider,
            f"<stream>.{start}",
            f"a second stream starts here ({_describe(events[start], provider)}); "
            "parse_responses reads each stream as its own reply",
        )
    return _accumulate(events, provider, streams[0])


def response_bodies(value: Any, provider: str) -> list[Any]:
    """Every response `value` holds: one per stream for streamed text, else `[response_body]`."""
    events = _events(value, provider)
    if events is None:
        return [_decoded(value)]
    return [
        _accumulate([events[i] for i in at], provider, at) for at in split_streams(events, provider)
    ]


def _decoded(value: Any) -> Any:
    if isinstance(value, (str, bytes)):
        return json.loads(value)  # _events has checked that it is one JSON document
    return value


def _events(value: Any, provider: str) -> list[Any] | None:
    """The stream events `value` holds, or None when it is one whole (or JSON) response."""
    if isinstance(value, list):
        if not value:
            raise ResponseFormatError(provider, "<stream>", "no events")
        return value
    if not isinstance(value, (str, bytes)):
        return None
    text = _text(value, provider)
    stripped = text.lstrip()
    kind = type(value).__name__
    if not stripped:
        raise ResponseFormatError(provider, "<root>", f"expected an object, got an empty {kind}")
    if stripped.startswith(("event:", "data:", ":")):
        return sse_events(text, provider)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        lines = [line for line in text.splitlines() if line.strip()]
        if exc.msg == "Extra data" and len(lines) > 1:  # one event JSON per line
            return _json_lines(lines, provider)
        raise ResponseFormatError(
            provider,
            "<root>",
            f"expected an object, got {kind} that is not JSON ({exc.msg}); "
            f"the body starts {body_preview(text)}",
        ) from None
    except RecursionError:
        raise ResponseFormatError(provider, "<root>", "JSON nested too deep to read") from None
    return None


def _text(body: str | bytes, provider: str) -> str:
    if isinstance(body, str):
        return body
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResponseFormatError(
            provider, "<root>", f"not UTF-8: byte {body[exc.start]:#04x} at offset {exc.start}"
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
        except RecursionError:
            raise ResponseFormatError(
                provider, f"<stream>.line {number}", "JSON nested too deep to read"
            ) from None
    return events


def sse_events(body: str | bytes, provider: str) -> list[Any]:
    """The JSON data of each server-sent event (the SDK's decoder); `[DONE]` ends a stream, and
    events after it (a next stream) are read too."""
    from anthropic._streaming import SSEDecoder  # the SDK's types load only where read

    raw = body.encode() if isinstance(body, str) else body
    events: list[Any] = []
    for number, event in enumerate(SSEDecoder().iter_bytes(iter([raw]))):
        if not event.data.strip() or event.data.strip() == "[DONE]":
            continue
        where = f"<stream>.event {number} ({event.event or 'message'})"
        try:
            events.append(json.loads(event.data))
        except json.JSONDecodeError as exc:
            raise ResponseFormatError(
                provider, where, f"data is not JSON ({exc.msg}): {body_preview(event.data)}"
            ) from None
        except RecursionError:
            raise ResponseFormatError(provider, where, "data nested too deep to read") from None
    if not events:
        raise ResponseFormatError(provider, "<stream>", f"no events in {body_preview(body)}")
    return events


def accumulate(events: list[Any], provider: str) -> JSON:
    """The final response object a list of stream events (one stream) adds up to."""
    return _accumulate(events, provider, list(range(len(events))))


def _accumulate(events: list[Any], provider: str, at: list[int]) -> JSON:
    """One stream's response; `at[i]` is where events[i] sits in the whole text (for errors)."""
    for i, event in zip(at, events, strict=True):
        if not isinstance(event, dict):
            raise ResponseFormatError(
                provider, f"<stream>.{i}", f"expected an event object, got {type(event).__name__}"
            )
        error = error_from_body(event, provider)
        if error is not None:
            raise error
    # the SDKs' accumulators (and their types) load with the first stream to accumulate
    from dtl_notebook.wire.stream_accumulators import (
        accumulate_chat,
        accumulate_messages,
        accumulate_responses,
    )

    stream_format = spec(provider).stream_format
    if stream_format == "message-events":
        return accumulate_messages(events, provider, at)
    if stream_format == "response-events":
        return accumulate_responses(events, provider)
    return accumulate_chat(events, provider, at)


def split_streams(events: list[Any], provider: str) -> list[list[int]]:
    """The streams in `events`, each as the indexes of its events, in order."""
    stream_format = spec(provider).stream_format
    if stream_format == "chat-chunks":
        return _chat_streams(events)
    from dtl_notebook.wire.stream_accumulators import RESPONSES_DONE

    starts = [0]
    opened = closed = False
    for i, event in enumerate(events):
        kind = _kind(event)
        if stream_format == "message-events":
            if kind == "message_start" and opened:
                starts.append(i)
            opened = opened or kind == "message_start"
        elif kind.startswith("response."):  # not error events, nor a client's own events
            if (kind == "response.created" and opened) or closed:
                starts.append(i)
            opened, closed = True, kind in RESPONSES_DONE
    ends = [*starts[1:], len(events)]
    return [list(range(a, b)) for a, b in zip(starts, ends, strict=True)]


def _chat_streams(events: list[Any]) -> list[list[int]]:
    """Chat chunks carry their completion's `id`: one stream per id, in the order the ids first
    appear (chunks of interleaved completions come apart); a chunk without an id stays with
    the one before it (and is named when it is validated). A choice that streams again after
    its `finish_reason` starts another completion of the same id (two runs logged one after
    the other by a server that reuses ids, or leaves them empty)."""
    groups: dict[Any, list[int]] = {}
    runs: dict[str, int] = {}  # id -> how many completions of that id have started
    finished: dict[Any, set[Any]] = {}  # (id, run) -> the choice indexes that finished
    key: Any = None
    for i, event in enumerate(events):
        found = event.get("id") if isinstance(event, dict) else None
        if isinstance(found, str):
            choices = [c for c in as_list(event.get("choices")) if isinstance(c, dict)]
            key = (found, runs.setdefault(found, 0))
            if {_index(c) for c in choices} & finished.get(key, set()):
                runs[found] += 1
                key = (found, runs[found])
            done = {_index(c) for c in choices if c.get("finish_reason") is not None}
            finished.setdefault(key, set()).update(done)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _index(choice: dict[str, Any]) -> Any:
    index = choice.get("index", 0)
    return index if isinstance(index, int) else repr(index)  # a bad one is named later


def _kind(event: Any) -> str:
    kind = event.get("type") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) else ""


def _describe(event: Any, provider: str) -> str:
    if spec(provider).stream_format != "chat-chunks":  # typed events
        return _kind(event) or "an event"
    return f"completion {event.get('id')!r}" if isinstance(event, dict) else "a chunk"
