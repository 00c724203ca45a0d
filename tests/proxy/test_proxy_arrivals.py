"""Listeners hear of a request as it arrives (before its response has come back) and again
when it finishes; with diagnostics on, the proxy adds the providers' cache-diagnostics field
against the conversation's latest response, and says so."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from dtl_notebook.cache import load_capture
from dtl_notebook.cache.diagnostics import provider_diagnosis
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.proxy import Arrived, Finished, Proxy, Summary
from dtl_notebook.proxy.diagnostics import with_diagnostics
from tests.support.proxy_servers import FaultUpstream
from tests.support.recorder_listeners import Heard

SYSTEM = "You are a careful logistics assistant. Follow the house rules. " * 160  # past the minimum
KEY = "sk-ant-api03-TESTKEY0123456789abcdef"


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def test_a_request_is_heard_on_arrival_before_its_response_ends(tmp_path: Path) -> None:
    heard = Heard()
    with FaultUpstream() as upstream:
        origin = upstream.url
        upstream.gate.clear()
        proxy = Proxy(store=tmp_path / "s.sqlite", port=0, listeners=[heard])
        proxy.config.upstreams.update(anthropic=origin, openai=origin)
        with proxy:
            body = {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": [], "stream": True}
            headers = {"x-test-fault": "gate", "x-api-key": KEY}
            with httpx2.stream(
                "POST", f"{proxy.url}/v1/messages", json=body, headers=headers, timeout=10
            ) as reply:
                chunks = reply.iter_raw()
                next(chunks)
                (arrived,) = heard.wait_for(1)  # the response is still held back
                assert isinstance(arrived, Arrived)
                assert (arrived.number, arrived.path) == (1, "/v1/messages")
                assert arrived.request == body and arrived.edited is None
                upstream.gate.set()
                list(chunks)
            events = heard.wait_for(2)
    assert isinstance(events[1], Finished) and events[1].number == 1
    assert KEY not in repr(events)


def test_conversations_are_named_on_arrival(emulator: EmulatorServer) -> None:
    heard = Heard()
    origin = emulator.url
    with Proxy(port=0, listeners=[heard], upstream_anthropic=origin) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
        messages: list[dict[str, object]] = [{"role": "user", "content": "where is order 7?"}]
        first = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=50,
            system=SYSTEM,
            messages=messages,
            cache_control={"type": "ephemeral"},
        )
        messages += [
            {"role": "assistant", "content": first.content[0].text},
            {"role": "user", "content": "and order 8?"},
        ]
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=50,
            system=SYSTEM,
            messages=messages,
            cache_control={"type": "ephemeral"},
        )
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=50,
            system="Another agent.",
            messages=[{"role": "user", "content": "hi"}],
        )
        events = heard.wait_for(6)
    kinds = [(type(e).__name__, e.number) for e in events]
    assert kinds == [(k, n) for n in (1, 2, 3) for k in ("Arrived", "Finished")]
    arrivals = [e for e in events if isinstance(e, Arrived)]
    assert [a.conversation for a in arrivals] == ["c1", "c1", "c2"]
    assert [e.conversation for e in events if isinstance(e, Finished)] == ["c1", "c1", "c2"]


def test_diagnostics_added_against_the_conversations_latest_response(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    heard = Heard()
    store = tmp_path / "diag.sqlite"
    origin = emulator.url
    with Proxy(
        store=store,
        port=0,
        listeners=[heard],
        diagnostics=True,
        upstream_anthropic=origin,
        upstream_openai=origin,
    ) as proxy:
        assert "cache-diagnostics" in proxy.status()
        client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
        messages: list[dict[str, object]] = [{"role": "user", "content": "where is order 7?"}]
        first = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=50,
            system=SYSTEM,
            messages=messages,
            cache_control={"type": "ephemeral"},
        )
        messages += [
            {"role": "assistant", "content": first.content[0].text},
            {"role": "user", "content": "and order 8?"},
        ]
        second = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=50,
            system=SYSTEM + " Today.",
            messages=messages,
            cache_control={"type": "ephemeral"},
        )
        oai = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-proj-TEST0123456789")
        one = oai.responses.create(model="gpt-5.6", input="hello", prompt_cache_key="k1")
        two = oai.responses.create(
            model="gpt-5.6", input="hello again", previous_response_id=one.id
        )
        assert proxy.recorder is not None and proxy.recorder.wait(4)
        events = heard.wait_for(8)
    arrivals = [e for e in events if isinstance(e, Arrived)]
    assert [a.edited for a in arrivals] == [
        "diagnostics.previous_message_id = null (added by the proxy)",
        f"diagnostics.previous_message_id = {first.id} (added by the proxy)",
        None,  # a first Responses request has nothing to compare with
        f"prompt_cache_options.comparison_response_id = {one.id} (added by the proxy)",
    ]
    stored = load_capture(store)
    assert stored[1].request["diagnostics"] == {"previous_message_id": first.id}
    diagnosis = provider_diagnosis(second.model_dump(), "anthropic", stored[1].request)
    assert diagnosis is not None and diagnosis.reason == "system_changed"
    assert stored[3].request["prompt_cache_options"]["comparison_response_id"] == one.id
    dumped = two.model_dump()
    assert provider_diagnosis(dumped, "openai-responses") is not None


def test_without_diagnostics_nothing_is_edited(emulator: EmulatorServer) -> None:
    with Proxy(port=0, upstream_anthropic=emulator.url) as proxy:
        body = {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": []}
        raw = json.dumps(body, indent=3).encode()  # odd spacing, kept as it came
        httpx2.post(f"{proxy.url}/v1/messages", content=raw, timeout=10)
        assert emulator.received[-1] == raw


def test_a_request_that_asks_itself_is_left_as_it_came() -> None:
    body = {"model": "claude-sonnet-4-5", "diagnostics": {"previous_message_id": "msg_1"}}
    assert with_diagnostics(body, "anthropic", "msg_2") is None
    responses = {"model": "gpt-5.4", "prompt_cache_options": {"comparison_response_id": "r"}}
    assert with_diagnostics(responses, "openai-responses", "r2") is None
    assert with_diagnostics({"model": "gpt-4o"}, "openai-chat", "x") is None
    # a model before GPT-5.6 takes no prompt_cache_options: the proxy would break the agent
    assert with_diagnostics({"model": "gpt-5.4"}, "openai-responses", "r") is None


def test_the_terminal_summary_one_line_per_request(emulator: EmulatorServer) -> None:
    lines: list[str] = []
    summary = Summary(lines.append)
    origin = emulator.url
    with Proxy(port=0, listeners=[summary], diagnostics=True, upstream_anthropic=origin) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "where is order 7?"}]
        rules = SYSTEM * 3  # above the model's minimum cacheable prefix
        for system in (rules, rules, rules + " Time: 09:01"):
            reply = client.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=50,
                system=system,
                messages=messages,
                cache_control={"type": "ephemeral"},
            )
            messages += [
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": "and then?"},
            ]
        assert proxy.recorder is not None and proxy.recorder.wait(3)
    summary.close()
    alerts = [line for line in lines if line.startswith("  ! ")]
    lines = [line for line in lines if not line.startswith("  ! ")]
    assert [line.split()[:5] for line in lines] == [
        [f"#{n}", "c1", "anthropic", "claude-sonnet-4-5", "200"] for n in (1, 2, 3)
    ]
    first, second, third = lines
    # what each left warm (5 minutes, no gap yet to judge the next request by) and the
    # conversation's hit rate and money so far
    assert re.search(r"\| warm [\d,]+ tok [45]m\d\ds left \(until [\d:]+ UTC\)", first)
    assert "| hit 0% · $" in first and "uncached" in first
    assert re.search(r"\| hit [1-9]\d?% · \$", second)
    # the changed system prompt: a collapse, named with its reason, code and fix
    assert len(alerts) == 1 and alerts[0].startswith(
        "  ! #3 c1 cache miss (changed, system_changed)"
    )
    assert "fix:" in alerts[0]
    assert "break:" not in first + second and "provider: hit (agree)" in second
    found = re.search(r"reported (\d+)/(\d+)/(\d+) predicted (\d+)/(\d+)/(\d+)", second)
    assert found is not None
    reported, predicted = found.groups()[:3], found.groups()[3:]
    assert int(reported[0]) > 500 and reported[0] == predicted[0]  # the prefix read back
    assert "break: system_changed" in third
    assert "provider: system_changed (" in third and third.endswith("(agree)")
    assert KEY not in "\n".join(lines)
