"""One conversation per agent session, on the agents' own request shapes, and no break across
sessions or between interleaved parallel agents (the audit, the captured view, the grouping).

Claude Code's system prompt and tools come from its real request template
(../shared/fixtures/real/claude-code, from askalf/dario, read through `real_recordings`); the
Codex body is the 0.144 shape of test_lenient_capture and Codex's WebSocket trace is
claude-tap's (../shared/fixtures/real/claude-tap); OpenCode's title request and Anthropic
thread continuations are built here in the shapes those clients send.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.__main__ import main
from dtl_notebook.cache import audit_capture, load_capture
from dtl_notebook.cache.analyze import analyze_conversations
from dtl_notebook.cache.conversation_key import Conversations, conversation_names
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.notebook.records import from_capture
from dtl_notebook.proxy import Proxy
from tests.cache.test_lenient_capture import codex_body

EPH = {"type": "ephemeral"}
KEY = "sk-ant-api03-TESTKEY0123456789abcdef"
JSON = dict[str, Any]


def claude_code(template: JSON, session: str, turns: int) -> list[JSON]:
    """A Claude Code session of `turns` requests: the template's system and tools, the session
    id in `metadata.user_id`, and the trailing system message sent as a marked one-block list on
    the first request and as a plain string afterwards (as Claude Code sends it)."""
    note = "The date is 2026-12-07."
    messages: list[JSON] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "fix the tests", "cache_control": EPH}],
        },
        {"role": "system", "content": [{"type": "text", "text": note, "cache_control": EPH}]},
    ]
    bodies = []
    for turn in range(turns):
        if turn:
            messages = copy.deepcopy(messages)
            for message in messages:  # the marker moves to the newest message
                if isinstance(message["content"], list):
                    message["content"][-1].pop("cache_control", None)
            messages[1]["content"] = note
            messages += [
                {"role": "assistant", "content": f"step {turn} done"},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": f"go on {turn}", "cache_control": EPH}],
                },
            ]
        bodies.append(
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 32000,
                "system": [
                    {"type": "text", "text": template["system_prompt"], "cache_control": EPH}
                ],
                "tools": template["tools"],
                "messages": messages,
                "metadata": {"user_id": f"user_abc_account_1_session_{session}"},
            }
        )
    return bodies


def codex(session: str, turns: int) -> list[JSON]:
    """A Codex session: its session id as `prompt_cache_key`, the input growing by a reply and
    a turn per request."""
    body = codex_body()
    body["prompt_cache_key"] = session
    bodies = [body]
    for turn in range(1, turns):
        body = copy.deepcopy(body)
        body["input"] += [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"did {turn}"}],
            },
            {"role": "user", "content": f"next {turn}"},
        ]
        bodies.append(body)
    return bodies


def _capture(tmp_path: Path, bodies: list[JSON]) -> Path:
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps({"request": b}) + "\n" for b in bodies), encoding="utf-8")
    return path


def _names(provider: str, bodies: list[JSON]) -> list[str]:
    return list(conversation_names((provider, b, None) for b in bodies))


def test_a_claude_code_session_is_one_conversation_whatever_form_its_system_note_takes(
    real_recordings: Path,
) -> None:
    template = json.loads((real_recordings / "claude-code" / "template-2.1.240.json").read_text())
    one = claude_code(template, "s1", 4)
    assert one[0]["messages"][1]["content"] != one[1]["messages"][1]["content"]  # list, string
    assert len(set(_names("anthropic", one))) == 1
    report = analyze_conversations(one, "anthropic", [None] * len(one))
    assert [e.cache_break for e in report.entries] == [None] * 4
    assert report.entries[1].cached_tokens > 0  # request 2 reads what request 1 wrote


def test_two_claude_code_sessions_are_two_conversations_and_no_error(
    real_recordings: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = json.loads((real_recordings / "claude-code" / "template-2.1.240.json").read_text())
    bodies = claude_code(template, "s1", 3) + claude_code(template, "s2", 3)
    assert _names("anthropic", bodies) == ["c1"] * 3 + ["c2"] * 3
    path = _capture(tmp_path, bodies)
    assert [e.cache_break for e in audit_capture(path)["anthropic"].entries] == [None] * 6
    with pytest.raises(SystemExit) as done:
        main(["audit", str(path), "--fail-on", "error"])
    assert done.value.code in (0, None)
    assert "history_rewritten" not in capsys.readouterr().out


def test_codex_sessions_are_told_apart_by_their_cache_key() -> None:
    bodies = codex("session-a", 3) + codex("session-b", 3)
    assert _names("openai-responses", bodies) == ["c1"] * 3 + ["c2"] * 3
    report = analyze_conversations(bodies, "openai-responses", [None] * 6)
    assert [e.cache_break for e in report.entries] == [None] * 6


def test_a_real_codex_websocket_session_is_one_conversation(real_recordings: Path) -> None:
    """claude-tap's sanitized Codex trace (liaohch3/claude-tap, tests/fixtures): a prefetch,
    a tool call and a final answer, chained by `previous_response_id` although each request
    carries another `prompt_cache_key`."""
    path = real_recordings / "claude-tap" / "codex_ws_multi_response_trace.jsonl"
    exchanges = [e for e in load_capture(path) if e.error is None]
    triples = [(e.provider, e.request, e.response) for e in exchanges]
    assert len({e.request.get("prompt_cache_key") for e in exchanges}) == 3
    assert list(conversation_names(triples)) == ["c1"] * 3


def test_opencodes_title_request_is_its_own_conversation() -> None:
    """OpenCode names a session with a separate request on a small model that repeats the
    session's first user message: its own conversation, no model change in the session."""
    first = {"role": "user", "content": "add a login page"}
    main_1 = {"model": "claude-sonnet-4-5", "system": "You are OpenCode.", "messages": [first]}
    title = {"model": "claude-haiku-4-5", "system": "Write a title.", "messages": [first]}
    main_2 = copy.deepcopy(main_1)
    main_2["messages"] += [
        {"role": "assistant", "content": "On it."},
        {"role": "user", "content": "use the form component"},
    ]
    bodies = [main_1, title, main_2]
    assert _names("anthropic", bodies) == ["c1", "c2", "c1"]
    report = analyze_conversations(bodies, "anthropic", [None] * 3)
    assert [e.cache_break for e in report.entries] == [None] * 3


def test_thread_continuations_and_response_ids_link_to_their_conversation() -> None:
    grouping = Conversations()
    create = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "start"}]}
    other = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "unrelated"}]}
    name = grouping.assign("anthropic", create)
    grouping.answered(name, "msg_1")
    assert grouping.assign("anthropic", other) != name
    continuation = {
        "model": "claude-sonnet-4-5",
        "thread": {"type": "continue", "previous_message_id": "msg_1"},
        "messages": [{"role": "user", "content": "and then"}],
    }
    assert grouping.assign("anthropic", continuation) == name
    # the whole history, sent again after the thread expired, still extends the conversation
    again = copy.deepcopy(create)
    again["messages"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "x"}]
    assert grouping.assign("anthropic", again) == name


def _session(agent: int, turns: int) -> list[JSON]:
    """An append-only Anthropic conversation whose prefix is long enough to be cached; the
    newest turn is a marked one-block list, the same turn a plain string in the next request."""
    system = f"Agent {agent}. " + "Follow the house rules carefully. " * 400
    history: list[JSON] = []
    bodies = []
    for turn in range(turns):
        if turn:
            history.append({"role": "assistant", "content": f"agent {agent} answer {turn}"})
        text = f"agent {agent} task {turn}"
        newest = {"role": "user", "content": [{"type": "text", "text": text, "cache_control": EPH}]}
        bodies.append(
            {"model": "claude-sonnet-4-5", "system": system, "messages": [*history, newest]}
        )
        history.append({"role": "user", "content": text})
    return bodies


def test_two_interleaved_agents_give_no_break_in_the_audit_or_the_view(tmp_path: Path) -> None:
    a, b = _session(1, 6), _session(2, 6)
    interleaved = [body for pair in zip(a, b, strict=True) for body in pair]
    path = _capture(tmp_path, interleaved)
    entries = audit_capture(path)["anthropic"].entries
    assert [e.index for e in entries] == list(range(12))
    assert [e.cache_break for e in entries] == [None] * 12
    assert all(e.cached_tokens > 0 for e in entries[2:])
    assert [r.cache.cache_break for r in from_capture(path)] == [None] * 12


@st.composite
def interleavings(draw: st.DrawFn) -> tuple[list[tuple[int, JSON]], int]:
    agents = draw(st.integers(1, 5))
    queues = [
        [(agent, b) for b in _session(agent, draw(st.integers(1, 4)))] for agent in range(agents)
    ]
    order = []
    while any(queues):
        order.append(draw(st.sampled_from([q for q in queues if q])).pop(0))
    return order, agents


@settings(max_examples=40, deadline=None)
@given(interleavings())
def test_any_interleaving_of_n_conversations_groups_back_into_n_with_no_break(
    case: tuple[list[tuple[int, JSON]], int],
) -> None:
    order, agents = case
    bodies = [body for _, body in order]
    names = _names("anthropic", bodies)
    by_agent: dict[int, set[str]] = {}
    for (agent, _), name in zip(order, names, strict=True):
        by_agent.setdefault(agent, set()).add(name)
    assert all(len(n) == 1 for n in by_agent.values())
    assert len(set(names)) == agents
    report = analyze_conversations(bodies, "anthropic", [None] * len(bodies))
    assert [e.cache_break for e in report.entries] == [None] * len(bodies)


def test_hundreds_of_interleaved_conversations_stay_apart() -> None:
    """Each request is grouped by hash look-ups: 200 agents of 10 turns, round robin."""
    grouping = Conversations()
    history: dict[int, list[JSON]] = {agent: [] for agent in range(200)}
    names: dict[int, set[str]] = {}
    for turn in range(10):
        for agent, messages in history.items():
            messages.append({"role": "user", "content": f"{agent}:{turn}"})
            name = grouping.assign("anthropic", {"model": "m", "messages": messages})
            names.setdefault(agent, set()).add(name)
            messages.append({"role": "assistant", "content": "ok"})
    assert all(len(n) == 1 for n in names.values())
    assert len(grouping) == 200


def test_the_proxy_keeps_a_claude_code_session_one_conversation_and_diagnoses_it(
    tmp_path: Path,
) -> None:
    """Through the proxy in front of the emulator, with cache diagnostics on: request 2 (its
    system note now a plain string) joins request 1 and is compared with its response."""
    note = {"role": "system", "content": [{"type": "text", "text": "Note.", "cache_control": EPH}]}
    first = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}, note],
    }
    store = tmp_path / "cc.sqlite"
    with (
        EmulatorServer() as emulator,
        Proxy(store=store, port=0, diagnostics=True, upstream_anthropic=emulator.url) as proxy,
    ):
        with httpx2.Client(base_url=proxy.url, headers={"x-api-key": KEY}) as client:
            reply = client.post("/v1/messages", json=first).json()
            second = copy.deepcopy(first)
            second["messages"][1] = {"role": "system", "content": "Note."}
            second["messages"] += [
                {"role": "assistant", "content": reply["content"][0]["text"]},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "more", "cache_control": EPH}],
                },
            ]
            assert client.post("/v1/messages", json=second).status_code == 200
        assert proxy.store_queue is not None and proxy.store_queue.wait(2)
    stored = load_capture(store)
    assert stored[1].request["diagnostics"] == {"previous_message_id": reply["id"]}
    with closing(sqlite3.connect(store)) as db:
        rows = db.execute("SELECT conversation FROM exchanges ORDER BY number").fetchall()
    assert rows == [("c1",), ("c1",)]


def test_an_id_told_again_late_never_makes_an_older_response_the_latest() -> None:
    """The proxy learns a response id as its exchange ends and again once it is stored, which
    may come after the next exchange has ended: the latest stays the latest."""
    from dtl_notebook.cache.conversation_key import Conversations

    grouping = Conversations()
    name = grouping.assign(
        "anthropic", {"model": "m", "messages": [{"role": "user", "content": "a"}]}
    )
    grouping.answered(name, "msg_2")
    grouping.answered(name, "msg_3")
    grouping.answered(name, "msg_2")  # the store's late word on the earlier exchange
    assert grouping.latest_response(name) == "msg_3"
