"""`Session.entered()` (where each tool entered, from the one fold of the transcript) and
`Session.as_of(n)` (the session as it stood after n messages)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.wire import build_request

NAMES = ["alpha", "beta", "gamma", "delta"]
PROPS = {"type": "object", "properties": {"text": {"type": "string"}}}


def _session() -> Session:
    tools = [
        Tool(n, description=f"The {n} tool.", parameters=PROPS, execute=lambda text="": "ok")
        for n in NAMES
    ]
    return Session(
        system="Be brief.", tools=tools, active=["tool_search", "alpha"], search="keyword"
    )


def _play(s: Session, ops: list[tuple[str, str]]) -> list[tuple[int, list[str], dict]]:
    """Plays the ops; returns, before each model call, (message count, active tools, body)."""
    seen = []
    s.user("Start.")
    for step, (op, name) in enumerate(ops):
        seen.append(
            (
                len(s.messages),
                s.active_tools,
                build_request(s, "anthropic", "claude-opus-4-8").payload,
            )
        )
        if op == "load" and name not in s.active_tools and name not in s.withdrawn():
            s.assistant(tool_calls=[ToolCall(id=f"l{step}", name="tool_search")])
            s.tool_result(f"l{step}", "found", added_tool_names=[name])
        elif op == "call":
            s.assistant(tool_calls=[ToolCall(id=f"c{step}", name=name, arguments={})])
            s.execute(s.pending_calls()[0])
        elif op == "remove" and name in s.active_tools:
            s.remove_tools([name])
        elif op == "user":
            s.assistant("Done.")
            s.user("Next.")
    return seen


ops = st.lists(
    st.tuples(st.sampled_from(["load", "call", "remove", "user"]), st.sampled_from(NAMES)),
    max_size=10,
)


@settings(max_examples=30, deadline=None)
@given(ops)
def test_entered_is_each_tools_first_marker(ops: list[tuple[str, str]]) -> None:
    s = _session()
    _play(s, ops)
    expected: dict[str, int] = {}
    for i, message in enumerate(s.messages):
        for name in getattr(message, "added_tool_names", None) or []:
            expected.setdefault(name, i)
    assert s.entered() == expected


@settings(max_examples=30, deadline=None)
@given(ops)
def test_as_of_gives_the_request_the_session_gave_then(ops: list[tuple[str, str]]) -> None:
    s = _session()
    seen = _play(s, ops)
    messages = list(s.messages)
    for count, active, body in seen:
        then = s.as_of(count, active)
        assert build_request(then, "anthropic", "claude-opus-4-8").payload == body
        assert then.active_tools == active
        if not then.pending_calls():
            then.user("A rehearsal.")
        assert list(s.messages) == messages  # the copy is the copy's own


def test_as_of_without_active_tools_reads_them_from_the_transcript() -> None:
    s = _session()
    s.user("Start.")
    s.assistant(tool_calls=[ToolCall(id="l1", name="tool_search")])
    s.tool_result("l1", "found", added_tool_names=["beta"])
    loaded = len(s.messages)
    s.remove_tools(["alpha"])
    assert s.as_of(1).active_tools == ["tool_search", "alpha"]
    assert s.as_of(loaded).active_tools == ["tool_search", "alpha", "beta"]
    assert s.as_of(len(s.messages)).active_tools == ["tool_search", "beta"]
    with pytest.raises(InvalidArgumentError, match="position: 99"):
        s.as_of(99)
