"""The provider's cache is the scope's, not the conversation's (`cache.prefix_store`).

A session that repeats a prefix another session wrote within its lifetime is predicted warm
on its first request; a new session is never a break; one that departs from the prefix the
scope holds warm (a tool list changed between two runs) is `shared_prefix_lost`; a read the
provider reports proves the prefix exists. Claude Code's two template versions come from
../shared/fixtures/real/claude-code (askalf/dario), read through `real_recordings`.
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
from dtl_notebook.cache.analyze import CacheAnalyzer, analyze, analyze_conversations
from dtl_notebook.cache.audit import audit_capture
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.cache.stream_audit import audit_stream
from dtl_notebook.context.model import model_context
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.proxy import Proxy, Summary
from tests.cache.test_conversation_identity import claude_code

JSON = dict[str, Any]
VERSIONS = ("2.1.216", "2.1.240")  # Claude Code templates in ../shared/fixtures/real/claude-code
EPH = {"type": "ephemeral"}
SYSTEM = "You are a careful coding agent. " + "Follow the house rules for every change. " * 160


def tool(name: str) -> JSON:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    return {"name": name, "description": f"{name} a file in the project", "input_schema": schema}


TOOLS = [tool(n) for n in ("read", "write", "list", "grep", "move", "delete")]


def session(user: str, turns: int, tools: list[JSON] = TOOLS, run: str = "") -> list[JSON]:
    """One Anthropic session (of run `run`): a marked system prompt, the tools, a marker on the
    last message."""
    bodies, messages = [], [{"role": "user", "content": user}]
    for turn in range(turns):
        if turn:
            messages = [*messages, {"role": "assistant", "content": f"done {turn}"}]
            messages.append({"role": "user", "content": f"{user}, step {turn}"})
        marked = copy.deepcopy(messages)
        marked[-1]["content"] = [
            {"type": "text", "text": marked[-1]["content"], "cache_control": EPH}
        ]
        bodies.append(
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "system": [{"type": "text", "text": SYSTEM, "cache_control": EPH}],
                "tools": tools,
                "messages": marked,
                "metadata": {"user_id": f"user_1_session_{user}{run}"},
            }
        )
    return bodies


def _capture(tmp_path: Path, bodies: list[JSON]) -> Path:
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps({"request": b}) + "\n" for b in bodies), encoding="utf-8")
    return path


def _exit(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(argv)
    return int(done.value.code or 0)


def test_a_new_session_reads_the_prefix_another_session_wrote() -> None:
    one, two = session("fix the tests", 2), session("write the docs", 2)
    report = analyze_conversations(one + two, "anthropic", [None] * 4)
    first_of_two = report.entries[2]
    assert first_of_two.cache_break is None  # a new session is never a break
    system_and_tools = report.entries[0].written_tokens - 20  # all but the short user message
    assert first_of_two.cached_tokens >= system_and_tools > 1024
    alone = analyze(two, "anthropic")  # the per-conversation view would have said cold
    assert alone.entries[0].cached_tokens == 0


def test_two_normal_sessions_give_no_error_and_the_audit_passes(tmp_path: Path) -> None:
    path = _capture(tmp_path, session("fix the tests", 3) + session("write the docs", 3))
    groups = audit_stream(path)
    assert len(groups) == 2
    found = [f for g in groups for f in g.findings]
    assert [f.code for f in found if f.severity == "error"] == []
    assert "shared_prefix_lost" not in {f.code for f in found}
    assert _exit(["audit", str(path), "--fail-on", "error"]) == 0


def test_a_tool_list_changed_between_two_runs_is_a_lost_shared_prefix(tmp_path: Path) -> None:
    changed = [*TOOLS[:2], tool("rename"), *TOOLS[2:]]  # one tool added in the middle
    path = _capture(
        tmp_path, session("fix the tests", 2) + session("fix the tests", 2, changed, "b")
    )
    found = [f for g in audit_stream(path) for f in g.findings]
    lost = [f for f in found if f.code == "shared_prefix_lost"]
    assert len(lost) == 1
    assert lost[0].index == 0 and lost[0].where is not None and lost[0].where.startswith("tools")
    assert lost[0].involved[0] == "tools" and lost[0].lost_tokens > 1000
    assert lost[0].severity == "warning"
    assert [f.code for f in found if f.severity == "error"] == []
    assert _exit(["audit", str(path), "--fail-on", "error"]) == 0
    assert _exit(["audit", str(path), "--fail-on", "shared_prefix_lost"]) == 1


def test_a_subagent_with_its_own_prompt_loses_nothing() -> None:
    other = [tool(n) for n in ("search", "fetch")]
    sub = session("look it up", 1, other)
    sub[0]["system"][0]["text"] = "You search the web and answer briefly. " * 60
    report = analyze_conversations(session("fix the tests", 2) + sub, "anthropic", [None] * 3)
    assert report.entries[2].shared_lost is None
    assert report.entries[2].cache_break is None


def test_an_expired_prefix_is_neither_read_nor_lost() -> None:
    store = PrefixStore()
    analyze(session("fix the tests", 1), "anthropic", times=[0.0], store=store)
    changed = [*TOOLS[:2], tool("rename"), *TOOLS[2:]]
    later = analyze(session("again", 1, changed), "anthropic", times=[301.0], store=store)
    assert later.entries[0].cached_tokens == 0
    assert later.entries[0].shared_lost is None
    warm = analyze(session("again", 1), "anthropic", times=[302.0], store=store)
    assert warm.entries[0].cached_tokens == 0  # what the first session wrote is gone


def test_a_reported_read_proves_the_prefix_exists() -> None:
    """Issue 32: a first request reports reading tokens written by a request we never saw
    (4,167 in the recording); the follow-up with the same prefix must not be predicted cold."""
    first, follow = session("fix the tests", 2)
    first = copy.deepcopy(first)
    first["system"][0].pop("cache_control")
    first["messages"][-1]["content"][-1].pop("cache_control")  # it writes nothing itself
    segments = model_context(first, provider="anthropic").segments
    proved = sum(s.tokens for s in segments if s.kind != "message")  # system and tools
    usage = {"input_tokens": 20, "cache_read_input_tokens": proved, "output_tokens": 5}
    reply = {"role": "assistant", "content": [], "usage": usage}

    unseen = CacheAnalyzer("anthropic")
    unseen.add(first)  # without the answer: nothing is known to exist
    assert unseen.add(follow).cached_tokens == 0

    told = CacheAnalyzer("anthropic")
    assert told.add(first, reply).cached_tokens == 0  # predicted before the answer
    read = told.add(follow).cached_tokens
    assert read == proved  # up to the last block end inside what was read


VARIANTS = [TOOLS, TOOLS[:4], [*TOOLS[:2], tool("rename"), *TOOLS[2:]]]
TTL = 300.0  # Anthropic's default lifetime


def _leading(body: JSON) -> list[tuple[str, str, int]]:
    return [(s.kind, s.text, s.tokens) for s in model_context(body, provider="anthropic").segments]


def _common_tokens(a: list[tuple[str, str, int]], b: list[tuple[str, str, int]]) -> int:
    total = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        total += x[2]
    return total


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # tool list
            st.integers(0, 2),  # session
            st.integers(1, 3),  # turns
            st.sampled_from([0.0, 5.0, 200.0, 299.0, 301.0, 900.0]),  # seconds since the last
        ),
        min_size=1,
        max_size=7,
    )
)
def test_a_prediction_never_exceeds_what_the_scope_holds_unexpired(
    plan: list[tuple[int, int, int, float]],
) -> None:
    """Whatever sessions send when: each request reads at most the longest prefix it shares
    with an earlier request sent within the lifetime (a write, or a read that refreshed it),
    and nothing at all where every earlier request is older than the lifetime."""
    store = PrefixStore()
    analyzers: dict[int, CacheAnalyzer] = {}
    sent: list[tuple[float, list[tuple[str, str, int]]]] = []
    now = 0.0
    for variant, user, turns, gap in plan:
        now += gap
        body = session(f"task {user}", turns, VARIANTS[variant], run=str(variant))[-1]
        analyzer = analyzers.setdefault(user * 3 + variant, CacheAnalyzer("anthropic", store=store))
        entry = analyzer.add(body, at=now)
        mine = _leading(body)
        recent = [seen for at, seen in sent if now - at <= TTL]
        assert entry.cached_tokens <= max((_common_tokens(s, mine) for s in recent), default=0)
        sent.append((now, mine))


def responses(user: str, key: str | None) -> JSON:
    body: JSON = {
        "model": "gpt-5",
        "instructions": SYSTEM,
        "input": [{"role": "user", "content": user}],
    }
    if key is not None:
        body["prompt_cache_key"] = key
    return body


def test_openai_sessions_share_a_prefix_only_under_the_same_cache_key() -> None:
    store = PrefixStore()
    first = analyze([responses("fix the tests", "agent")], "openai-responses", store=store)
    assert first.entries[0].cached_tokens == 0
    again = analyze([responses("write the docs", "agent")], "openai-responses", store=store)
    assert again.entries[0].cached_tokens >= 1024  # a new session, predicted warm
    elsewhere = analyze([responses("write the docs", "other")], "openai-responses", store=store)
    assert elsewhere.entries[0].cached_tokens == 0  # routed by another key: not predicted


def test_the_store_stays_within_its_bound_expired_entries_first() -> None:
    store = PrefixStore(max_prefixes=40)
    for k in range(30):
        analyze(session(f"task {k}", 2), "anthropic", times=[k * 10.0, k * 10.0 + 1], store=store)
        assert store.size() <= 40
    latest = analyze(session("task 29", 3), "anthropic", times=[292.0, 293.0, 294.0], store=store)
    assert latest.entries[1].cached_tokens > 1024  # the newest entries are the ones kept
    with pytest.raises(ValueError, match="max_prefixes"):
        PrefixStore(max_prefixes=0)


def test_each_prediction_names_its_scope_and_how_sure_it_is() -> None:
    openai = analyze([responses("fix the tests", "agent")], "openai-responses").entries[0]
    assert openai.scope == "model and prompt_cache_key routing, best effort"
    anthropic = analyze(session("fix the tests", 1), "anthropic").entries[0]
    assert anthropic.scope == "organization and model"


def test_claude_code_upgraded_between_two_runs_loses_its_shared_prefix(
    real_recordings: Path,
) -> None:
    """Claude Code 2.1.216 then 2.1.240 (their real system prompt and tools, askalf/dario):
    the second run's first request misses the whole prefix the first run left warm; two runs
    of one version share it."""
    folder = real_recordings / "claude-code"
    old, new = (json.loads((folder / f"template-{v}.json").read_text()) for v in VERSIONS)
    upgraded = claude_code(old, "s1", 2) + claude_code(new, "s2", 2)
    report = analyze_conversations(upgraded, "anthropic", [None] * 4)
    lost = report.entries[2].shared_lost
    assert lost is not None and lost.part == "tools" and lost.tokens > 30_000
    assert [e.cache_break for e in report.entries] == [None] * 4
    same = analyze_conversations(
        claude_code(new, "s1", 2) + claude_code(new, "s2", 2), "anthropic", [None] * 4
    )
    assert same.entries[2].shared_lost is None
    assert same.entries[2].cached_tokens == same.entries[0].written_tokens  # read it all


def _through_proxy(tmp_path: Path, bodies: list[JSON]) -> Path:
    store = tmp_path / "runs.sqlite"
    with (
        EmulatorServer() as emulator,
        Proxy(store=store, port=0, upstream_anthropic=emulator.url) as proxy,
    ):
        with httpx2.Client(base_url=proxy.url, headers={"x-api-key": "sk-ant-test"}) as client:
            for body in bodies:
                assert client.post("/v1/messages", json=body).status_code == 200
        assert proxy.store_queue is not None and proxy.store_queue.wait(2)
    return store


def test_a_proxy_store_is_audited_on_its_own_clock(tmp_path: Path) -> None:
    """Two runs of one agent through the proxy: read as sent, the second run's first request
    reads the first run's prefix; with the second run an hour later, that prefix expired."""
    store = _through_proxy(tmp_path, session("fix the tests", 2) + session("write the docs", 2))
    assert audit_capture(store)["anthropic"].entries[2].cached_tokens > 1024
    with closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE exchanges SET started = started + 3600 WHERE number > 2")
    later = audit_capture(store)["anthropic"].entries
    assert later[2].cached_tokens == 0 and later[2].shared_lost is None
    assert later[3].cached_tokens > 1024  # the second run's own prefix, seconds old
    codes = {f.code for g in audit_stream(store) for f in g.findings}
    assert "shared_prefix_lost" not in codes and "history_rewritten" not in codes


def test_the_proxy_line_names_a_lost_shared_prefix_not_a_break() -> None:
    """Two runs through the proxy, the second with a tool added in the middle: its first line
    says what it lost of the first run's prefix; no line says break."""
    changed = [*TOOLS[:2], tool("rename"), *TOOLS[2:]]
    bodies = session("fix the tests", 2) + session("fix the tests", 2, changed, "b")
    lines: list[str] = []
    summary = Summary(lines.append)
    with (
        EmulatorServer() as emulator,
        Proxy(port=0, listeners=[summary], upstream_anthropic=emulator.url) as proxy,
    ):
        with httpx2.Client(base_url=proxy.url, headers={"x-api-key": "sk-ant-test"}) as client:
            for body in bodies:
                assert client.post("/v1/messages", json=body).status_code == 200
        assert proxy.store_queue is not None and proxy.store_queue.wait(2)
    summary.close()
    assert len(lines) == 4 and not any("break:" in line for line in lines)
    assert "shared_prefix_lost: " in lines[2] and " tokens at tools." in lines[2]
    assert "shared_prefix_lost" not in lines[0] + lines[1] + lines[3]
