"""The SDK transport posts the validated body as built: same JSON, one request, SDK models back."""

from __future__ import annotations

import importlib
import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from dtl_notebook import Session, Tool
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.transport import SDKTransport
from dtl_notebook.wire import WireRequest, build_request

MODELS = {
    "anthropic": "claude-opus-4-8",
    "openai-responses": "gpt-5.4",
    "openai-chat": "gpt-5.4",
    "kimi": "kimi-k2.6",
}


class _Recording(httpx2.BaseTransport):
    """Passes every request to an emulator and keeps it for inspection."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator, self.seen = emulator, list[httpx2.Request]()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        return self.emulator.transport.handle_request(request)


def _transport(provider: str) -> tuple[SDKTransport, _Recording]:
    recording = _Recording(Emulator(provider))
    http = httpx2.Client(transport=recording)
    if provider == "anthropic":
        client = anthropic.Anthropic(
            api_key="emulator-no-key",
            base_url="http://emulator.invalid",
            http_client=http,
            max_retries=0,
        )
    else:
        client = openai.OpenAI(
            api_key="emulator-no-key",
            base_url="http://emulator.invalid/v1",
            http_client=http,
            max_retries=0,
        )
    return SDKTransport(provider, client, "emulator"), recording


def _session() -> Session:
    tools = [
        Tool(f"tool_{i}", description=f"Does thing {i}", parameters={"type": "object"})
        for i in range(40)
    ]
    session = Session(system="You help.", tools=tools, active=["tool_search", "tool_0"])
    session.user("Find the tool for thing 7 — ünïcode kept as is")
    return session


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_the_body_on_the_wire_is_the_built_payload(provider: str) -> None:
    request = build_request(_session(), provider, MODELS[provider])
    transport, recording = _transport(provider)
    reply = transport.send(request)
    (sent,) = recording.seen
    assert sent.content == request.json().encode()  # the exact text, not a re-serialization
    assert sent.headers["content-type"] == "application/json"
    endings = {"anthropic": "/messages", "openai-responses": "/responses"}
    assert sent.url.path.endswith(endings.get(provider, "/chat/completions"))
    assert "anthropic-beta" not in sent.headers
    assert reply.get("usage"), reply  # parsed through the SDK's response model


def test_the_sdk_does_not_re_transform_the_body(monkeypatch: pytest.MonkeyPatch) -> None:
    """`responses.create(**body)` would walk every item of an already validated body again."""
    resource = importlib.import_module("openai.resources.responses.responses")
    calls: list[object] = []
    original = resource.maybe_transform

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(resource, "maybe_transform", counting)
    request = build_request(_session(), "openai-responses", "gpt-5.4", search="hosted")
    transport, recording = _transport("openai-responses")
    transport.send(request)
    assert calls == [] and len(recording.seen) == 1


def test_transport_sends_the_beta_header_through_the_beta_resource() -> None:
    transport, recording = _transport("anthropic")
    emulator = recording.emulator
    user = {"role": "user", "content": "hi"}
    body: dict[str, Any] = {"model": "claude-opus-4-8", "max_tokens": 64, "messages": [user]}
    body["context_management"] = {"edits": [{"type": "clear_tool_uses_20250919"}]}
    reply = transport.send(WireRequest("anthropic", "claude-opus-4-8", body, "custom"))
    assert reply["role"] == "assistant"
    sent = recording.seen[-1]
    assert sent.headers["anthropic-beta"] == "context-management-2025-06-27"
    assert sent.url.path == "/v1/messages"  # the emulator routes by path (a query is ignored)
    assert emulator.requests[-1] == body  # the header is not in the body
    transport.send(WireRequest("anthropic", "claude-opus-4-8", {**body, "stream": False}, "x"))
    plain = {k: v for k, v in body.items() if k != "context_management"}
    transport.send(WireRequest("anthropic", "claude-opus-4-8", plain, "custom"))
    assert "anthropic-beta" not in recording.seen[-1].headers


def test_a_responses_reply_is_kept_without_the_echo_of_the_request_tools() -> None:
    request = build_request(_session(), "openai-responses", "gpt-5.4", search="hosted")
    transport, recording = _transport("openai-responses")
    reply = transport.send(request)
    echoed = json.loads(recording.emulator.transport.handle_request(recording.seen[0]).read())
    assert echoed["tools"]  # the provider echoes them; the kept reply leaves the echo out
    assert "tools" not in reply and reply["output"] and reply["usage"]
