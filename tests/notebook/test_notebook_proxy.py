"""`%dtl proxy start|stop|status` in an in-process IPython shell (notebook_shell.py), and the
live view it shows: predicted figures on arrival, reported ones and the provider's diagnosis
at completion, the break cause, a conversation picker; the real anthropic SDK as the agent,
the emulator over HTTP as the upstream."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from dtl_notebook.cache import audit_capture
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.notebook.proxy_view import ProxyView
from tests.support.notebook_shell import WIDGET_MIME, agent_magics, line_magic
from tests.support.proxy_servers import FaultUpstream

KEY = "sk-ant-api03-TESTKEY0123456789abcdef"
RULES = "You are a careful logistics assistant. Follow the house rules. " * 160  # past the minimum


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


@pytest.fixture
def shell(ip: InteractiveShell) -> Iterator[InteractiveShell]:
    yield ip
    magics = agent_magics(ip)
    if magics is not None:
        magics.commands.proxy.close()


def start(shell: InteractiveShell, origin: str, store: Path, *more: str) -> tuple[ProxyView, str]:
    line = (
        f"dtl proxy start --port 0 --store {store} --upstream-anthropic {origin} "
        f"--upstream-openai {origin} " + " ".join(more)
    )
    view, captured = line_magic(shell, line)
    assert isinstance(view, ProxyView)
    return view, captured.stdout


def naive_agent(base_url: str, system: str, turns: list[str]) -> list[Any]:
    """A plain SDK loop: the transcript grows, the system prompt is whatever it is given."""
    client = anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0)
    messages: list[Any] = []
    replies = []
    for text in turns:
        messages.append({"role": "user", "content": text})
        reply = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=100,
            system=system,
            cache_control={"type": "ephemeral"},  # automatic caching: the last block is cached
            messages=messages,
        )
        messages.append({"role": "assistant", "content": reply.content})
        replies.append(reply)
    return replies


def test_start_status_stop(
    shell: InteractiveShell, emulator: EmulatorServer, tmp_path: Path
) -> None:
    store = tmp_path / "traffic.sqlite"
    view, out = start(shell, emulator.url, store)
    url = view.proxy.url if view.proxy else ""
    assert f"proxy on {url}" in out and f"ANTHROPIC_BASE_URL={url}" in out
    assert f"OPENAI_BASE_URL={url}/v1" in out and str(store) in out
    _, status = line_magic(shell, "dtl proxy status")
    assert status.stdout.startswith(f"proxy running on {url}, store {store}")
    again, captured = line_magic(shell, "dtl proxy start")
    assert again is view and "already running" in captured.stdout
    naive_agent(url, RULES, ["where is order 7?", "and order 8?"])
    assert view.wait(2)
    _, stopped = line_magic(shell, "dtl proxy stop")
    assert stopped.stdout.strip() == f"proxy stopped: 2 exchanges stored in {store}"
    _, after = line_magic(shell, "dtl proxy status")
    assert after.stdout.startswith("proxy stopped")
    assert len(audit_capture(store)["anthropic"]) == 2
    _, twice = line_magic(shell, "dtl proxy stop")
    assert "no proxy is running" in twice.stdout


def test_unloading_the_extension_stops_the_proxy(
    shell: InteractiveShell, emulator: EmulatorServer, tmp_path: Path
) -> None:
    view, _ = start(shell, emulator.url, tmp_path / "s.sqlite")
    proxy = view.proxy
    assert proxy is not None and proxy.running
    shell.run_line_magic("unload_ext", "dtl_notebook")
    assert not proxy.running
    with pytest.raises(httpx2.ConnectError):
        httpx2.post(f"{proxy.url}/v1/messages", json={}, timeout=120)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("dtl proxy stop --port 9", "%dtl proxy stop takes no --port"),
        ("dtl proxy status --diagnostics", "takes no --diagnostics"),
        ("dtl proxy start --port 70000", "must be a number from 0 to 65535, got '70000'"),
        ("dtl proxy begin", "%dtl proxy action must be one of start, stop, status, got 'begin'"),
        (
            "dtl proxy start --port 0 --upstream-openai http://h:1/v1",
            "upstream_openai: 'http://h:1/v1' has a path",
        ),
    ],
)
def test_mistakes_are_one_line(shell: InteractiveShell, line: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        line_magic(shell, line)
    assert agent_magics(shell).commands.proxy.proxy is None


def test_a_taken_port_is_a_usage_error(shell: InteractiveShell, tmp_path: Path) -> None:
    with (
        FaultUpstream() as other,
        pytest.raises(UsageError, match=r"cannot listen on 127\.0\.0\.1:\d+"),
    ):
        line_magic(shell, f"dtl proxy start --port {other.port} --store {tmp_path / 's'}")


def test_the_view_predicts_on_arrival_and_completes_on_the_response(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    with FaultUpstream() as upstream:
        upstream.gate.clear()
        view, _ = start(shell, upstream.url, tmp_path / "s.sqlite")
        url = view.proxy.url if view.proxy else ""
        body = {"model": "claude-sonnet-4-5", "max_tokens": 9, "system": RULES, "stream": True}
        body["messages"] = [{"role": "user", "content": "hi"}]
        headers = {"x-test-fault": "gate", "x-api-key": KEY}
        with httpx2.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as reply:
            chunks = reply.iter_raw()
            next(chunks)
            deadline = time.monotonic() + 300  # a hang guard: the loop ends on arrival
            while not view.records and time.monotonic() < deadline:
                time.sleep(0.02)
            (record,) = view.records  # predicted while the response is held back
            assert record.label == "proxied, awaiting the response"
            assert record.cache.total_tokens > 500 and record.cache.reported is None
            assert view.count == 1 and "awaiting a response" in view.header["status"]
            assert view.tail["items"][0]["total"] == record.cache.total_tokens
            upstream.gate.set()
            list(chunks)
        assert view.wait(1)
        assert record.label == "proxied, response not readable"  # ping events only
        assert KEY not in repr(view.panes) + repr(view.tail)


def test_a_cache_break_live_with_the_providers_diagnosis(
    shell: InteractiveShell, emulator: EmulatorServer, tmp_path: Path
) -> None:
    view, _ = start(shell, emulator.url, tmp_path / "s.sqlite", "--diagnostics")
    url = view.proxy.url if view.proxy else ""
    naive_agent(url, RULES, ["hello"])
    naive_agent(url, RULES, ["track parcel 12"])
    assert view.wait(2)
    # two conversations (the second does not extend the first): the newest is shown
    assert [c["name"] for c in view.conversations] == ["c2", "c1"]
    assert view.header["title"].endswith("· c2")
    view.conversation = "c1"
    assert view.header["title"].endswith("· c1") and len(view.records) == 1
    view.conversation = ""
    client_turns = ["where is order 7?", "and order 8?", "and order 9?"]
    stamps = iter(["10:00:02", "10:00:03", "10:00:04"])
    client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
    messages: list[Any] = []
    for text in client_turns:  # a timestamp in the system prompt: every request breaks
        messages.append({"role": "user", "content": text})
        reply = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=100,
            system=f"{RULES} Time: {next(stamps)}",
            cache_control={"type": "ephemeral"},
            messages=messages,
        )
        messages.append({"role": "assistant", "content": reply.content})
    assert view.wait(5)
    assert [c["name"] for c in view.conversations] == ["c3", "c2", "c1"]
    shown = view.records
    assert [r.label for r in shown][-3:] == ["proxied"] * 3
    last = shown[-1]
    assert last.cache.reported is not None
    assert last.cache.cache_break is not None and last.cache.cache_break.cause == "system_changed"
    assert last.cache.diagnosis is not None and last.cache.diagnosis.reason == "system_changed"
    assert last.cache.diagnosis_agreement == "agree"
    assert last.notes[0].startswith("diagnostics.previous_message_id = msg_")  # it says so
    assert "system_changed" in view.panes["context"] and "agree" in view.panes["context"]
    item = view.tail["items"][-1]
    assert item["reported"]["cached"] == last.cache.reported.cached and item["break"]
    # the conversation's warmth (an expiry the page counts down to) and health, in the header
    warmth = last.cache.warmth
    assert warmth is not None and item["warmth"]["expires_at"] == warmth.expires_at
    warm, health = view.header["warm"], view.header["health"]
    assert warm["expires_at"] == warmth.expires_at and warm["clock"] < warmth.expires_at
    assert health["requests"] == 3 and health["words"].startswith("hit ")
    # the changed system prompt lost its prefix: a collapse, on its box and in the header
    assert last.miss is not None and last.miss.reason == "changed"
    assert item["miss"]["code"] == "system_changed"
    assert "cache miss (changed, system_changed)" in view.header["miss"]


def test_the_view_displays_as_a_widget_with_a_static_fallback(
    shell: InteractiveShell, emulator: EmulatorServer, tmp_path: Path
) -> None:
    view, _ = start(shell, emulator.url, tmp_path / "s.sqlite")
    data, _meta = view._repr_mimebundle_()
    assert WIDGET_MIME in data and "text/html" in data
    assert repr(view).startswith("ProxyView(running on http://127.0.0.1:")
    assert "render: renderProxy }" in ProxyView._esm
    assert ProxyView._esm.count("export default") == 1
