"""The real SDK clients through the proxy to the emulator served over HTTP on loopback:
forwarded byte for byte, streamed and not, stored, and read back by audit_capture."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from dtl_notebook.cache import audit_capture, load_capture
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.proxy import Proxy, ProxyConfigError

SYSTEM = "You are a careful logistics assistant. Follow the house rules. " * 40
KEY = "sk-ant-api03-TESTKEY0123456789abcdef"


@pytest.fixture(scope="module")
def upstream() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


@pytest.fixture
def proxy(upstream: EmulatorServer, tmp_path: Path) -> Iterator[Proxy]:
    origin = upstream.url
    store = tmp_path / "traffic.sqlite"
    with Proxy(store=store, port=0, upstream_anthropic=origin, upstream_openai=origin) as p:
        yield p


def rows(proxy: Proxy, count: int) -> list[sqlite3.Row]:
    assert proxy.store_queue is not None
    assert proxy.store_queue.wait(count)
    db = sqlite3.connect(str(proxy.config.store))
    db.row_factory = sqlite3.Row
    return db.execute("SELECT * FROM exchanges ORDER BY id").fetchall()


def test_anthropic_sdk_streamed_and_not_byte_for_byte(
    proxy: Proxy, upstream: EmulatorServer
) -> None:
    client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
    messages: list[dict[str, object]] = [{"role": "user", "content": "where is order 7?"}]
    raw = client.messages.with_raw_response.create(
        model="claude-sonnet-4-5", max_tokens=200, system=SYSTEM, messages=messages
    )
    first = raw.parse()
    received, sent = upstream.received[-1], upstream.sent[-1]
    assert raw.http_response.content == sent  # the client got what the upstream sent
    messages += [
        {"role": "assistant", "content": first.content[0].text},
        {"role": "user", "content": "and order 8?"},
    ]
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=200, system=SYSTEM, messages=messages
    ) as stream:
        final = stream.get_final_message()
    assert final.usage.input_tokens > first.usage.input_tokens
    stored = rows(proxy, 2)
    assert [r["path"] for r in stored] == ["/v1/messages", "/v1/messages"]
    assert stored[0]["request_body"].encode() == received  # forwarded unchanged
    assert stored[1]["streamed"] == 1
    assert stored[1]["response_body"].encode() == upstream.sent[-1]  # the raw events
    assert stored[0]["conversation"] == stored[1]["conversation"]  # the second extends the first
    assert stored[0]["started"] <= stored[0]["first_byte"] <= stored[0]["ended"]
    assert KEY not in json.dumps([dict(r) for r in stored])


def test_openai_sdk_both_endpoints_and_audit(proxy: Proxy, upstream: EmulatorServer) -> None:
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-proj-TEST0123456789")
    reply = client.responses.create(model="gpt-5.4", input="hello", prompt_cache_key="conv-9")
    events = list(
        client.responses.create(
            model="gpt-5.4", input="hello again", prompt_cache_key="conv-9", stream=True
        )
    )
    assert events[-1].type == "response.completed"
    chat = client.chat.completions.with_raw_response.create(
        model="gpt-5.4", messages=[{"role": "user", "content": "hi"}]
    )
    assert chat.http_response.content == upstream.sent[-1]
    stored = rows(proxy, 3)
    assert [r["provider"] for r in stored] == ["openai-responses"] * 2 + ["openai-chat"]
    assert stored[0]["conversation"] == stored[1]["conversation"] != stored[2]["conversation"]
    audit = audit_capture(proxy.config.store)
    assert set(audit.reports) == {"openai-responses", "openai-chat"}
    exchanges = load_capture(proxy.config.store)
    assert exchanges[0].response is not None and exchanges[0].response["id"] == reply.id
    assert exchanges[1].response is not None  # the stream, accumulated from its events
    assert exchanges[1].response["id"] == events[-1].response.id


def test_only_provider_paths_and_bounded_bodies(upstream: EmulatorServer) -> None:
    with Proxy(port=0, upstream_anthropic=upstream.url, max_body=1000) as proxy:
        with httpx2.Client(base_url=proxy.url) as http:
            refused = http.get("/v1/models")
            assert refused.status_code == 404
            assert "/v1/models is not forwarded" in refused.json()["error"]["message"]
            # an absolute URL in the request line cannot pick another host either
            assert http.post("/etc/passwd", content=b"{}").status_code == 404
            big = http.post("/v1/messages", content=b"x" * 1001)
            assert big.status_code == 413
            assert big.json()["error"]["type"] == "request_too_large"
        assert len(upstream.received) == len(upstream.sent)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("https://api.anthropic.com/v1", "has a path"),
        ("ftp://example.org", "not an origin"),
        ("https://user:pw@example.org", "credentials"),
        ("https://example.org:http", "has no valid port"),
        ("http://127.0.0.1:", "has no valid port"),  # `http://127.0.0.1:$PORT`, PORT unset
        ("http://[::1]:", "has no valid port"),
        ("http://127.0.0.1:0", "has no valid port"),
        ("http://127.0.0.1:70000", "has no valid port"),
        ("http://exa mple.org", "not an origin"),
        ("https://example.org/v1?key=abcdefgh12345", "has a path"),
    ],
)
def test_upstream_must_be_an_origin(value: str, fragment: str) -> None:
    with pytest.raises(ProxyConfigError, match=fragment) as caught:
        Proxy(upstream_anthropic=value)
    assert str(caught.value).startswith("upstream_anthropic: ")
    assert "abcdefgh12345" not in str(caught.value) and "pw" not in str(caught.value)


def test_port_zero_picks_a_free_port_and_a_taken_one_fails() -> None:
    with Proxy(port=0) as first:
        assert first.port > 0 and first.url.endswith(f":{first.port}")
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            Proxy(port=first.port).start()
    assert not first.running
