"""Streaming bodies, Anthropic beta bodies, the betas a request needs, and the beta header."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook import Session
from dtl_notebook.wire import WireRequest, build_request
from dtl_notebook.wire.betas import (
    BLOCK_BETAS,
    SYSTEM_MESSAGE_BETAS,
    TOP_LEVEL_BETAS,
    sdk_beta_names,
)
from dtl_notebook.wire.validate import WireValidationError, required_betas, validate_payload

USER = {"role": "user", "content": "Hello"}


def _recorded_stream_bodies(real: Path) -> list[tuple[str, dict[str, Any]]]:
    """Streamed requests recorded by anthropics/anthropic-sdk-python (tests/lib/... snapshots)."""
    bodies = []
    for file in sorted((real / "anth_sdk").glob("*.json")):
        for exchange in json.loads(file.read_text()):
            body = exchange["request"]["body"]
            body = json.loads(body) if isinstance(body, str) else body
            if isinstance(body, dict) and body.get("stream") is True:
                bodies.append((file.name, body))
    return bodies


def test_recorded_streaming_anthropic_requests_validate(real_recordings: Path) -> None:
    bodies = _recorded_stream_bodies(real_recordings)
    assert bodies, "the fixtures hold streamed requests"
    for name, body in bodies:
        validate_payload(body, "anthropic")  # MessageCreateParamsStreaming
        broken = {**body, "stream": "yes"}
        with pytest.raises(WireValidationError) as info:
            validate_payload(broken, "anthropic")
        assert info.value.path == "stream", name


def test_streaming_bodies_for_all_three_roots() -> None:
    anth = {"model": "claude-opus-4-8", "max_tokens": 64, "messages": [USER], "stream": True}
    validate_payload(anth, "anthropic")
    resp = {"model": "gpt-5.4", "input": "hi", "stream": True}
    validate_payload({**resp, "stream_options": {"include_obfuscation": False}}, "openai-responses")
    chat = {"model": "gpt-5.4", "messages": [USER], "stream": True}
    validate_payload({**chat, "stream_options": {"include_usage": True}}, "openai-chat")
    validate_payload({**chat, "stream_options": {"include_usage": True}}, "kimi")


@pytest.mark.parametrize(
    ("body", "provider", "path", "reason"),
    [
        (
            {"model": "m", "max_tokens": 8, "messages": [{"role": "bot", "content": "x"}]},
            "anthropic",
            "messages.0",
            "literal_error: role 'bot' not allowed",
        ),
        (
            {"model": "gpt-5.4", "input": "hi", "stream_options": {"usage": True}},
            "openai-responses",
            "stream_options",
            "extra_forbidden: unexpected key 'usage'",
        ),
        (
            {"model": "gpt-5.4", "messages": [USER], "stream_options": {"include_usage": 5}},
            "openai-chat",
            "stream_options.include_usage",
            "bool_parsing",
        ),
    ],
)
def test_streaming_errors_name_the_path(
    body: dict[str, Any], provider: str, path: str, reason: str
) -> None:
    with pytest.raises(WireValidationError) as info:
        validate_payload({**body, "stream": True}, provider)
    assert info.value.path == path
    assert info.value.reason.startswith(reason)


def _mcp_body(**extra: Any) -> dict[str, Any]:
    server = {"type": "url", "name": "docs", "url": "https://mcp.example.com/sse"}
    return {
        "model": "claude-opus-4-8",
        "max_tokens": 64,
        "messages": [USER],
        "mcp_servers": [server],
        "tools": [{"type": "mcp_toolset", "mcp_server_name": "docs"}],
        **extra,
    }


def test_beta_body_validates_against_the_beta_types_and_names_its_betas() -> None:
    body = _mcp_body(context_management={"edits": [{"type": "clear_tool_uses_20250919"}]})
    validate_payload(body, "anthropic")
    assert required_betas(body, "anthropic") == [
        "context-management-2025-06-27",
        "mcp-client-2025-11-20",
    ]
    validate_payload({**body, "stream": True}, "anthropic")  # beta streaming root


def test_invalid_beta_body_names_the_path() -> None:
    body = _mcp_body()
    body["mcp_servers"][0]["url"] = 42
    with pytest.raises(WireValidationError) as info:
        validate_payload(body, "anthropic")
    assert info.value.path == "mcp_servers.0.url"
    with pytest.raises(WireValidationError) as info:
        validate_payload(_mcp_body(betas=["mcp-client-2025-11-20"]), "anthropic")
    assert info.value.path == "betas" and "header" in info.value.reason


def test_inline_definitions_replace_the_reference_beta() -> None:
    new = {"name": "late", "input_schema": {"type": "object"}}
    system = {
        "role": "system",
        "content": [
            {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "base"}},
            {
                "type": "tool_addition",
                "tool": {"type": "tool_definition", "definition": new},
            },
        ],
    }
    tools = [{"name": "base", "input_schema": {"type": "object"}}]
    body = {"model": "m", "max_tokens": 8, "messages": [USER, system], "tools": tools}
    validate_payload(body, "anthropic")
    assert required_betas(body, "anthropic") == ["inline-tools-2026-09-15"]
    assert required_betas(body, "openai-chat") == []


def test_every_mapped_beta_name_is_one_the_sdk_lists() -> None:
    mapped = {*TOP_LEVEL_BETAS.values(), *BLOCK_BETAS.values(), *SYSTEM_MESSAGE_BETAS.values()}
    assert mapped <= sdk_beta_names()


def test_wire_request_derives_its_betas() -> None:
    session = Session(system="You help.")
    session.user("hi")
    built = build_request(session, "anthropic", "claude-opus-4-8")
    assert built.betas == []  # today's builders emit no beta feature
    request = WireRequest("anthropic", "claude-opus-4-8", _mcp_body(), "custom")
    assert request.betas == ["mcp-client-2025-11-20"]
    assert "betas=['mcp-client-2025-11-20']" in repr(request)
