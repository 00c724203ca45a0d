"""Streamed responses parse like whole ones; capture files (JSONL, HAR, SDK pairs) audit per
provider; errors inside streams and captures are ProviderErrors, not crashes."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.agent.messages import NativePart
from dtl_notebook.cache.audit import CaptureError, audit_capture, audit_jsonl
from dtl_notebook.cache.capture import load_capture
from dtl_notebook.wire import (
    ProviderError,
    Reply,
    ResponseFormatError,
    parse_response,
    parse_responses,
)

# An excerpt (first, tool-call, finish and usage chunks) of a real OpenAI-compatible Chat
# Completions stream: vercel/ai packages/openai-compatible/src/chat/__fixtures__/
# xai-tool-call.chunks.txt
_XAI = (
    '"id":"7027d986-3c59-a37a-9a5f-50713e01c8a6","object":"chat.completion.chunk",'
    '"created":1770772296,"model":"grok-3-mini",'
)
XAI_CHUNKS = [
    json.loads("{" + _XAI + body + ',"system_fingerprint":"fp_2a885414fb"}')
    for body in (
        '"choices":[{"index":0,"delta":{"reasoning_content":"First","role":"assistant"}}]',
        '"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_79382389","function":'
        '{"name":"weather","arguments":"{\\"location\\":\\"San Francisco\\"}"},"index":0,'
        '"type":"function"}]}}]',
        '"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]',
        '"choices":[],"usage":{"prompt_tokens":307,"completion_tokens":26,"total_tokens":560,'
        '"prompt_tokens_details":{"text_tokens":307,"audio_tokens":0,"image_tokens":0,'
        '"cached_tokens":306},"completion_tokens_details":{"reasoning_tokens":227}}',
    )
]


@pytest.fixture
def anth_sdk(real_recordings: Path) -> Path:
    """anthropics/anthropic-sdk-python test snapshots."""
    return real_recordings / "anth_sdk"


@pytest.fixture
def vercel(real_recordings: Path) -> Path:
    """vercel/ai packages/{anthropic,openai}/src/**/__fixtures__."""
    return real_recordings / "vercel"


def _sse(events: list[dict[str, Any]], named: bool = True) -> str:
    frames = [
        (f"event: {e['type']}\n" if named and "type" in e else "") + f"data: {json.dumps(e)}\n\n"
        for e in events
    ]
    return "".join(frames)


def _calls(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in reply.message.tool_calls]


def _native_types(reply: Reply) -> list[Any]:
    return [p.block.data.get("type") for p in reply.message.content if isinstance(p, NativePart)]


# -- streams --------------------------------------------------------------------------------


def test_every_recorded_anthropic_exchange_parses(anth_sdk: Path) -> None:
    streamed = errors = 0
    for path in sorted(anth_sdk.glob("*.json")):
        for pair in json.loads(path.read_text()):
            body, status = pair["response"]["body"], pair["response"]["status_code"]
            if status >= 400:
                errors += 1
                with pytest.raises(ProviderError) as caught:
                    parse_response(body, "anthropic")
                assert caught.value.type == body["error"]["type"], path.name
                continue
            reply = parse_response(body, "anthropic")
            assert reply.message.content, path.name
            if isinstance(body, str):
                streamed += 1
                start = json.loads(body.split("data: ", 1)[1].split("\n", 1)[0])["message"]
                assert reply.usage["input_tokens"] == start["usage"]["input_tokens"]
                assert reply.stop_reason in ("end_turn", "tool_use")
                assert _calls(parse_response(body.encode(), "anthropic")) == _calls(reply)
                assert all(c.invalid_arguments is None for c in reply.message.tool_calls)
    assert streamed >= 4 and errors >= 4


def test_anthropic_sse_matches_the_final_message_of_the_same_stream(anth_sdk: Path) -> None:
    # TestSyncRunTools_555fb399: a streamed get_weather call, recorded from Claude Haiku 4.5
    pairs = json.loads(
        (anth_sdk / "TestSyncRunTools_555fb399-a54c-455b-9ac5-2c9673f18e12.json").read_text()
    )
    reply = parse_response(pairs[0]["response"]["body"], "anthropic")
    assert _calls(reply) == [("get_weather", {"location": "San Francisco, CA", "units": "f"})]
    assert reply.usage["output_tokens"] == 74  # from message_delta, which overrides message_start
    assert reply.message.model == "claude-haiku-4-5-20251001"


def _vercel_provider(path: Path) -> str:
    return "anthropic" if path.name.startswith("anthropic") else "openai-responses"


def test_vercel_chunks_parse_like_their_whole_responses(vercel: Path) -> None:
    # Some .chunks.txt hold every step of a multi-step run (one message_start … message_stop
    # per step): each stream is its own reply. `X.N.json` is step N of `X.chunks.txt`, or the
    # only step of `X.N.chunks.txt`; the two are separate runs of one scenario: the same calls
    # and native blocks, usage reported under the same names (figures may differ).
    compared = 0
    for chunks in sorted(vercel.glob("*.chunks.txt")):
        provider = _vercel_provider(chunks)
        text = chunks.read_text()
        events = [json.loads(line) for line in text.splitlines() if line.strip()]
        streamed = parse_responses(events, provider)
        assert [_calls(r) for r in parse_responses(text, provider)] == [_calls(r) for r in streamed]
        assert [_calls(r) for r in parse_responses(_sse(events), provider)] == [
            _calls(r) for r in streamed
        ]
        assert all(r.usage for r in streamed), chunks.name
        if len(streamed) > 1:
            with pytest.raises(ResponseFormatError, match="a second stream starts here"):
                parse_response(events, provider)
        stem = chunks.name.removesuffix(".chunks.txt")
        wholes = [(0, vercel / f"{stem}.json")] + [
            (n - 1, vercel / f"{stem}.{n}.json") for n in range(1, len(streamed) + 1)
        ]
        for step, whole in wholes:
            if not whole.exists():
                continue
            compared += 1
            reply, one = parse_response(json.loads(whole.read_text()), provider), streamed[step]
            assert [n for n, _ in _calls(one)] == [n for n, _ in _calls(reply)], whole.name
            assert _native_types(one) == _native_types(reply), whole.name
            assert one.loaded_tool_names == reply.loaded_tool_names, whole.name
            assert set(reply.usage) <= set(one.usage) | {"inference_geo"}, whole.name
    assert compared == 7


def test_openai_tool_search_stream_equals_its_whole_response(vercel: Path) -> None:
    # vercel/ai openai-tool-search.1: the stream's response.completed is the recorded response
    streamed = parse_response(
        (vercel / "openai-tool-search.1.chunks.txt").read_text(), "openai-responses"
    )
    whole = parse_response(
        json.loads((vercel / "openai-tool-search.1.json").read_text()), "openai-responses"
    )
    assert _calls(streamed) == _calls(whole)
    assert streamed.usage == whole.usage


@pytest.mark.parametrize("provider", ["openai-chat", "kimi"])
def test_chat_chunks_accumulate(provider: str) -> None:
    for form in (XAI_CHUNKS, _sse(XAI_CHUNKS, named=False) + "data: [DONE]\n\n"):
        reply = parse_response(form, provider)
        assert _calls(reply) == [("weather", {"location": "San Francisco"})]
        assert reply.message.tool_calls[0].id == "call_79382389"
        assert reply.stop_reason == "tool_calls"
        assert reply.usage["prompt_tokens_details"]["cached_tokens"] == 306


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=8))
def test_anthropic_text_deltas_add_up(pieces: list[str]) -> None:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 7},
        },
        {"type": "message_stop"},
    ]
    reply = parse_response(_sse(events).encode(), "anthropic")
    assert reply.message.text == "".join(pieces)
    assert reply.usage["output_tokens"] == 7 and reply.usage["input_tokens"] == 10


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=4), st.data())
def test_chat_tool_arguments_split_anywhere_add_up(arguments: dict[str, int], data: Any) -> None:
    raw = json.dumps(arguments)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=5)))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1"}
    chunks = [
        {
            **head,
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": ""},
                            }
                        ]
                    },
                }
            ],
        },
        *(
            {
                **head,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": p}}]},
                    }
                ],
            }
            for p in pieces
        ),
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    assert _calls(parse_response(chunks, "openai-chat")) == [("f", arguments)]


def test_error_events_in_streams_are_provider_errors() -> None:
    key = "sk-ant-api03-" + "z" * 32
    anthropic_stream = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        '"role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":1,'
        '"output_tokens":1}}}\n\n'
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        f'"message":"Overloaded {key}"}}}}\n\n'
    )
    with pytest.raises(ProviderError) as caught:
        parse_response(anthropic_stream, "anthropic")
    assert caught.value.type == "overloaded_error" and key not in str(caught.value)
    responses_stream = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None},
    ]
    with pytest.raises(ProviderError, match="rate_limit_exceeded") as caught:
        parse_response(responses_stream, "openai-responses")
    assert caught.value.message == "Slow down"
    chat_stream = (
        "data: "
        + json.dumps({"error": {"message": "server error", "type": "server_error"}})
        + "\n\n"
    )
    with pytest.raises(ProviderError, match="server_error"):
        parse_response(chat_stream, "openai-chat")


def test_a_stream_cut_short_is_named() -> None:
    with pytest.raises(ResponseFormatError, match="cut short"):
        parse_response([{"type": "response.created", "response": {}}], "openai-responses")
    with pytest.raises(ResponseFormatError, match="before message_start"):
        parse_response([{"type": "content_block_stop", "index": 0}], "anthropic")
    with pytest.raises(ResponseFormatError, match=r"event 0 .*not JSON"):
        parse_response('event: message_start\ndata: {"type": "mess\n\n', "anthropic")
    with pytest.raises(ResponseFormatError, match=r"<stream>\.0\.choices"):
        parse_response([{"id": "x", "object": "chat.completion.chunk"}], "openai-chat")


# -- captures -------------------------------------------------------------------------------


def test_sdk_pair_file_audits_with_its_429s_kept_as_errors(anth_sdk: Path) -> None:
    # TestAsyncStream_a8b7dbb8: two 429 rate-limit answers, then a streamed 200
    path = anth_sdk / "TestAsyncStream_a8b7dbb8-2321-4624-abdb-7ba2136b5c38.json"
    audit = audit_capture(path)
    assert list(audit.reports) == ["anthropic"]
    assert [(e.status, e.error.type) for e in audit.errors if e.error] == [
        (429, "rate_limit_error"),
        (429, "rate_limit_error"),
    ]
    assert "[0]" in audit.errors[0].source and path.name in audit.errors[0].source
    report = audit["anthropic"]
    assert len(report) == 1 and report[0].reported is not None
    assert report[0].reported.uncached == 135  # input_tokens of the streamed message_start


def _har(pairs: list[dict[str, Any]], encode: bool) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [
        {  # a page load in the same browser session: not a provider call, left out
            "request": {"method": "GET", "url": "https://console.anthropic.com/", "headers": []},
            "response": {"status": 200, "content": {"mimeType": "text/html", "text": "<html>"}},
        }
    ]
    for pair in pairs:
        request, response = pair["request"], pair["response"]
        body = response["body"]
        text = body if isinstance(body, str) else json.dumps(body)
        content: dict[str, Any] = {
            "mimeType": response["headers"].get("content-type", ""),
            "text": text,
        }
        if encode:
            content.update(text=base64.b64encode(text.encode()).decode(), encoding="base64")
        entries.append(
            {
                "request": {
                    "method": request["method"],
                    "url": request["url"],
                    "postData": {
                        "mimeType": "application/json",
                        "text": json.dumps(request["body"]),
                    },
                },
                "response": {"status": response["status_code"], "content": content},
            }
        )
    return {"log": {"version": "1.2", "creator": {"name": "test"}, "entries": entries}}


@pytest.mark.parametrize("encode", [False, True])
def test_a_har_of_the_recorded_pairs_audits_like_the_pair_file(
    anth_sdk: Path, tmp_path: Path, encode: bool
) -> None:
    # TestSyncRunTools_555fb399: two streamed turns of one conversation (Claude Haiku 4.5)
    path = anth_sdk / "TestSyncRunTools_555fb399-a54c-455b-9ac5-2c9673f18e12.json"
    har = tmp_path / "session.har"
    har.write_text(json.dumps(_har(json.loads(path.read_text()), encode)))
    from_pairs, from_har = audit_capture(path), audit_capture(har)
    assert list(from_har.reports) == ["anthropic"]
    expected = [(e.total_tokens, e.cached_tokens, e.reported) for e in from_pairs["anthropic"]]
    assert [(e.total_tokens, e.cached_tokens, e.reported) for e in from_har["anthropic"]] == (
        expected
    )
    assert len(expected) == 2 and expected[1][2] is not None
    assert [e.source for e in load_capture(har)] == [
        "session.har: log.entries[1]",
        "session.har: log.entries[2]",
    ]


def test_a_mixed_jsonl_gives_one_report_per_provider(vercel: Path, tmp_path: Path) -> None:
    anthropic_response = json.loads((vercel / "anthropic-tool-search-bm25.1.json").read_text())
    chat_stream = _sse(XAI_CHUNKS, named=False) + "data: [DONE]\n\n"
    lines = [
        {
            "request": {
                "model": "claude-sonnet-4-5",
                "max_tokens": 100,
                "system": "Be brief.",
                "messages": [{"role": "user", "content": "weather in SF?"}],
            },
            "response": anthropic_response,
        },
        {
            "request": {
                "method": "POST",
                "url": "https://api.x.ai/v1/chat/completions",
                "body": {
                    "model": "grok-3-mini",
                    "messages": [{"role": "user", "content": "weather in SF?"}],
                },
            },
            "response": {"status_code": 200, "body": chat_stream},
        },
        {
            "request": {
                "model": "claude-sonnet-4-5",
                "max_tokens": 100,
                "system": "Be brief.",
                "messages": [
                    {"role": "user", "content": "weather in SF?"},
                    {"role": "assistant", "content": "Sunny."},
                    {"role": "user", "content": "And tomorrow?"},
                ],
            }
        },
        {
            "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
            "response": {
                "status_code": 429,
                "body": {
                    "error": {
                        "message": "Rate limit reached",
                        "type": "requests",
                        "code": "rate_limit_exceeded",
                    }
                },
            },
        },
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    audit = audit_capture(path)
    assert sorted(audit.reports) == ["anthropic", "openai-chat"]
    assert len(audit["anthropic"]) == 2 and len(audit["openai-chat"]) == 1
    assert audit["openai-chat"][0].reported is not None
    assert audit["openai-chat"][0].reported.cached == 306
    assert [(e.source, e.status, e.error.type) for e in audit.errors if e.error] == [
        (f"{path}:4", 429, "requests")
    ]
    with pytest.raises(CaptureError, match=r"several providers .*audit_capture"):
        audit_jsonl(path)
    assert len(audit_jsonl(path, provider="anthropic")) == 3  # explicit: all read as anthropic


@pytest.mark.parametrize(
    ("document", "named"),
    [
        (
            {
                "log": {
                    "entries": [
                        {
                            "request": {
                                "method": "POST",
                                "url": "https://api.openai.com/v1/responses",
                                "postData": {"text": '{"model": '},
                            },
                            "response": {"status": 200, "content": {}},
                        }
                    ]
                }
            },
            r"bad.har: log.entries\[0\].request.postData.text: not JSON",
        ),
        (
            {
                "log": {
                    "entries": [
                        {
                            "request": {
                                "method": "POST",
                                "url": "https://api.openai.com/v1/responses",
                            }
                        }
                    ]
                }
            },
            r"log.entries\[0\].request.postData.text: missing",
        ),
        (
            [
                {
                    "request": {
                        "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages",
                        "body": {"model": "claude-haiku-4-5", "messages": []},
                    },
                    "response": {"status_code": "429", "body": {}},
                }
            ],
            r"bad.har: \[0\].response.status_code: expected an HTTP status number",
        ),
        (
            [
                {
                    "request": {
                        "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages",
                        "body": {"messages": []},
                    },
                    "response": None,
                }
            ],
            r"\[0\]: request model: missing",
        ),
        (
            [
                {
                    "request": {
                        "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages",
                        "body": {"model": "claude-haiku-4-5", "messages": []},
                    },
                    "response": {"status_code": 200, "body": "<html>oops</html>"},
                }
            ],
            r"\[0\]: response <root>: .*not JSON .*<html>oops",
        ),
    ],
)
def test_malformed_captures_name_file_entry_and_field(
    tmp_path: Path, document: Any, named: str
) -> None:
    path = tmp_path / "bad.har"
    path.write_text(json.dumps(document))
    with pytest.raises(CaptureError, match=named):
        load_capture(path)


def test_an_html_error_page_in_a_capture_is_a_provider_error(tmp_path: Path) -> None:
    path = tmp_path / "gateway.json"
    path.write_text(
        json.dumps(
            [
                {
                    "request": {
                        "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages",
                        "body": {"model": "claude-haiku-4-5", "max_tokens": 5, "messages": []},
                    },
                    "response": {
                        "status_code": 502,
                        "body": "<html><title>502 Bad Gateway</title></html>",
                    },
                }
            ]
        )
    )
    (exchange,) = load_capture(path)
    assert exchange.error is not None and exchange.error.status == 502
    assert "502 Bad Gateway" in str(exchange.error) and exchange.response is None


def test_kimi_stream_usage_in_the_last_choice_is_kept() -> None:
    # Moonshot's streaming shape: the final chunk carries usage inside choices[0]
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "kimi-k2"}
    usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11, "cached_tokens": 8}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}]},
    ]
    reply = parse_response(chunks, "kimi")
    assert reply.message.text == "Hi" and reply.usage == usage
