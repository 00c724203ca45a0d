"""The Agent's warm-up (per process, per registry) and the emulator's request log."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool
from dtl_notebook._reuse import disabled
from dtl_notebook.agent.messages import ToolCall
from dtl_notebook.live import Agent, ScriptedPolicy, emulator_transport
from dtl_notebook.live.request_log import RequestLog
from dtl_notebook.live.warmup import rehearse, warm_up
from dtl_notebook.wire import build_request, validate_payload

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=10)


def _tools(count: int) -> list[Tool]:
    return [
        Tool(f"tool_{i}", description=f"Does thing {i}", parameters={"type": "object"})
        for i in range(count)
    ]


def test_warm_up_indexes_the_search_once_per_registry_version() -> None:
    session = Session(system="You help.", tools=_tools(30))
    assert session.searcher is not None
    warm_up(session, "anthropic", "claude-sonnet-4-6")
    engine = session.searcher.engine
    indexed = session.searcher.indexed_version
    assert indexed == session.registry.version
    warm_up(session, "anthropic", "claude-sonnet-4-6")  # nothing changed: not re-indexed
    assert session.searcher.indexed_version == indexed and session.searcher.engine is engine
    assert [t.name for t in session.searcher.search("thing 7", 1)] == ["tool_7"]


@settings(max_examples=15, deadline=None)
@given(word=WORDS)
def test_a_tool_registered_after_the_warm_up_is_found(word: str) -> None:
    session = Session(system="You help.", tools=_tools(10))
    warm_up(session, "openai-chat", "gpt-4.1")
    session.registry.register(Tool("fresh_tool", description=f"Handles {word} requests"))
    assert [t.name for t in session.searcher.search(word, 3)] == ["fresh_tool"]  # type: ignore[union-attr]


def test_warm_up_rejects_an_unknown_provider() -> None:
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        warm_up(Session(tools=_tools(2)), "nope", "m")


def test_the_agent_times_its_set_up_and_leaves_the_garbage_collector_alone() -> None:
    frozen, thresholds, enabled = gc.get_freeze_count(), gc.get_threshold(), gc.isenabled()
    agent = Agent(Session(tools=_tools(5)), "kimi", "kimi-k2")
    Agent(Session(tools=_tools(5)), "openai-chat", "gpt-4.1")
    assert agent.setup_seconds > 0
    assert (gc.get_freeze_count(), gc.get_threshold(), gc.isenabled()) == (
        frozen,
        thresholds,
        enabled,
    )


def test_a_switched_agent_warms_up_for_the_new_provider() -> None:
    session = Session(tools=_tools(5))
    agent = Agent(session, "kimi", "kimi-k2")
    session.registry.register(Tool("late", description="Registered late"))
    agent.switch("anthropic", "claude-sonnet-4-6")
    assert session.searcher is not None
    assert session.searcher.indexed_version == session.registry.version


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@given(bodies=st.lists(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4), max_size=5))
def test_the_request_log_reads_back_each_body(bodies: list[dict[str, Any]]) -> None:
    log = RequestLog()
    for body in bodies:
        log.append(json.dumps(body, ensure_ascii=False).encode())
    assert len(log) == len(bodies)
    assert list(log) == bodies and log[:] == bodies
    if bodies:
        assert log[-1] == bodies[-1]


def test_the_request_log_keeps_bytes_only() -> None:
    with pytest.raises(TypeError, match="body must be bytes, got dict"):
        RequestLog().append({"model": "x"})  # type: ignore[arg-type]


def test_the_emulator_logs_each_body_as_sent() -> None:
    session = Session(system="You help.", tools=_tools(20))
    agent = Agent(session, "openai-chat", "gpt-4.1", policy=ScriptedPolicy([{"search": "thing 3"}]))
    result = agent.run("Find the tool for thing 3")
    log = agent.transport.emulator.requests  # type: ignore[attr-defined]
    assert len(log) == len(result.steps)
    assert [json.loads(s.request.json()) for s in result.steps] == list(log)


MODES = [
    ("anthropic", "claude-sonnet-4-6", {}),
    ("anthropic", "claude-sonnet-4-6", {"search": "native-bm25"}),
    ("openai-responses", "gpt-5.4", {"search": "hosted"}),
    ("openai-responses", "gpt-5.4", {"load_mode": "tool_search"}),
    ("openai-chat", "gpt-4.1", {}),
    ("kimi", "kimi-k2", {}),
]


@pytest.mark.parametrize(("provider", "model", "options"), MODES)
def test_the_rehearsal_leaves_the_session_and_the_first_body_as_they_were(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    session = Session(system="You help.", tools=_tools(25))
    session.user("Earlier question")
    before, transcript, rewrites = (
        list(session.messages),
        session.messages,
        session.messages.rewrites,
    )
    rehearse(session, provider, model, options)
    assert session.messages is transcript and session.messages.rewrites == rewrites
    assert all(a is b for a, b in zip(session.messages, before, strict=True))
    assert len(session.messages) == len(before)
    session.user("Find the tool for thing 4")
    warm = build_request(session, provider, model, **options)
    with disabled():
        cold = build_request(session, provider, model, validate=False, **options)
        validate_payload(cold.payload, provider, cached=False)
        assert warm.json() == cold.json()


def test_no_rehearsal_while_calls_wait_for_results() -> None:
    session = Session(tools=_tools(3), active=["tool_1"])
    session.user("go")
    session.assistant(tool_calls=[ToolCall(id="c1", name="tool_1", arguments={})])
    before, rewrites = list(session.messages), session.messages.rewrites
    rehearse(session, "openai-chat", "gpt-4.1", {})
    assert list(session.messages) == before and session.messages.rewrites == rewrites


@settings(max_examples=10, deadline=None)
@given(word=WORDS, index=st.sampled_from(range(len(MODES))))
def test_a_tool_replaced_after_the_warm_up_goes_out_as_redefined(word: str, index: int) -> None:
    provider, model, options = MODES[index]
    session = Session(system="You help.", tools=_tools(15), active=["tool_search", "tool_3"])
    rewrites = session.messages.rewrites
    Agent(session, provider, model, **options)  # warms up, rehearsing the next request
    assert session.messages.rewrites == rewrites and not session.messages
    session.registry.register(Tool("tool_3", description=f"Now {word}"), replace=True)
    session.registry.register(Tool("tool_9", description=f"Also {word}"), replace=True)
    session.user("Use tool 3")
    warm = build_request(session, provider, model, **options)
    with disabled():
        cold = build_request(session, provider, model, validate=False, **options)
        assert warm.json() == cold.json()
    assert f"Now {word}" in warm.json()


@pytest.mark.parametrize(
    ("provider", "model", "options"),
    [
        ("anthropic", "claude-sonnet-4-6", {"search": "native-bm25"}),
        ("openai-responses", "gpt-5.4", {"search": "hosted"}),
        ("openai-chat", "gpt-4.1", {}),
    ],
)
def test_the_emulator_checks_the_rehearsed_body_without_answering_or_caching_it(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    def run(prepared: bool) -> list[Any]:
        session = Session(system="You help.", tools=_tools(40))
        agent = Agent(session, provider, model, **options)
        emulator = agent.transport.emulator  # type: ignore[attr-defined]
        if not prepared:  # a second emulator that never saw the rehearsal
            agent.use_transport(emulator_transport(provider))
            emulator = agent.transport.emulator  # type: ignore[attr-defined]
        assert len(emulator.requests) == 0 and emulator.cache.entries == []
        agent.run("Do thing 7, please.")
        return [(s.cache.cached_tokens, s.cache.total_tokens, s.response) for s in agent.steps]

    assert run(prepared=True) == run(prepared=False)  # the same exchange, request for request
