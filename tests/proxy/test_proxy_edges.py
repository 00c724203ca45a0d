"""The proxy at its edges: a client that leaves mid-stream, a request target that is not a
plain path, a store deleted under it, answers in every content-encoding, and upstream
origins that cannot work."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from dtl_notebook.cache import audit_capture
from dtl_notebook.cache.store_reader import store_rows
from dtl_notebook.proxy import Proxy, Summary, worker
from dtl_notebook.proxy.worker import FORWARDING, Worker
from tests.support.proxy_servers import PacedEmulator

STREAMED = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "Tell me about the weather in Paris."}],
}


@pytest.fixture
def paced(tmp_path: Path) -> Iterator[tuple[PacedEmulator, Proxy]]:
    with (
        PacedEmulator(head=2) as upstream,
        Proxy(store=tmp_path / "left.sqlite", port=0, upstream_anthropic=upstream.url) as proxy,
    ):
        yield upstream, proxy


def test_a_client_that_leaves_stops_the_upstream_and_is_stored_as_cut_by_it(
    paced: tuple[PacedEmulator, Proxy],
) -> None:
    upstream, proxy = paced
    with (
        httpx2.Client(base_url=proxy.url) as http,
        http.stream("POST", "/v1/messages", json=STREAMED) as reply,
    ):
        events = []
        for line in reply.iter_lines():
            if line.startswith("event: "):
                events.append(line.removeprefix("event: "))
            if len(events) == 2:
                break  # leaving the block closes the connection mid-stream
    assert upstream.closed.wait(10)  # the proxy closed its upstream connection too
    assert upstream.events == 2 and not upstream.more.is_set()
    assert proxy.store_queue is not None and proxy.store_queue.wait(1)
    (row,) = store_rows(proxy.config.store or "")
    assert row["failure"].startswith("cut by the client")
    assert row["status"] == 200 and "event: message_start" in row["response_body"]
    (cut,) = audit_capture(proxy.config.store or "").errors  # counted, not dropped
    assert cut.error is not None and "cut by the client" in cut.error.message


def test_a_client_that_reads_to_the_end_is_not_cut(paced: tuple[PacedEmulator, Proxy]) -> None:
    upstream, proxy = paced
    upstream.more.set()
    with httpx2.Client(base_url=proxy.url) as http:
        reply = http.post("/v1/messages", json=STREAMED)
    assert reply.text.rstrip().endswith('data: {"type":"message_stop"}')
    assert proxy.store_queue is not None and proxy.store_queue.wait(1)
    (row,) = store_rows(proxy.config.store or "")
    assert row["failure"] is None and row["response_body"] == reply.text
    assert not upstream.closed.is_set()


def raw_request(proxy: Proxy, target: bytes) -> bytes:
    """The proxy's whole answer to one POST with `target` as its request line's target."""
    body = json.dumps({**STREAMED, "stream": False}).encode()
    head = b"POST %s HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" % target
    head += b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
    with socket.create_connection(("127.0.0.1", proxy.port)) as sock:
        sock.sendall(head + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("target", [b"%2Fv1%2Fmessages", b"/v1%2Fmessages", b"/v1/%6Dessages"])
def test_a_request_target_that_only_decodes_to_a_route_is_a_clear_400(
    paced: tuple[PacedEmulator, Proxy], target: bytes
) -> None:
    upstream, proxy = paced
    answer = raw_request(proxy, target)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 ")
    error = json.loads(body)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"] == (
        f"request target {target.decode()!r} is not forwarded: send /v1/messages as is"
    )
    assert upstream.received == []  # nothing forwarded
    assert raw_request(proxy, b"/v1/messages").startswith(b"HTTP/1.1 200 ")


def test_a_store_deleted_under_the_running_proxy_is_reported_and_started_anew(
    paced: tuple[PacedEmulator, Proxy], caplog: pytest.LogCaptureFixture
) -> None:
    _, proxy = paced
    store, body = proxy.config.store, {**STREAMED, "stream": False}
    assert store is not None and proxy.store_queue is not None
    with httpx2.Client(base_url=proxy.url) as http:
        for _ in range(2):
            assert http.post("/v1/messages", json=body).status_code == 200
        assert proxy.store_queue.wait(2) and len(store_rows(store)) == 2
        for path in store.parent.glob(store.name + "*"):  # the file and its WAL, as `rm` would
            path.unlink()
        assert http.post("/v1/messages", json=body).status_code == 200
        assert proxy.store_queue.wait(3)
    assert len(store_rows(store)) == 1  # the new store holds what came after
    assert "1 exchanges stored" in proxy.status()
    assert f"store {store} was deleted or replaced while the proxy ran" in proxy.status()
    said = [r.getMessage() for r in caplog.records if "was deleted or replaced" in r.getMessage()]
    assert len(said) == 1 and "the 2 exchanges stored in it went with it" in said[0]


def test_one_line_per_request_and_no_http_client_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines: list[str] = []
    summary = Summary(lines.append)
    caplog.set_level(logging.INFO)
    body = {**STREAMED, "stream": False}
    with (
        PacedEmulator() as upstream,
        Proxy(port=0, upstream_anthropic=upstream.url, listeners=[summary]) as proxy,
        httpx2.Client(base_url=proxy.url) as http,
    ):
        for _ in range(3):
            assert http.post("/v1/messages?key=abcdefgh12345", json=body).status_code == 200
        assert proxy.store_queue is not None and proxy.store_queue.wait(3)
        ours = proxy.url
    summary.close()
    assert len(lines) == 3 and all(line.startswith("#") for line in lines)
    # the test's own client logs its requests; the proxy's forwarding logs none
    proxy_logs = [r.getMessage() for r in caplog.records if ours not in r.getMessage()]
    assert not [m for m in proxy_logs if "HTTP Request:" in m]
    assert "abcdefgh12345" not in "".join(proxy_logs + lines)


def test_background_work_waits_while_a_request_is_being_forwarded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker, "PATIENCE_S", 60.0)  # never the reason it goes on here
    handled = threading.Event()
    background = Worker(lambda _: handled.set(), "test-worker")
    FORWARDING.begin()
    try:
        background.put("an exchange")
        assert not handled.wait(0.05)  # held back: a request is between arrival and answer
    finally:
        FORWARDING.end()
    assert handled.wait(10)  # taken up as soon as nothing is in flight
    background.close()
