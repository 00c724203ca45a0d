"""`Agent(..., threads=True)`: create + continue on models that take message threads, the full
request elsewhere, and what the model sees byte for byte the same as on the full-request path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtl_notebook import Session
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.context.thread_context import ThreadBook
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent
from dtl_notebook.live.steps import Step
from dtl_notebook.wire.anthropic_threads import without_markers

THREADED = "claude-sonnet-4-6"
UNTHREADED = "claude-opus-4-1"  # not among the models the provider page lists
QUESTIONS = [
    "What's the weather in Paris?",
    "And in Tokyo?",
    "Thanks, that is all.",
    "Find a tool to convert currencies.",
]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _run(model: str, threads: bool, turns: list[tuple[str, float]]) -> Agent:
    clock = _Clock()
    agent = Agent(
        Session(tools=demo_catalog(), active=["tool_search"]),
        provider="anthropic",
        model=model,
        threads=threads,
        clock=clock,
    )
    for text, gap in turns:
        clock.now += gap
        agent.run(text)
    return agent


def _seen(payload: dict[str, Any]) -> str:
    """What the model is given, as JSON: the request less its thread field and markers."""
    body = {k: v for k, v in payload.items() if k not in ("thread", "cache_control")}
    return json.dumps(without_markers(body), sort_keys=True)


def _segments(step: Step) -> list[tuple[str, str, int]]:
    return [(s.kind, s.text, s.tokens) for s in step.cache.context.segments]


turns_strategy = st.lists(
    st.tuples(st.sampled_from(QUESTIONS), st.sampled_from([0.0, 30.0, 299.0, 301.0, 900.0])),
    min_size=1,
    max_size=3,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns_strategy)
def test_the_model_sees_the_same_context_with_and_without_threads(
    turns: list[tuple[str, float]],
) -> None:
    threaded, full = _run(THREADED, True, turns), _run(THREADED, False, turns)
    assert len(threaded.steps) == len(full.steps)
    observer = ThreadBook()  # rebuilds each request as the server does
    for a, b in zip(threaded.steps, full.steps, strict=True):
        assert "thread" in a.request.payload and "thread" not in b.request.payload
        read = observer.read(a.request.payload, a.cache.thread.age_seconds or 0.0)
        whole = read.payload if read.missing is None else a.request.payload
        assert _seen(whole) == _seen(b.request.payload)
        assert _segments(a) == _segments(b)  # the model context, token counts included
        assert a.response["content"] == b.response["content"]  # the emulated model agrees
        observer.store(read, a.response, read.at)
        for point in a.request.load_points:  # each marks an item of the body sent
            assert _at(a.request.payload, point.path) is not None, point


def _at(body: Any, path: str) -> Any:
    """The item at a dotted JSON path of `body`, or None."""
    for part in path.split("."):
        if isinstance(body, list) and part.isdigit() and int(part) < len(body):
            body = body[int(part)]
        elif isinstance(body, dict) and part in body:
            body = body[part]
        else:
            return None
    return body


def test_a_thread_continues_with_only_the_new_messages_and_is_billed_whole() -> None:
    agent = _run(THREADED, True, [("What's the weather in Paris?", 0), ("And in Tokyo?", 20)])
    continued = [s for s in agent.steps if s.request.payload["thread"]["type"] == "continue"]
    assert continued, [s.request.notes for s in agent.steps]
    for step in continued:
        body = step.request.payload
        assert "system" not in body and "tools" not in body
        assert "message-threads-2026-08-12" in step.request.betas
        facts = step.cache.thread
        assert facts is not None and facts.sent == len(body["messages"]) < facts.whole
        assert step.cache.cached_tokens > 1000  # the thread's prefix is read, not re-sent
        assert step.cache.total_tokens > step.cache.cached_tokens
        assert facts.expires_in_seconds is not None and 0 < facts.expires_in_seconds <= 300


def test_an_expired_thread_is_replaced_by_a_create_with_the_full_history() -> None:
    agent = _run(THREADED, True, [("Thanks, that is all.", 0), ("And in Tokyo?", 400)])
    last = next(s for s in agent.steps if s.turn == 1)
    assert last.request.payload["thread"] == {"type": "create"}
    assert "expired" in last.request.notes[-1]
    assert last.cache.thread is not None and last.cache.thread.event == "thread_replaced"
    _assert_whole_history(last)


def test_a_lost_thread_is_replayed_as_a_create() -> None:
    agent = _run(THREADED, True, [("Thanks, that is all.", 0)])
    emulator = agent.transport.emulator  # type: ignore[attr-defined]
    emulator.threads.book = ThreadBook()  # the server lost every thread
    agent.run("And in Tokyo?")
    last = next(s for s in agent.steps if s.turn == 1)
    assert last.request.payload["thread"] == {"type": "create"}
    _assert_whole_history(last)


def _assert_whole_history(step: Step) -> None:
    """`step` sent the session's whole history, from its first question on."""
    messages = step.request.payload["messages"]
    assert step.state is not None and len(messages) == step.state.message_count > 1
    assert messages[0]["content"][0]["text"] == "Thanks, that is all."


def test_a_model_without_threads_gets_the_full_request() -> None:
    agent = _run(UNTHREADED, True, [("What's the weather in Paris?", 0)])
    assert all("thread" not in s.request.payload for s in agent.steps)
    assert all(s.cache.thread is None for s in agent.steps)


def test_threads_with_keep_warm_is_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="keep_warm"):
        Agent(Session(), "anthropic", THREADED, threads=True, keep_warm=True)
    with pytest.raises(TypeError, match="threads"):
        Agent(Session(), "anthropic", THREADED, threads="yes")  # type: ignore[arg-type]
