"""ProxyView outside a notebook: events handled in coalesced batches, a view attached after
a request arrived still shows it, keys never shown, conversations kept apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.notebook.proxy_view import ProxyView
from dtl_notebook.proxy import Event, Finished, Proxy
from tests.support.proxy_servers import FaultUpstream

KEY = "sk-ant-api03-VIEWKEY0123456789abcdef"
RULES = "You are a careful logistics assistant. Follow the house rules. " * 120


@pytest.fixture(scope="module")
def recorded() -> Iterator[list[Event]]:
    """The events of 20 requests of two interleaved agents, as the proxy reported them."""
    events: list[Event] = []
    with (
        EmulatorServer() as upstream,
        Proxy(port=0, listeners=[events.append], upstream_anthropic=upstream.url) as proxy,
    ):
        client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
        transcripts: dict[str, list[Any]] = {"a": [], "b": []}
        for turn in range(10):
            for agent, messages in transcripts.items():
                messages.append({"role": "user", "content": f"agent {agent}, step {turn}"})
                reply = client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=50,
                    system=f"{RULES} You are agent {agent}.",
                    messages=messages,
                    cache_control={"type": "ephemeral"},
                )
                messages.append({"role": "assistant", "content": reply.content})
        assert proxy.store_queue is not None and proxy.store_queue.wait(20)
    yield events


def test_a_burst_of_events_is_shown_in_a_few_updates(recorded: list[Event]) -> None:
    view = ProxyView()
    updates: list[Any] = []
    view.observe(lambda change: updates.append(change["new"]), "tail")
    for event in recorded:  # far faster than the view's batches
        view(event)
    assert view.wait(20)
    view.close()
    assert 1 <= len(updates) <= 10  # coalesced: not one per event
    assert [c["name"] for c in view.conversations] == ["c2", "c1"]
    assert len(view.records) == 10 and all(r.label == "proxied" for r in view.records)
    assert all(r.cache.reported is not None for r in view.records)
    later = view.records[1:]
    assert all(r.cache.cache_break is None and r.cache.cached_tokens > 1000 for r in later)
    assert [r.cache.cached_tokens for r in later] == [r.cache.reported.cached for r in later]
    view.conversation = "c1"
    assert view.header["title"].endswith("· c1") and len(view.records) == 10
    shown = repr(view.panes) + repr(view.tail) + repr(view.conversations)
    assert KEY not in shown


def test_a_view_attached_mid_request_shows_it_when_it_ends() -> None:
    with FaultUpstream() as upstream:
        upstream.gate.clear()
        proxy = Proxy(port=0)
        proxy.config.upstreams.update(anthropic=upstream.url)
        with proxy:
            body = {"model": "claude-sonnet-4-5", "max_tokens": 9, "system": RULES, "stream": True}
            body["messages"] = [{"role": "user", "content": "hi"}]
            headers = {"x-test-fault": "gate"}
            with httpx2.stream("POST", f"{proxy.url}/v1/messages", json=body, headers=headers) as r:
                chunks = r.iter_raw()
                next(chunks)
                view = ProxyView(proxy)
                assert proxy.store_queue is not None
                proxy.store_queue.listeners.append(view)  # its arrival was before the view
                upstream.gate.set()
                list(chunks)
            assert view.wait(1)
            (record,) = view.records
            assert record.label == "proxied, response not readable"
            assert record.cache.total_tokens > 500
            assert "running on" in view.header["status"]
        view.close()
        view.refresh()
        assert view.header["status"] == "stopped"


def test_a_refused_request_is_labelled_and_named(recorded: list[Event]) -> None:
    with FaultUpstream() as upstream:
        proxy = Proxy(port=0)
        proxy.config.upstreams.update(anthropic=upstream.url)
        view = ProxyView(proxy)
        proxy.listeners.append(view)
        with proxy:
            body = {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": []}
            reply = httpx2.post(
                f"{proxy.url}/v1/messages", json=body, headers={"x-test-fault": "500"}
            )
            assert reply.status_code == 500
            assert view.wait(1)
        (record,) = view.records
        assert record.label == "proxied, refused"
        assert record.notes[0] == "refused: HTTP 500 (no cache written for it)"
        finished = [e for e in recorded if isinstance(e, Finished)]
        assert len(finished) == 20
        view.close()
