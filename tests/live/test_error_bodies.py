"""A provider's error body is named as an error (ProviderError), not as a malformed response;
a body that is not JSON is a clear ResponseFormatError showing its start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook.live import ProviderError as LiveProviderError
from dtl_notebook.wire import ProviderError, ResponseFormatError, parse_response


def _error_bodies(value: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(value, dict):
        if value.get("type") == "error" and isinstance(value.get("error"), dict):
            found.append(value)
        for inner in value.values():
            found += _error_bodies(inner)
    elif isinstance(value, list):
        for inner in value:
            found += _error_bodies(inner)
    return found


def test_real_anthropic_error_bodies_are_named(real_recordings: Path) -> None:
    # anthropics/anthropic-sdk-python test snapshots: their 429 rate-limit answers
    files = sorted((real_recordings / "anth_sdk").glob("*.json"))
    bodies = [b for f in files for b in _error_bodies(json.loads(f.read_text()))]
    assert bodies, "the recordings hold error bodies"
    for body in bodies:
        with pytest.raises(ProviderError) as caught:
            parse_response(body, "anthropic")
        assert caught.value.type == body["error"]["type"]
        assert caught.value.provider == "anthropic" and caught.value.status is None
        assert "returned an error" in str(caught.value)
        assert body["error"]["message"][:40] in str(caught.value)


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (
            "openai-responses",
            {
                "error": {
                    "message": "Rate limit reached",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
        ),
        (
            "openai-chat",
            {
                "error": {
                    "message": "Invalid 'tools[0]'",
                    "type": "invalid_request_error",
                    "param": "tools[0]",
                    "code": None,
                }
            },
        ),
        ("kimi", {"error": {"message": "bad", "type": "invalid_request_error"}}),
    ],
)
def test_openai_style_error_bodies(provider: str, body: dict[str, Any]) -> None:
    with pytest.raises(ProviderError, match="returned an error") as caught:
        parse_response(body, provider)
    assert caught.value.provider == provider
    assert caught.value.type == (body["error"]["type"] or body["error"]["code"])
    assert caught.value.message == body["error"]["message"]
    assert body["error"]["message"] in str(caught.value)


def test_a_failed_response_object_is_not_an_error_body() -> None:
    # A Responses object always carries an `error` field (null, or set when status is failed);
    # it is a response, parsed as one.
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "error": None,
        "output": [],
        "model": "gpt-5.4",
    }
    reply = parse_response(response, "openai-responses")
    assert reply.message.tool_calls == []


def test_a_key_echoed_in_an_error_body_is_masked() -> None:
    key = "sk-ant-api03-" + "x" * 40
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": f"invalid x-api-key: {key}"},
    }
    with pytest.raises(ProviderError) as caught:
        parse_response(body, "anthropic")
    assert key not in str(caught.value)
    assert key not in caught.value.message
    assert "[redacted]" in str(caught.value)


def test_one_provider_error_class_for_wire_and_transport() -> None:
    assert LiveProviderError is ProviderError
    error = ProviderError("anthropic", "Overloaded", 529, "overloaded_error")
    assert (error.provider, error.status, error.type, error.message) == (
        "anthropic",
        529,
        "overloaded_error",
        "Overloaded",
    )
    assert str(error) == "anthropic returned an error (HTTP 529, overloaded_error): Overloaded"


def test_a_key_in_a_transport_error_message_is_masked() -> None:
    key = "sk-proj-" + "A" * 30
    error = ProviderError("openai-chat", f"Incorrect API key provided: {key}", 401)
    assert key not in str(error) and key not in error.message


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (b"<html><head><title>502 Bad Gateway</title></head></html>", "502 Bad Gateway"),
        ("", "empty str"),
        ('{"id": "msg_1", "type": "message", "content": [{"type": "te', "msg_1"),
        ("Internal error for key sk-ant-api03-" + "k" * 30, "[redacted]"),
    ],
)
@pytest.mark.parametrize("provider", ["anthropic", "openai-responses", "openai-chat"])
def test_a_body_that_is_not_json_is_named_with_its_start(
    provider: str, body: str | bytes, shown: str
) -> None:
    with pytest.raises(ResponseFormatError) as caught:
        parse_response(body, provider)
    text = str(caught.value)
    assert provider in text and shown in text
    assert "sk-ant-api03-kkkk" not in text
    assert not isinstance(caught.value.__cause__, json.JSONDecodeError)


def test_json_text_and_bytes_parse_like_the_dict() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hi"},
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
    for form in (json.dumps(body), json.dumps(body).encode()):
        reply = parse_response(form, "openai-chat")
        assert reply.message.text == "hi" and reply.usage == body["usage"]
