"""The SDK transport posts the validated body as built: same JSON, one request, SDK models back."""

from __future__ import annotations

import importlib
import json

import anthropic
import httpx2
import openai
import pytest

from dtl_notebook import Session, Tool
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.transport import SDKTransport
from dtl_notebook.wire import build_request

MODELS = {
    "anthropic": "claude-opus-4-8",
    "openai-responses": "gpt-5.4",
    "openai-chat": "gpt-5.4",
    "kimi": "kimi-k2.6",
}


class _Recording(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner, self.seen = inner, list[httpx2.Request]()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        return self.inner.handle_request(request)


def _transport(provider: str) -> tuple[SDKTransport, _Recording]:
    recording = _Recording(Emulator(provider).transport)
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
    assert json.loads(sent.content) == request.payload
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
