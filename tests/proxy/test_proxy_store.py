"""The proxy's store under load and after a kill."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from dtl_notebook.cache.store_reader import is_store, store_rows
from dtl_notebook.proxy import Proxy
from tests.support.proxy_servers import FaultUpstream

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def upstream() -> Iterator[FaultUpstream]:
    with FaultUpstream() as server:
        yield server


def body(text: str) -> bytes:
    messages = [{"role": "user", "content": text}]
    return json.dumps(
        {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": messages}
    ).encode()


def test_concurrent_clients_lose_and_mix_up_nothing(
    upstream: FaultUpstream, tmp_path: Path
) -> None:
    clients, each = 20, 25
    store = tmp_path / "load.sqlite"
    with Proxy(store=store, port=0, upstream_anthropic=upstream.url) as proxy:

        def client(n: int) -> list[tuple[bytes, bytes]]:
            # a hang guard, not a wait: 20 clients on a busy machine can take seconds a request
            with httpx2.Client(base_url=proxy.url, timeout=120) as http:
                sent = [body(f"client {n} request {i}") for i in range(each)]
                return [(b, http.post("/v1/messages", content=b).content) for b in sent]

        with ThreadPoolExecutor(clients) as pool:
            pairs = [p for ps in pool.map(client, range(clients)) for p in ps]
        assert proxy.store_queue is not None and proxy.store_queue.wait(clients * each, timeout=300)
    rows = store_rows(store)
    assert len(rows) == clients * each
    # every request with its own response (its echo: the cookie the client sent is masked)
    got = {r["request_body"].encode(): json.loads(r["response_body"])["body"] for r in rows}
    assert got == {q: json.loads(r)["body"] for q, r in pairs}
    assert all(json.loads(r)["body"] == q.decode() for q, r in pairs)
    assert sorted(r["number"] for r in rows) == list(range(1, clients * each + 1))


def test_a_killed_proxy_leaves_a_readable_store(upstream: FaultUpstream, tmp_path: Path) -> None:
    store = tmp_path / "killed.sqlite"
    command = [sys.executable, "-m", "dtl_notebook", "proxy", "--port", "0", "--store", str(store)]
    command += ["--upstream-anthropic", upstream.url]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().decode()
        url = first.split(" on ")[1].split()[0]
        with httpx2.Client(base_url=url) as http:
            for i in range(5):
                assert http.post("/v1/messages", content=body(f"turn {i}")).status_code == 200
        deadline = time.monotonic() + 300  # a hang guard: the loop ends once all are stored
        while time.monotonic() < deadline:
            if is_store(store) and len(store_rows(store)) == 5:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(300)  # a killed process ends at once: a hang guard
    finally:
        proc.kill()
    rows = store_rows(store)
    assert [json.loads(r["request_body"])["messages"][0]["content"] for r in rows] == [
        f"turn {i}" for i in range(5)
    ]
    db = sqlite3.connect(store)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
