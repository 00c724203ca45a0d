"""The recorder in a child process: everything stored (masked) and told to the listeners built
there, nothing lost at stop, and a store that fails never stops forwarding."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from dtl_notebook.cache.store_reader import store_rows
from dtl_notebook.proxy import Proxy
from tests.support.proxy_servers import FaultUpstream
from tests.support.recorder_listeners import Failing, LinesTo

KEY = "sk-ant-api03-" + "k3y" * 12


@pytest.fixture(scope="module")
def upstream() -> Iterator[FaultUpstream]:
    with FaultUpstream() as server:
        yield server


def turn(count: int) -> bytes:
    """The request of a conversation's turn `count` (its history grows by a pair a turn)."""
    messages = [{"role": "user", "content": "where is order 7?"}]
    for n in range(count):
        messages += [{"role": "assistant", "content": f"reply {n}"}]
        messages += [{"role": "user", "content": f"and {n}?"}]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": messages}
    return json.dumps(body).encode()


def test_every_exchange_is_stored_masked_and_heard_in_the_recorder_process(
    upstream: FaultUpstream, tmp_path: Path
) -> None:
    store, heard = tmp_path / "child.sqlite", tmp_path / "heard.txt"
    settings = {"upstream_anthropic": upstream.url, "recorder_process": LinesTo(heard)}
    with (
        Proxy(store=store, port=0, **settings) as proxy,
        httpx2.Client(base_url=proxy.url, headers={"x-api-key": KEY}) as http,
    ):
        for count in range(6):
            assert http.post("/v1/messages", content=turn(count)).status_code == 200
    # stopped at once: stop() waits until the child has stored and told everything
    rows = store_rows(store)
    assert [r["number"] for r in rows] == list(range(1, 7))
    assert [json.loads(r["request_body"]) for r in rows] == [json.loads(turn(n)) for n in range(6)]
    assert KEY not in json.dumps(rows) and ["x-api-key", "[redacted]"] in json.loads(
        rows[0]["request_headers"]
    )
    assert {r["conversation"] for r in rows} == {"c1"}  # grouped on arrival, kept at the end
    lines = heard.read_text().splitlines()
    assert sorted(lines) == sorted(
        [f"arrived {n} c1" for n in range(1, 7)] + [f"finished {n} c1" for n in range(1, 7)]
    )
    assert lines.index("arrived 3 c1") < lines.index("finished 3 c1")


def test_a_store_that_cannot_be_opened_is_reported_and_forwarding_goes_on(
    upstream: FaultUpstream, tmp_path: Path
) -> None:
    store = tmp_path / "a folder"
    store.mkdir()
    with Proxy(
        store=store,
        port=0,
        upstream_anthropic=upstream.url,
        recorder_process=LinesTo(tmp_path / "heard.txt"),
    ) as proxy:
        with httpx2.Client(base_url=proxy.url) as http:
            assert http.post("/v1/messages", content=turn(0)).status_code == 200
        assert proxy.recorder is not None and proxy.recorder.wait(1)
        assert f"problem: store {store} cannot be opened" in proxy.status()
    assert (tmp_path / "heard.txt").read_text().splitlines() == ["arrived 1 c1", "finished 1 c1"]


def test_a_store_deleted_under_the_recorder_process_is_reported_and_started_anew(
    upstream: FaultUpstream, tmp_path: Path
) -> None:
    store = tmp_path / "deleted.sqlite"
    settings = {"upstream_anthropic": upstream.url, "recorder_process": LinesTo(tmp_path / "h")}
    with Proxy(store=store, port=0, **settings) as proxy:
        assert proxy.recorder is not None
        with httpx2.Client(base_url=proxy.url) as http:
            for count in range(2):
                assert http.post("/v1/messages", content=turn(count)).status_code == 200
            assert proxy.recorder.wait(2) and len(store_rows(store)) == 2
            for path in store.parent.glob(store.name + "*"):  # the file and its WAL
                path.unlink()
            assert http.post("/v1/messages", content=turn(2)).status_code == 200
            assert proxy.recorder.wait(3)
        assert "1 exchanges stored" in proxy.status()
        assert f"store {store} was deleted or replaced while the proxy ran" in proxy.status()
    assert len(store_rows(store)) == 1


def test_a_recorder_process_that_does_not_start_is_reported_and_forwarding_goes_on(
    upstream: FaultUpstream, tmp_path: Path
) -> None:
    store = tmp_path / "never.sqlite"
    failing = Failing("no listeners today")
    with (
        Proxy(
            store=store, port=0, upstream_anthropic=upstream.url, recorder_process=failing
        ) as proxy,
        httpx2.Client(base_url=proxy.url) as http,
    ):
        assert http.post("/v1/messages", content=turn(0)).status_code == 200
        assert "problem: the recorder process did not start (exit code 1)" in proxy.status()
    assert not store.exists()


def test_listeners_or_diagnostics_with_a_recorder_process_are_refused(tmp_path: Path) -> None:
    factory = LinesTo(tmp_path / "h")
    with pytest.raises(ValueError, match=r"listeners=.*diagnostics=False"):
        Proxy(port=0, listeners=[print], recorder_process=factory)
    with pytest.raises(ValueError, match="diagnostics=True"):
        Proxy(port=0, diagnostics=True, recorder_process=factory)
