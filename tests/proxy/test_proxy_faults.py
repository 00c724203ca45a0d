"""Upstreams that fail: each failure reaches the client as the upstream gave it (or, when the
upstream cannot be reached, as a 502 in the provider's shape) and is recorded."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from dtl_notebook.cache import load_capture
from dtl_notebook.proxy import Proxy
from tests.support.proxy_servers import (
    ANTHROPIC_OVERLOADED,
    EVENT,
    OPENAI_RATE_LIMIT,
    FaultUpstream,
)

BODY = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": []}).encode()


@pytest.fixture(scope="module")
def upstream() -> Iterator[FaultUpstream]:
    with FaultUpstream() as server:
        yield server


@pytest.fixture
def proxy(upstream: FaultUpstream, tmp_path: Path) -> Iterator[Proxy]:
    origin = upstream.url
    store = tmp_path / "faults.sqlite"
    with Proxy(store=store, port=0, upstream_anthropic=origin, upstream_openai=origin) as p:
        yield p


def stored(proxy: Proxy, count: int) -> list[sqlite3.Row]:
    assert proxy.store_queue is not None and proxy.store_queue.wait(count)
    db = sqlite3.connect(str(proxy.config.store))
    db.row_factory = sqlite3.Row
    return db.execute("SELECT * FROM exchanges ORDER BY id").fetchall()


def post(proxy: Proxy, fault: str, path: str = "/v1/messages") -> httpx2.Response:
    with httpx2.Client(base_url=proxy.url) as http:
        return http.post(path, content=BODY, headers={"x-test-fault": fault})


def test_provider_errors_are_forwarded_unchanged_and_recorded(proxy: Proxy) -> None:
    overloaded = post(proxy, "500")
    assert (overloaded.status_code, overloaded.content) == (500, ANTHROPIC_OVERLOADED)
    assert overloaded.headers["request-id"] == "req_011"
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-x", max_retries=0)
    with pytest.raises(openai.RateLimitError) as limited:
        client.responses.create(model="gpt-5.4", input="hi", extra_headers={"x-test-fault": "429"})
    assert limited.value.response.content == OPENAI_RATE_LIMIT
    assert limited.value.response.headers["retry-after"] == "7"
    rows = stored(proxy, 2)
    assert [(r["status"], r["response_body"].encode()) for r in rows] == [
        (500, ANTHROPIC_OVERLOADED),
        (429, OPENAI_RATE_LIMIT),
    ]
    errors = [e.error for e in load_capture(proxy.config.store)]
    assert [e.status if e else None for e in errors] == [500, 429]


def test_unreachable_upstream_is_a_502_in_each_providers_shape(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    store = tmp_path / "dead.sqlite"
    with Proxy(store=store, port=0, upstream_anthropic=dead, upstream_openai=dead) as proxy:
        claude = anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-x", max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as refused:
            claude.messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=[])
        assert refused.value.status_code == 502
        error = refused.value.response.json()
        assert error["type"] == "error" and error["error"]["type"] == "api_error"
        assert error["error"]["message"].startswith(f"upstream {dead} unreachable: ConnectError")
        assert "\n" not in error["error"]["message"]
        gpt = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-x", max_retries=0)
        with pytest.raises(openai.InternalServerError) as failed:
            gpt.chat.completions.create(model="gpt-5.4", messages=[])
        assert failed.value.response.json()["error"]["type"] == "server_error"
        rows = stored(proxy, 2)
    assert [r["status"] for r in rows] == [502, 502]
    assert all("unreachable" in r["failure"] for r in rows)


def test_a_stream_cut_mid_body_is_cut_for_the_client_too_and_recorded(proxy: Proxy) -> None:
    with (
        httpx2.Client(base_url=proxy.url) as http,
        http.stream("POST", "/v1/messages", content=BODY, headers={"x-test-fault": "cut"}) as r,
    ):
        assert r.status_code == 200
        got = b""
        with pytest.raises(httpx2.RemoteProtocolError):
            for chunk in r.iter_raw():
                got += chunk
    assert got == EVENT  # what came before the cut, unchanged
    (row,) = stored(proxy, 1)
    assert row["response_body"].encode() == EVENT
    assert "upstream cut the response mid-body" in row["failure"]
    (exchange,) = load_capture(proxy.config.store)
    assert exchange.error is not None and "mid-body" in exchange.error.message


def test_events_are_relayed_as_they_arrive(proxy: Proxy, upstream: FaultUpstream) -> None:
    upstream.gate.clear()
    with httpx2.Client(base_url=proxy.url) as http:
        headers = {"x-test-fault": "gate"}
        with http.stream("POST", "/v1/messages", content=BODY, headers=headers) as r:
            chunks = r.iter_raw()
            assert next(chunks) == EVENT  # the upstream holds the rest back until the gate
            upstream.gate.set()
            assert b"".join(chunks) == EVENT
    (row,) = stored(proxy, 1)
    assert row["response_body"].encode() == EVENT * 2 and row["streamed"] == 1


NEEDS = {"br": "brotli", "zstd": "backports.zstd"}


def raw_post(proxy: Proxy, headers: dict[str, str]) -> tuple[httpx2.Response, bytes]:
    """The response to a POST and its body's bytes as they came (not decoded)."""
    with httpx2.Client(base_url=proxy.url) as http:
        request = http.build_request("POST", "/v1/messages", content=BODY, headers=headers)
        response = http.send(request, stream=True)
        raw = b"".join(response.iter_raw())
        response.close()
    return response, raw


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_compressed_bodies_pass_through_compressed_and_are_stored_decoded(
    proxy: Proxy, upstream: FaultUpstream, encoding: str
) -> None:
    if encoding in NEEDS:
        pytest.importorskip(NEEDS[encoding], reason=f"{NEEDS[encoding]} is not installed")
    response, raw = raw_post(proxy, {"x-test-fault": "encoded", "x-test-encoding": encoding})
    assert response.headers["content-encoding"] == encoding
    assert raw == upstream.sent[-1]  # not decompressed on the way
    (row,) = stored(proxy, 1)
    assert json.loads(row["response_body"]) == {"id": "msg_gz", "echo": BODY.decode()}
    assert row["failure"] is None


@pytest.mark.parametrize("encoding", ["zstd", "gzip", "compress"])
def test_an_answer_that_cannot_be_decoded_is_stored_with_its_reason_and_counted(
    proxy: Proxy, encoding: str
) -> None:
    response, raw = raw_post(proxy, {"x-test-fault": "junk", "x-test-encoding": encoding})
    assert (response.status_code, raw) == (200, b"not compressed")  # relayed as it came
    (row,) = stored(proxy, 1)
    assert row["response_body"] == ""
    assert row["failure"].startswith(f"response body not stored: content-encoding {encoding!r}")
    (exchange,) = load_capture(proxy.config.store)  # counted, with its reason
    assert exchange.error is not None and f"content-encoding {encoding!r}" in exchange.error.message


def test_a_store_that_cannot_be_written_never_breaks_forwarding(
    upstream: FaultUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the store's folder should be")
    store = blocked / "store.sqlite"
    with Proxy(store=store, port=0, upstream_anthropic=upstream.url) as proxy:
        replies = [post(proxy, "echo") for _ in range(3)]
        assert proxy.store_queue is not None and proxy.store_queue.wait(3)
        assert proxy.store_queue.problem is not None and str(store) in proxy.store_queue.problem
    assert [r.status_code for r in replies] == [200, 200, 200]
    reports = [r for r in caplog.records if "cannot be opened" in r.getMessage()]
    assert len(reports) == 1
