"""Responses back to neutral: malformed input names the field; bad arguments never crash."""

from __future__ import annotations

from typing import Any

import pytest

from dtl_notebook import Session
from dtl_notebook.agent import DtlError
from dtl_notebook.wire import ResponseFormatError, parse_response
from tests.support.wire_requests import (
    anthropic_search_response,
    build_all,
    chat_body,
    doc_tools,
    responses_body,
)


def _anthropic(**changes: Any) -> dict:
    body = anthropic_search_response()
    body.update(changes)
    return body


def _tool_use(**fields: Any) -> dict:
    return {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}, **fields}


def _without(block: dict, key: str) -> dict:
    return {k: v for k, v in block.items() if k != key}


MALFORMED: list[tuple[str, Any, str, str]] = [
    # provider, response, field named, reason
    ("anthropic", {"role": "assistant"}, "content", "missing"),
    ("anthropic", _anthropic(content="Hello"), "content", "expected list, got str"),
    ("anthropic", _anthropic(content=[_without(_tool_use(), "id")]), "content.0.id", "missing"),
    ("anthropic", _anthropic(content=[_tool_use(name=7)]), "content.0.name", "expected str"),
    ("anthropic", _anthropic(content=[{"text": "no type"}]), "content.0.type", "missing"),
    ("anthropic", _anthropic(content=["just text"]), "content.0.type", "missing"),
    ("anthropic", _anthropic(content=[{"type": "text"}]), "content.0.text", "missing"),
    ("anthropic", _anthropic(usage=[1, 2]), "usage", "expected an object"),
    ("anthropic", "not a response", "<root>", "expected an object, got str"),
    ("openai-responses", {"id": "resp_1"}, "output", "missing"),
    ("openai-responses", {"output": {"type": "message"}}, "output", "expected list, got dict"),
    ("openai-responses", {"output": [{"id": "x"}]}, "output.0.type", "missing"),
    (
        "openai-responses",
        {"output": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
        "output.0.call_id",
        "missing",
    ),
    (
        "openai-responses",
        {"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
        "output.0.arguments",
        "expected str, got dict",
    ),
    (
        "openai-responses",
        {"output": [{"type": "message", "content": "hi"}]},
        "output.0.content",
        "expected list",
    ),
    (
        "openai-responses",
        {"output": [{"type": "message", "content": [{"type": "output_text"}]}]},
        "output.0.content.0.text",
        "missing",
    ),
    (
        "openai-responses",
        {"output": [{"type": "tool_search_call", "execution": "client", "arguments": {}}]},
        "output.0.call_id",
        "missing",
    ),
    (
        "openai-responses",
        {"output": [{"type": "tool_search_output", "tools": '[{"name": "get_weather"}]'}]},
        "output.0.tools",
        "expected list, got str",
    ),
    (
        "openai-responses",
        {
            "output": [
                {"type": "tool_search_call", "execution": "client", "call_id": "c", "arguments": 5}
            ]
        },
        "output.0.arguments",
        "expected dict, got int",
    ),
    ("openai-responses", {"output": [], "usage": "none"}, "usage", "expected an object"),
    ("openai-chat", {"id": "x"}, "choices", "missing"),
    ("openai-chat", {"choices": []}, "choices", "empty"),
    ("openai-chat", {"choices": [{"index": 0}]}, "choices.0.message", "missing"),
    ("openai-chat", {"choices": [{"message": "hi"}]}, "choices.0.message", "expected dict"),
    (
        "openai-chat",
        chat_body({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]}),
        "choices.0.message.tool_calls.0.function",
        "missing",
    ),
    (
        "openai-chat",
        chat_body({"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]}),
        "choices.0.message.tool_calls.0.function.arguments",
        "missing",
    ),
    (
        "openai-chat",
        chat_body(
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}
        ),
        "choices.0.message.tool_calls.0.id",
        "missing",
    ),
    ("kimi", {"choices": []}, "choices", "empty"),
]


@pytest.mark.parametrize(
    ("provider", "response", "field", "reason"),
    MALFORMED,
    ids=[f"{p}:{f}:{r}" for p, _, f, r in MALFORMED],
)
def test_malformed_response_names_the_field(
    provider: str, response: Any, field: str, reason: str
) -> None:
    with pytest.raises(ResponseFormatError) as info:
        parse_response(response, provider=provider)
    error = info.value
    assert error.provider == provider
    assert error.field == field
    assert reason in error.reason
    assert str(error) == f"malformed {provider} response at {field}: {error.reason}"
    assert isinstance(error, DtlError) and isinstance(error, ValueError)


INVALID_ARGUMENTS = [
    (
        "openai-responses",
        responses_body(
            [
                {
                    "type": "function_call",
                    "call_id": "call_bad",
                    "name": "get_weather",
                    "arguments": '{"location": "Par',
                }
            ]
        ),
        '{"location": "Par',
    ),
    (
        "openai-responses",
        responses_body(
            [
                {
                    "type": "function_call",
                    "call_id": "call_bad",
                    "name": "get_weather",
                    "arguments": '["Paris"]',
                }
            ]
        ),
        '["Paris"]',
    ),
    (
        "openai-chat",
        chat_body(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_bad",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "location=Paris"},
                    }
                ],
            }
        ),
        "location=Paris",
    ),
    (
        "kimi",
        chat_body(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_bad",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "null"},
                    }
                ],
            }
        ),
        "null",
    ),
    (
        "anthropic",
        {
            "content": [
                {"type": "tool_use", "id": "call_bad", "name": "get_weather", "input": "Paris"}
            ]
        },
        '"Paris"',
    ),
]


@pytest.mark.parametrize(
    ("provider", "response", "raw"), INVALID_ARGUMENTS, ids=[p for p, _, _ in INVALID_ARGUMENTS]
)
def test_invalid_arguments_become_an_error_result_not_a_crash(
    provider: str, response: dict, raw: str
) -> None:
    reply = parse_response(response, provider=provider)
    (call,) = reply.message.tool_calls
    assert call.id == "call_bad" and call.name == "get_weather"
    assert call.invalid_arguments == raw
    assert call.arguments == {}

    s = Session(tools=doc_tools(), active=["tool_search", "get_weather"])
    s.user("Weather in Paris?")
    s.append(reply.message)
    result = s.execute(call)
    assert result.is_error
    assert "not a JSON object" in result.text
    assert s.pending_calls() == []

    requests = build_all(s)  # the transcript still serializes (strictly valid) everywhere
    assert '"call_bad"' in requests["openai-responses"].json()
    assert '"call_bad"' in requests["openai-chat"].json()
    anthropic_result = requests["anthropic"].payload["messages"][-1]["content"][0]
    assert anthropic_result["is_error"] is True
    assert any("invalid JSON arguments" in n for n in requests["anthropic"].notes)


def test_raw_invalid_arguments_are_sent_back_as_they_came() -> None:
    raw = '{"location": "Par'
    reply = parse_response(
        responses_body(
            [{"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": raw}]
        ),
        provider="openai-responses",
    )
    s = Session(tools=doc_tools(), active=["tool_search", "get_weather"])
    s.user("x")
    s.append(reply.message)
    s.execute(s.pending_calls()[0])
    requests = build_all(s)
    calls = [
        i for i in requests["openai-responses"].payload["input"] if i.get("type") == "function_call"
    ]
    assert calls[0]["arguments"] == raw
    chat_calls = requests["openai-chat"].payload["messages"][-2]["tool_calls"]
    assert chat_calls[0]["function"]["arguments"] == raw
    tool_use = requests["anthropic"].payload["messages"][1]["content"][0]
    assert tool_use["input"] == {}


def test_empty_arguments_are_an_empty_object() -> None:
    reply = parse_response(
        chat_body(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
                ],
            }
        ),
        provider="openai-chat",
    )
    assert reply.message.tool_calls[0].arguments == {}
    assert reply.message.tool_calls[0].invalid_arguments is None


def test_unknown_blocks_are_kept_native_and_refusals_become_text() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    reply = parse_response({"content": [thinking]}, provider="anthropic")
    assert [b.data for b in reply.message.native_blocks] == [thinking]
    refusal = {
        "output": [
            {"type": "message", "content": [{"type": "refusal", "refusal": "I can't help."}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
        ]
    }
    reply = parse_response(refusal, provider="openai-responses")
    assert reply.message.text == "I can't help."
    assert [b.type for b in reply.message.native_blocks] == ["reasoning"]


@pytest.mark.parametrize(
    ("arguments", "query"),
    [('{"query": "weather", "limit": 3}', "weather"), ({"query": "weather"}, "weather")],
)
def test_client_tool_search_call_keeps_its_query_from_json_text_or_object(
    arguments: Any, query: str
) -> None:
    item = {"type": "tool_search_call", "execution": "client", "call_id": "ts1"}
    reply = parse_response(
        responses_body([{**item, "arguments": arguments}]), provider="openai-responses"
    )
    (call,) = reply.message.tool_calls
    assert (call.id, call.name, call.arguments["query"]) == ("ts1", "tool_search", query)


def test_client_tool_search_call_with_text_that_is_no_object_is_an_invalid_call() -> None:
    item = {"type": "tool_search_call", "execution": "client", "call_id": "ts1"}
    reply = parse_response(
        responses_body([{**item, "arguments": '{"query": "wea'}]), provider="openai-responses"
    )
    (call,) = reply.message.tool_calls
    assert call.invalid_arguments == '{"query": "wea'
