"""A provider's error body is named as an error, not as a malformed response."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook.wire import ProviderErrorResponse, ResponseFormatError, parse_response

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real" / "anth_sdk"


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


def test_real_anthropic_error_bodies_are_named() -> None:
    if not REAL.is_dir():
        pytest.skip("shared/fixtures/real is not here")
    bodies = [
        b for f in sorted(REAL.glob("*.json")) for b in _error_bodies(json.loads(f.read_text()))
    ]
    if not bodies:
        pytest.skip("no recorded error body in the fixtures")
    for body in bodies:
        with pytest.raises(ProviderErrorResponse) as caught:
            parse_response(body, "anthropic")
        assert caught.value.kind == body["error"]["type"]
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
    with pytest.raises(ProviderErrorResponse, match="returned an error") as caught:
        parse_response(body, provider)
    assert isinstance(caught.value, ResponseFormatError)  # callers catching the old error still do
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
    with pytest.raises(ProviderErrorResponse) as caught:
        parse_response(body, "anthropic")
    assert key not in str(caught.value)
    assert key not in caught.value.message
    assert "[redacted]" in str(caught.value)
