"""Bad and unusual captures and replies: several streams in one text, streams cut short,
bytes that are not UTF-8, JSON too deep, error bodies of OpenAI-compatible servers, refusals,
and what the view and the audit make of a capture (one provider detection, refused requests
outside the cache sequence, keys masked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.cache import audit_capture, load_capture
from dtl_notebook.cache.audit import CaptureError
from dtl_notebook.notebook.records import from_capture
from dtl_notebook.wire import ProviderError, ResponseFormatError, parse_response, parse_responses
from tests.cache.test_stream_capture import XAI_CHUNKS, _calls, _sse
from tests.support.real_recordings import need_real, real_root

# the real recordings (tests/support/real_recordings.py): where absent, the tests reading them skip
REAL = real_root() or Path("real-recordings-absent")
VERCEL = REAL / "vercel"
ANTH_SDK = REAL / "anth_sdk"
CLAUDE_TAP = REAL / "claude-tap"  # liaohch3/claude-tap tests/fixtures: real Codex traces


def _need(folder: Path) -> None:
    need_real()
    assert folder.is_dir(), f"{folder} is missing from the real recordings"


KEY = "sk-proj-" + "Q" * 32
ANTHROPIC_BODY = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "system": "Be brief.",
    "messages": [{"role": "user", "content": "weather in SF?"}],
}


def _stream_files() -> list[Path]:
    _need(VERCEL)
    return sorted(VERCEL.glob("*.chunks.txt"))


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _provider(path: Path) -> str:
    return "anthropic" if path.name.startswith("anthropic") else "openai-responses"


def _write(tmp_path: Path, lines: list[Any], name: str = "capture.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


# -- several streams in one text ---------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_n_real_streams_concatenated_parse_to_n_replies(data: Any) -> None:
    files = [f for f in _stream_files() if len(parse_responses(_events(f), _provider(f))) == 1]
    provider = data.draw(st.sampled_from(["anthropic", "openai-responses"]))
    mine = [f for f in files if _provider(f) == provider]
    chosen = data.draw(st.lists(st.sampled_from(mine), min_size=1, max_size=4))
    events = [e for f in chosen for e in _events(f)]
    form = data.draw(st.sampled_from(["events", "sse", "lines"]))
    body: Any = {
        "events": events,
        "sse": _sse(events),
        "lines": "\n".join(json.dumps(e) for e in events),
    }[form]
    replies = parse_responses(body, provider)
    alone = [parse_response(_events(f), provider) for f in chosen]
    assert [_calls(r) for r in replies] == [_calls(r) for r in alone]
    assert [r.usage for r in replies] == [r.usage for r in alone]
    if len(chosen) > 1:
        with pytest.raises(ResponseFormatError, match=r"<stream>\.\d+: a second stream"):
            parse_response(body, provider)


def test_two_responses_streams_are_two_replies_not_the_last() -> None:
    _need(VERCEL)
    # vercel/ai openai-client-tool-search.1 and .2: a client tool search, then the call it loaded
    first, second = (_events(VERCEL / f"openai-client-tool-search.{n}.chunks.txt") for n in (1, 2))
    replies = parse_responses(first + second, "openai-responses")
    assert [[c.name for c in r.message.tool_calls] for r in replies] == [
        ["tool_search"],
        ["get_weather"],
    ]
    with pytest.raises(ResponseFormatError, match=f"<stream>.{len(first)}: .*response.created"):
        parse_response(first + second, "openai-responses")


def _chat_chunks(completion: str, call: str, city: str) -> list[dict[str, Any]]:
    text = json.dumps(XAI_CHUNKS).replace("call_79382389", call).replace("San Francisco", city)
    return [{**chunk, "id": completion} for chunk in json.loads(text)]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=7, max_size=7))  # the 7 chunks after the first
def test_interleaved_chat_completions_come_apart_by_id(order: list[bool]) -> None:
    one, two = _chat_chunks("c-1", "call_a", "Oslo"), _chat_chunks("c-2", "call_b", "Lima")
    mixed = [two.pop(0)]  # c-2 starts first: replies come in the order ids first appear
    for pick_one in order:  # the rest interleaved as `order` says, each in its own order
        source = one if (pick_one and one) or not two else two
        mixed.append(source.pop(0))
    replies = parse_responses(mixed, "openai-chat")
    assert [_calls(r) for r in replies] == [
        [("weather", {"location": "Lima"})],
        [("weather", {"location": "Oslo"})],
    ]
    assert [r.message.tool_calls[0].id for r in replies] == ["call_b", "call_a"]
    with pytest.raises(ResponseFormatError, match=r"a second stream starts here .*completion"):
        parse_response(mixed, "openai-chat")


@pytest.mark.parametrize("completion", ["c-1", ""])
def test_two_chat_completions_of_one_id_one_after_the_other_are_two_replies(
    completion: str,
) -> None:
    one = _chat_chunks(completion, "call_a", "Oslo")
    two = _chat_chunks(completion, "call_b", "Lima")  # a server that reuses (or leaves out) ids
    replies = parse_responses(one + two, "openai-chat")
    assert [_calls(r) for r in replies] == [
        [("weather", {"location": "Oslo"})],
        [("weather", {"location": "Lima"})],
    ]
    with pytest.raises(ResponseFormatError, match=f"<stream>.{len(one)}: a second stream"):
        parse_response(one + two, "openai-chat")


def test_two_streams_in_one_captured_reply_are_named(tmp_path: Path) -> None:
    _need(VERCEL)
    text = (VERCEL / "anthropic-tool-search-bm25.1.chunks.txt").read_text()  # two steps
    path = _write(tmp_path, [{"request": ANTHROPIC_BODY, "response": text}])
    with pytest.raises(CaptureError, match=r"capture.jsonl:1: response <stream>\.\d+: a second"):
        load_capture(path)


def test_a_websocket_trace_gives_one_exchange_per_response_create() -> None:
    _need(CLAUDE_TAP)
    # three response.create events over one socket (a generate:false prefetch, a tool call,
    # the final answer), answered by three streams
    exchanges = load_capture(CLAUDE_TAP / "codex_ws_multi_response_trace.jsonl")
    assert [e.response["id"] for e in exchanges if e.response] == [
        "resp_prefetch",
        "resp_tool",
        "resp_final",
    ]
    assert [e.request.get("previous_response_id") for e in exchanges] == [
        None,
        "resp_prefetch",
        "resp_tool",
    ]
    audit = audit_capture(CLAUDE_TAP / "codex_ws_multi_response_trace.jsonl")
    assert [e.reported.input for e in audit["openai-responses"] if e.reported] == [10, 20, 30]
    (single,) = load_capture(CLAUDE_TAP / "openai_responses_trace.jsonl")
    assert single.response is not None and single.response["usage"]["input_tokens"] == 500


# -- streams cut short -------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_every_real_stream_cut_before_its_end_is_refused(data: Any) -> None:
    path = data.draw(st.sampled_from(_stream_files()))
    provider = _provider(path)
    events = _events(path)
    ends = [i for i, e in enumerate(events) if e["type"] in ("message_stop", "response.completed")]
    cut = data.draw(st.integers(1, ends[0]))  # the first stream, without its terminal event
    terminal = "message_stop" if provider == "anthropic" else "response.completed"
    with pytest.raises(ResponseFormatError, match=f"no {terminal} event .*cut short") as caught:
        parse_response(_sse(events[:cut]), provider)
    assert caught.value.field == "<stream>"


def test_a_chat_stream_without_a_finish_reason_is_cut_short() -> None:
    cut = [c for c in XAI_CHUNKS if not c["choices"] or "finish_reason" not in c["choices"][0]]
    with pytest.raises(ResponseFormatError, match=r"no chunk with a finish_reason .*cut short"):
        parse_response(cut, "openai-chat")


# -- bytes and JSON the reader cannot take ----------------------------------------------------


def test_a_byte_that_is_not_utf8_is_named_by_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(json.dumps(ANTHROPIC_BODY).encode() + b'\n{"model": "caf\xe9"}\n')
    with pytest.raises(CaptureError, match=r"log.jsonl:2: not UTF-8: byte 0xe9 at offset \d+"):
        load_capture(path)


@pytest.mark.parametrize("depth", [300, 100_000])
def test_json_nested_too_deep_is_named(tmp_path: Path, depth: int) -> None:
    body = '{"model": "gpt-4.1", "messages": [], "metadata": ' + "[" * depth + "]" * depth + "}"
    path = tmp_path / "deep.jsonl"
    path.write_text(body)
    with pytest.raises(CaptureError, match="deep"):
        load_capture(path)


def test_a_pretty_printed_request_or_pair_is_read(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(ANTHROPIC_BODY, indent=2))
    (exchange,) = load_capture(path)
    assert exchange.request == ANTHROPIC_BODY and exchange.provider == "anthropic"
    path.write_text(json.dumps({"request": ANTHROPIC_BODY, "response": None}, indent=2))
    assert [e.request for e in load_capture(path)] == [ANTHROPIC_BODY]


_KEYS = [
    *("model", "messages", "content", "tools", "request", "response", "usage", "input"),
    *("type", "role", "text", "tool_use_id", "name", "id", "system", "tool_calls"),
    *("function", "arguments", "input_tokens", "prompt_tokens", "choices", "message"),
    *("output", "tool_references", "tool_name", "defer_loading", "log", "entries", "body"),
]
_WORDS = ["user", "assistant", "text", "tool_use", "tool_result", "tool_search_tool_result"]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([*_WORDS, "message"]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), kids),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_exchanges_or_a_named_error(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "capture.jsonl"
    path.write_bytes(data)
    try:
        exchanges = load_capture(path)
    except DtlError:
        return
    assert all(isinstance(e.request.get("model"), str) for e in exchanges)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["claude-sonnet-4-5", "gpt-4.1"]),
    st.dictionaries(st.sampled_from(_KEYS), _JSON),
    _JSON,
)
def test_any_json_pair_audits_or_gives_a_named_error(
    tmp_path_factory: Any, model: str, body: dict[str, Any], response: Any
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "capture.jsonl"
    path.write_text(json.dumps({"request": {**body, "model": model}, "response": response}))
    try:
        audit = audit_capture(path)
    except DtlError:
        return
    assert len(audit.exchanges) == 1


# -- requests and usage that are not what the renderers walk -----------------------------------


_SEARCH_RESULT = {"type": "tool_search_tool_result", "tool_use_id": "s1", "content": "x"}


def _result_of(name: Any) -> dict[str, Any]:
    reference = {"type": "tool_reference", "tool_name": name}
    return {"type": "tool_result", "tool_use_id": "c1", "content": [reference]}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"messages": ["hi"]}, r"request messages\[0\]: expected an object, got 'hi'"),
        ({"tools": ["get_weather"]}, r"request tools\[0\]: expected an object, got 'get_weather'"),
        (
            {"messages": [{"role": "user", "content": [5]}]},
            r"request messages\[0\].content\[0\]: expected an object, got int 5",
        ),
        ({"system": [None]}, r"request system\[0\]: expected an object, got NoneType"),
        ({"tool_choice": 3}, r"request tool_choice: expected an object or a string, got int 3"),
        (
            {"messages": [{"role": "assistant", "content": [_SEARCH_RESULT]}]},
            r"request messages\[0\].content\[0\].content: expected an object, got 'x'",
        ),
        (
            {"messages": [{"role": "user", "content": [_result_of(["f"])]}]},
            r"request messages\[0\].content\[0\].content\[0\].tool_name: expected a string, "
            r"got list \['f'\]",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "ab\udcff"}]}]},
            r"request messages.0.content.0.text: holds a lone surrogate '\\udcff' at position 2",
        ),
        (
            {"tools": [{"name": "f", "description": "\udcff", "input_schema": {}}]},
            r"request tools.0.description: holds a lone surrogate",
        ),
    ],
)
def test_a_captured_request_that_is_not_objects_is_named(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    path = _write(tmp_path, [{**ANTHROPIC_BODY, **change}])
    with pytest.raises(CaptureError, match=f"capture.jsonl:1: {named}"):
        audit_capture(path)


def _reply(usage: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic message answering ANTHROPIC_BODY, with `usage`."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Sunny."}],
        "usage": usage,
    }


@pytest.mark.parametrize("value", ["abc", "12", -1, True, [1]])
def test_a_usage_count_that_is_not_a_number_is_named(tmp_path: Path, value: Any) -> None:
    response = _reply({"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": value})
    path = _write(tmp_path, [{"request": ANTHROPIC_BODY, "response": response}])
    with pytest.raises(CaptureError, match=r"usage.cache_read_input_tokens: expected a token"):
        audit_capture(path)


def test_a_pair_whose_response_is_sse_text_is_read(tmp_path: Path) -> None:
    _need(ANTH_SDK)
    # TestSyncRunTools_555fb399: the streamed body of a recorded get_weather turn
    pair = json.loads(
        (ANTH_SDK / "TestSyncRunTools_555fb399-a54c-455b-9ac5-2c9673f18e12.json").read_text()
    )[0]
    path = _write(
        tmp_path, [{"request": pair["request"]["body"], "response": pair["response"]["body"]}]
    )
    (exchange,) = load_capture(path)
    assert exchange.response is not None
    assert exchange.response["content"][-1]["name"] == "get_weather"


# -- the view and the audit agree ---------------------------------------------------------------


def test_a_kimi_har_is_kimi_in_the_view_and_the_audit(tmp_path: Path) -> None:
    body = {"model": "kimi-k2-0905-preview", "messages": [{"role": "user", "content": "hi"}]}
    reply = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "kimi-k2-0905-preview",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello"},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 8,
            "completion_tokens": 1,
            "total_tokens": 9,
            "cached_tokens": 0,
        },
    }
    entry = {
        "request": {
            "method": "POST",
            "url": "https://api.moonshot.ai/v1/chat/completions",
            "postData": {"text": json.dumps(body)},
        },
        "response": {"status": 200, "content": {"text": json.dumps(reply)}},
    }
    path = tmp_path / "kimi.har"
    path.write_text(json.dumps({"log": {"entries": [entry]}}))
    assert list(audit_capture(path).reports) == ["kimi"]
    assert [r.provider for r in from_capture(path)] == ["kimi"]
    answered = audit_capture(path)["kimi"][0]
    assert answered.reported is not None and answered.reported.cached == 0  # Kimi's own field
    aborted = {**entry, "response": {"status": 0, "content": {"text": ""}}}  # no response came
    path.write_text(json.dumps({"log": {"entries": [aborted, entry]}}))
    first, second = load_capture(path)
    assert (first.response, first.error, second.error) == (None, None, None)


def test_refused_requests_stay_listed_but_out_of_the_cache_sequence() -> None:
    _need(ANTH_SDK)
    # TestAsyncStream_a8b7dbb8: two 429 rate-limit answers, then the same request streamed
    path = ANTH_SDK / "TestAsyncStream_a8b7dbb8-2321-4624-abdb-7ba2136b5c38.json"
    records = from_capture(path)
    assert [r.label for r in records] == ["captured, refused", "captured, refused", "captured"]
    assert all("rate_limit_error" in r.notes[0] for r in records[:2])
    assert all(r.cache.cached_tokens == r.cache.written_tokens == 0 for r in records[:2])
    answered = audit_capture(path)["anthropic"][0]
    assert (records[2].cache.index, records[2].cache.reported) == (0, answered.reported)
    assert records[2].cache.written_tokens == answered.written_tokens


def test_captured_bodies_are_masked_in_repr(tmp_path: Path) -> None:
    body = {**ANTHROPIC_BODY, "metadata": {"user_id": KEY}}
    error = {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}
    path = _write(
        tmp_path,
        [
            {"request": body, "response": None},
            {"request": body, "response": {"status_code": 401, "body": error}},
        ],
    )
    audit = audit_capture(path)
    for shown in (repr(audit.exchanges), repr(audit), str(audit.errors)):
        assert KEY not in shown
    assert "[redacted]" in repr(audit.exchanges)
    assert audit.exchanges[0].request["metadata"]["user_id"] == KEY  # the data itself is kept


# -- replies --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message", "kind"),
    [
        (  # vLLM's error body (vllm/entrypoints/openai/protocol.py ErrorResponse)
            {
                "object": "error",
                "message": "The model `x` does not exist.",
                "type": "NotFoundError",
                "param": None,
                "code": 404,
            },
            "The model `x` does not exist.",
            "NotFoundError",
        ),
        ({"error": f"Invalid API key {KEY}"}, "Invalid API key [redacted]", "error"),
        ({"object": "error", "code": 400}, "an error object without a message", "400"),
        ({"detail": "Not Found"}, "Not Found", "detail"),  # FastAPI's own 404 body
        (  # a gateway's error with keys of its own beside the error object
            {
                "error": {"message": "Upstream timed out", "type": "timeout", "code": None},
                "request_id": "req_1",
                "provider": "openai",
                "metadata": {"retries": 2},
            },
            "Upstream timed out",
            "timeout",
        ),
        (  # an error object whose text sits under another key: shown, not dropped
            {"error": {"msg": "quota exceeded", "code": 429}, "request_id": "req_2"},
            """an error object without a message: '{"msg": "quota exceeded", "code": 429}'""",
            "429",
        ),
    ],
)
def test_openai_compatible_error_bodies_are_the_servers_error(
    body: dict[str, Any], message: str, kind: str
) -> None:
    for provider in ("openai-chat", "kimi"):
        with pytest.raises(ProviderError) as caught:
            parse_response(body, provider)
        assert (caught.value.message, caught.value.type) == (message, kind)
        assert KEY not in str(caught.value) and "choices" not in str(caught.value)


def _response(**fields: Any) -> dict[str, Any]:
    base = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5.4",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    return Response.model_validate({**base, **fields}).model_dump(mode="json")


def test_a_failed_responses_body_is_the_provider_error() -> None:
    failed = _response(status="failed", error={"code": "server_error", "message": "boom"})
    with pytest.raises(ProviderError, match="server_error") as caught:
        parse_response(failed, "openai-responses")
    assert caught.value.message == "boom"
    stream = [
        {"type": "response.created", "response": {**failed, "status": "in_progress"}},
        {"type": "response.failed", "response": failed},
    ]
    with pytest.raises(ProviderError, match="boom"):
        parse_response(stream, "openai-responses")


def test_a_failed_responses_body_whose_error_is_text_keeps_it() -> None:
    failed = {**_response(), "status": "failed", "error": "boom"}
    with pytest.raises(ProviderError) as caught:
        parse_response(failed, "openai-responses")
    assert caught.value.message == "boom"


def test_an_incomplete_responses_body_keeps_why() -> None:
    details = {"reason": "max_output_tokens"}
    reply = parse_response(
        _response(status="incomplete", incomplete_details=details), "openai-responses"
    )
    assert (reply.stop_reason, reply.incomplete_details) == ("incomplete", details)


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
        ],
    }
    return body


def test_a_chat_refusal_is_kept() -> None:
    body = ChatCompletion.model_validate(
        _completion({"content": None, "refusal": "I can't help with that."})
    )
    reply = parse_response(body, "openai-chat")
    assert reply.refusal == reply.message.text == "I can't help with that."
    both = parse_response(_completion({"content": "Partly", "refusal": "I can't."}), "openai-chat")
    assert (both.message.text, both.refusal) == ("Partly\nI can't.", "I can't.")


def test_a_reply_with_text_that_is_not_unicode_names_where() -> None:
    body = {
        "id": "m1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}, {"type": "text", "text": "ab\udcff"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    with pytest.raises(ResponseFormatError, match=r"at content.1.text: holds a lone surrogate"):
        parse_response(json.dumps(body), "anthropic")
    with pytest.raises(ResponseFormatError, match=r"at choices.0.message.content: holds a lone"):
        parse_response(json.dumps(_completion({"content": "\udcff"})), "openai-chat")


def test_chat_content_as_a_list_of_text_parts_keeps_the_text() -> None:
    parts = [{"type": "text", "text": "Sunny "}, {"type": "text", "text": "in Oslo."}]
    reply = parse_response(_completion({"content": parts}), "openai-chat")
    assert reply.message.text == "Sunny in Oslo."
    with pytest.raises(ResponseFormatError, match=r"choices.0.message.content.1.text"):
        parse_response(_completion({"content": [parts[0], {"type": "text"}]}), "openai-chat")


@pytest.mark.parametrize("status", [302, 429, 503])
def test_any_status_outside_2xx_is_a_refusal(tmp_path: Path, status: int) -> None:
    answered = {"request": ANTHROPIC_BODY, "response": None}
    refused = {"request": ANTHROPIC_BODY, "response": {"status_code": status, "body": "moved"}}
    path = _write(tmp_path, [answered, refused])
    audit = audit_capture(path)
    assert [e.status for e in audit.errors] == [status] and len(audit["anthropic"]) == 1
    assert [r.label for r in from_capture(path)] == ["captured", "captured, refused"]


@pytest.mark.parametrize("method", ["POST", "post", "Post"])
def test_a_har_entry_posted_in_any_case_is_read(tmp_path: Path, method: str) -> None:
    reply = _reply({"input_tokens": 9, "output_tokens": 2})
    entry = {
        "request": {
            "method": method,
            "url": "https://api.anthropic.com/v1/messages",
            "postData": {"mimeType": "application/json", "text": json.dumps(ANTHROPIC_BODY)},
        },
        "response": {"status": 200, "content": {"text": json.dumps(reply)}},
    }
    gets = {**entry, "request": {**entry["request"], "method": "get"}}
    path = tmp_path / "trace.har"
    path.write_text(json.dumps({"log": {"entries": [entry, gets]}}))
    (exchange,) = load_capture(path)
    assert exchange.request == ANTHROPIC_BODY and exchange.response == reply
