"""Real agents' shapes replayed through the proxy to the emulator over HTTP: a Claude-Code-shaped
conversation built from Claude Code's captured request templates (askalf/dario, in the real
recordings), which upgrades Claude Code mid-conversation; a Codex 0.144-shaped one (its catalog
in a leading `additional_tools` item, function tools without `strict`); and the bodies of
claude-tap's Codex WebSocket trace (liaohch3/claude-tap) as a `previous_response_id` chain.
Each is forwarded, stored, grouped into one conversation and audited from the store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from dtl_notebook.cache import audit_capture, load_capture
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.proxy import Proxy
from dtl_notebook.wire import parse_response
from tests.cache.test_lenient_capture import codex_body

KEY = "sk-ant-api03-CLAUDECODEKEY0123456789"


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    with EmulatorServer() as upstream:
        origin = upstream.url
        store = tmp_path / "replay.sqlite"
        with Proxy(store=store, port=0, upstream_anthropic=origin, upstream_openai=origin) as p:
            yield p


def _template(root: Path, version: str) -> dict[str, Any]:
    return json.loads((root / "claude-code" / f"template-{version}.json").read_text())


def claude_code_request(template: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
    """A body as Claude Code writes one: system blocks with a cache marker, its whole tool
    list, the session in `metadata.user_id`, streamed, in its own field order."""
    body = {
        "model": "claude-sonnet-4-6",
        "messages": messages,
        "system": [
            {"type": "text", "text": template["agent_identity"]},
            {
                "type": "text",
                "text": template["system_prompt"],
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "tools": template["tools"],
        "metadata": {"user_id": "user_0f3a_account_session_77"},
        "max_tokens": 32000,
        "stream": True,
    }
    order = [k for k in template["body_field_order"] if k in body]
    return {k: body[k] for k in order}


def claude_code_headers(template: dict[str, Any]) -> dict[str, str]:
    headers = dict(template["header_values"])
    headers.update({"anthropic-beta": template["anthropic_beta"], "x-api-key": KEY})
    return headers


def _send(proxy: Proxy, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    reply = httpx2.post(f"{proxy.url}{path}", json=body, headers=headers, timeout=60)
    assert reply.status_code == 200, reply.text[:300]
    provider = "anthropic" if path == "/v1/messages" else "openai-responses"
    return reply, parse_response(reply.text, provider)


def _marked(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]


def test_a_claude_code_conversation_with_an_upgrade_midway(
    proxy: Proxy, real_recordings: Path
) -> None:
    old, new = _template(real_recordings, "2.1.216"), _template(real_recordings, "2.1.240")
    assert [t["name"] for t in old["tools"]] != [t["name"] for t in new["tools"]]
    turns = ["The test in tests/test_io.py fails; fix it.", "Now run it again.", "Commit it."]
    messages: list[Any] = []
    for number, text in enumerate(turns):
        template = old if number < 2 else new  # Claude Code updated between turns 2 and 3
        for message in messages:  # the marker moves to the newest user turn
            if isinstance(message["content"], list):
                for block in message["content"]:
                    block.pop("cache_control", None)
        messages.append({"role": "user", "content": _marked(text)})
        body = claude_code_request(template, messages)
        reply, parsed = _send(proxy, "/v1/messages", body, claude_code_headers(template))
        assert reply.headers["content-type"].startswith("text/event-stream")
        messages.append({"role": "assistant", "content": parsed.message.text or "ok"})
    assert proxy.store_queue is not None and proxy.store_queue.wait(3)
    store = proxy.config.store
    assert store is not None
    stored = load_capture(store)
    assert len(stored) == 3 and all(e.error is None for e in stored)
    assert KEY not in store.read_bytes().decode("utf-8", "replace")
    report = audit_capture(store)["anthropic"]
    assert report[1].cache_break is None and report[1].cached_tokens > 10_000
    upgrade = report[2].cache_break
    assert upgrade is not None and upgrade.cause == "tool_set_changed"
    added = {t["name"] for t in new["tools"]} - {t["name"] for t in old["tools"]}
    assert {f"+{name}" for name in added} <= set(upgrade.involved)
    assert all(e.reported is not None and e.disagreement is None for e in report)
    conversations = {row["conversation"] for row in _rows(store)}
    assert conversations == {"c1"}


def test_a_codex_shaped_conversation_is_forwarded_and_analysed(proxy: Proxy) -> None:
    body = codex_body("list the files", tools=12)
    body["instructions"] += " Work in small, reviewed steps; run the tests after each." * 120
    for text in ("and the tests?", "run them"):
        reply, parsed = _send(proxy, "/v1/responses", body, {"authorization": "Bearer sk-x"})
        body = {**body, "input": [*body["input"], *reply.json()["output"]]}
        body["input"].append(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )
        assert parsed.message is not None
    _send(proxy, "/v1/responses", body, {"authorization": "Bearer sk-x"})
    assert proxy.store_queue is not None and proxy.store_queue.wait(3)
    store = proxy.config.store
    assert store is not None
    exchanges = load_capture(store)
    assert all("12 function tools without `strict`" in e.notes[0] for e in exchanges)
    report = audit_capture(store)["openai-responses"]
    assert [e.cache_break for e in report] == [None, None, None]
    assert 0 < report[1].cached_tokens <= report[2].cached_tokens
    assert {row["conversation"] for row in _rows(store)} == {"c1"}  # one prompt_cache_key


def test_claude_taps_codex_websocket_bodies_replayed_as_a_chain(
    proxy: Proxy, real_recordings: Path
) -> None:
    trace = real_recordings / "claude-tap" / "codex_ws_multi_response_trace.jsonl"
    (line,) = trace.read_text().splitlines()
    events = json.loads(line)["request"]["ws_events"]
    live: dict[str, str] = {}  # the recorded response ids -> the emulator's
    recorded = iter(["resp_prefetch", "resp_tool", "resp_final"])
    for event in events:
        body = {k: v for k, v in event.items() if k != "type"}
        if "previous_response_id" in body:
            body["previous_response_id"] = live[body["previous_response_id"]]
        reply, _ = _send(proxy, "/v1/responses", body, {})
        created = json.loads(reply.text.split("data: ", 1)[1].split("\n", 1)[0])
        live[next(recorded)] = created["response"]["id"]
    assert proxy.store_queue is not None and proxy.store_queue.wait(3)
    store = proxy.config.store
    assert store is not None
    rows = _rows(store)
    assert [r["conversation"] for r in rows] == ["c1", "c1", "c1"]  # by previous_response_id
    exchanges = load_capture(store)
    assert exchanges[0].notes[0].startswith("generate: false")
    assert [e.request.get("previous_response_id") for e in exchanges] == [
        None,
        live["resp_prefetch"],
        live["resp_tool"],
    ]


def _rows(store: Path) -> list[dict[str, Any]]:
    from dtl_notebook.cache.store_reader import store_rows

    return store_rows(store)
