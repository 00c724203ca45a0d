"""The proxy's store under load, after a kill, and with keys anywhere in the traffic."""

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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtl_notebook.cache.store_reader import is_store, store_rows
from dtl_notebook.proxy import Proxy
from tests.proxy_servers import FaultUpstream

ROOT = Path(__file__).resolve().parents[1]


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
        assert proxy.recorder is not None and proxy.recorder.wait(clients * each, timeout=300)
    rows = store_rows(store)
    assert len(rows) == clients * each
    got = {r["request_body"].encode(): r["response_body"].encode() for r in rows}
    assert got == dict(pairs)  # every request with its own response, none lost
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


KEY_CHARS = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=12)
KEYS = st.builds(
    lambda prefix, rest: prefix + rest,
    st.sampled_from(["sk-", "sk-ant-api03-", "sk-proj-"]),
    KEY_CHARS,
)
HEADERS = st.sampled_from(
    ["authorization", "x-api-key", "cookie", "x-custom-token", "x-test-cookie"]
)
BODY_PLACES = st.sampled_from(["content", "metadata", "api_key", "query", "none"])


@pytest.fixture(scope="module")
def key_proxy(upstream: FaultUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    store = tmp_path_factory.mktemp("keys") / "keys.sqlite"
    with Proxy(store=store, port=0, upstream_anthropic=upstream.url) as proxy:
        yield proxy


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(key=KEYS, header=HEADERS, place=BODY_PLACES, bearer=st.booleans())
def test_keys_never_reach_the_store(
    key_proxy: Proxy, key: str, header: str, place: str, bearer: bool
) -> None:
    payload: dict[str, object] = {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": []}
    if place == "content":
        payload["messages"] = [{"role": "user", "content": f"my key is {key} ok"}]
    elif place == "metadata":
        payload["metadata"] = {"user_id": key}
    elif place == "api_key":
        payload["api_key"] = "not-key-shaped-but-named-so"
    value = f"Bearer {key}" if bearer else key
    path = f"/v1/messages?key={key}" if place == "query" else "/v1/messages"
    assert key_proxy.recorder is not None
    before = key_proxy.recorder.handled
    with httpx2.Client(base_url=key_proxy.url) as http:
        echoed = http.post(path, content=json.dumps(payload).encode(), headers={header: value})
    assert echoed.status_code == 200  # the key went through to the upstream
    assert key_proxy.recorder.wait(before + 1)
    db = sqlite3.connect(str(key_proxy.config.store))
    db.row_factory = sqlite3.Row
    row = dict(db.execute("SELECT * FROM exchanges ORDER BY id DESC LIMIT 1").fetchone())
    db.close()
    assert key not in json.dumps(row)  # headers, bodies (the echo too), query
    assert "not-key-shaped-but-named-so" not in row["request_body"]  # a credential field
