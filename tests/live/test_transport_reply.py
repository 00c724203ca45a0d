"""The transport's reply: plain JSON without nulls that parses to the emulator's answer, equal to
what the SDK's own validating parse gives (less the Responses echo of the request tools)."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from dtl_notebook import Session, Tool
from dtl_notebook.live.transport import ProviderError, SDKTransport, emulator_transport
from dtl_notebook.wire import build_request, parse_response
from dtl_notebook.wire.providers import spec

SEARCHED = ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"]  # the emulator's top five
CLIENT_SEARCH = (["tool_search"], [])  # the model calls the client's tool_search
SERVER_SEARCH = (["tool_0"], SEARCHED)  # the server searched, loaded five, the model calls one
# Each mode with what the emulator answers its first request: (calls, tools the server loaded)
MODES = [
    ("anthropic", "claude-sonnet-4-6", {}, CLIENT_SEARCH),
    ("anthropic", "claude-sonnet-4-6", {"search": "native-bm25"}, SERVER_SEARCH),
    ("openai-responses", "gpt-5.4", {"search": "hosted"}, SERVER_SEARCH),
    ("openai-responses", "gpt-5.4", {}, CLIENT_SEARCH),
    ("openai-chat", "gpt-4.1", {}, CLIENT_SEARCH),
    ("kimi", "kimi-k2", {}, CLIENT_SEARCH),
]


def _nulls(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _nulls(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _nulls(v, f"{path}.{i}")]
    return [path] if value is None else []


def _session() -> Session:
    tools = [Tool(f"tool_{i}", description=f"Does thing {i}") for i in range(12)]
    session = Session(system="You help.", tools=tools)
    session.user("Find the tool for thing 5")
    return session


@pytest.mark.parametrize(("provider", "model", "options", "answer"), MODES)
def test_the_reply_is_the_sdk_parse_of_the_body(
    provider: str, model: str, options: dict[str, Any], answer: tuple[list[str], list[str]]
) -> None:
    request = build_request(_session(), provider, model, **options)
    ours = emulator_transport(provider).send(request)
    assert ours["model"] == model and _nulls(ours) == [] and "tools" not in ours
    reply = parse_response(ours, provider)
    assert ([c.name for c in reply.message.tool_calls], reply.loaded_tool_names) == answer
    # the same emulator state, answered through the client's own typed parsing
    sdk = emulator_transport(provider)
    row = spec(provider)
    parsed = sdk.client.post(
        row.sdk_path,
        cast_to=row.response_type(),
        content=request.json().encode(),
        options={"headers": {"Content-Type": "application/json"}},
    )
    echo = {"tools"} if provider == "openai-responses" else None
    expected = parsed.model_dump(mode="json", exclude_none=True, warnings=False, exclude=echo)
    assert ours == expected


@pytest.mark.parametrize(("content", "reason"), [(b"<html>", "not JSON"), (b"[1]", "not a JSON")])
def test_a_reply_that_is_not_a_json_object_is_a_provider_error(content: bytes, reason: str) -> None:
    http = httpx2.Client(
        transport=httpx2.MockTransport(lambda _: httpx2.Response(200, content=content))
    )
    client = openai.OpenAI(
        api_key="test-no-key",
        base_url="http://emulator.invalid/v1",
        http_client=http,
        max_retries=0,
    )
    request = build_request(_session(), "openai-chat", "gpt-4.1")
    with pytest.raises(ProviderError, match=reason):
        SDKTransport("openai-chat", client, "test").send(request)
