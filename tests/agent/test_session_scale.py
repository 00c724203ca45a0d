"""Loading and appending stay linear in the transcript; pending calls are folded correctly.

Linearity is checked by counting the lines of dtl_notebook that run (not by timing): loading
twice as many messages must run about twice as many lines. benchmarks/load_scale.py times it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import dtl_notebook
from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import AssistantMessage, ToolResultMessage, UserMessage

PACKAGE = str(Path(dtl_notebook.__file__).parent)


def lines_run(action: Any) -> int:
    """How many lines of dtl_notebook run while `action()` runs."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    sys.settrace(global_)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def saved_user_run(tmp_path: Path, n: int) -> Path:
    """A saved session whose transcript is `n` consecutive user messages."""
    s = Session()
    s.user("first")
    s.messages.extend(UserMessage(content=[{"type": "text", "text": f"m{i}"}]) for i in range(n))
    path = tmp_path / f"run_{n}.json"
    s.save(path)
    return path


def test_loading_a_run_of_user_messages_is_linear(tmp_path: Path) -> None:
    small, large = saved_user_run(tmp_path, 400), saved_user_run(tmp_path, 1600)
    base = lines_run(lambda: Session.load(saved_user_run(tmp_path, 0)))
    per_small = (lines_run(lambda: Session.load(small)) - base) / 400
    per_large = (lines_run(lambda: Session.load(large)) - base) / 1600
    assert per_large < 1.2 * per_small, (per_small, per_large)  # quadratic would be x4


def test_appending_to_a_long_run_does_not_walk_it(tmp_path: Path) -> None:
    long, short = Session.load(saved_user_run(tmp_path, 2000)), Session()
    for s in (long, short):
        s.user("first")  # the first turn replays the held system prompt once
    assert lines_run(lambda: long.user("next")) <= lines_run(lambda: short.user("next")) + 10


def reference_pending(messages: list[Any]) -> list[ToolCall]:
    """The definition: calls of the latest assistant message with no later result."""
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            answered.add(message.call_id)
        elif isinstance(message, AssistantMessage):
            return [c for c in message.tool_calls if c.id not in answered]
    return []


steps = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.just(0)),
        st.tuples(st.just("assistant"), st.integers(0, 3)),
        st.tuples(st.just("result"), st.integers(0, 3)),
        st.tuples(st.just("truncate"), st.integers(0, 6)),
        st.tuples(st.just("replace"), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_pending_calls_match_the_definition_after_any_edit(history: list[tuple[str, int]]) -> None:
    """Appends, results, truncations (a rewrite) and a replaced transcript: the folded
    pending calls always equal a fresh backward scan of the transcript."""
    s = Session(tools=[Tool("t", execute=lambda: "ok")], active=["tool_search", "t"])
    s.user("go")
    made = 0
    for kind, arg in history:
        pending = s.pending_calls()
        if kind == "user" and not pending:
            s.user("more")
        elif kind == "assistant" and not pending:
            calls = [ToolCall(id=f"c{made + i}", name="t") for i in range(arg)]
            made += arg
            s.assistant(text="thinking" if not calls else None, tool_calls=calls)
        elif kind == "result" and pending:
            s.tool_result(pending[arg % len(pending)].id, "done")
        elif kind == "truncate" and len(s.messages) > 1:
            del s.messages[len(s.messages) - 1 - arg % (len(s.messages) - 1) :]
        elif kind == "replace":
            s.messages = list(s.messages)
        assert s.pending_calls() == reference_pending(list(s.messages))
