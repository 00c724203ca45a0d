"""The chat message rules (tool message pairing, Kimi carrier names) resumed over a shared
frozen history decide exactly as a pass from scratch, naming the same first problem."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook._reuse.frozen import freeze
from dtl_notebook.wire.validate import SEMANTIC_CHECKS, WireValidationError


def _carrier(*names: str) -> dict[str, Any]:
    tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]
    return {"role": "system", "tools": tools}


POOL = [
    freeze({"role": "user", "content": "hi"}),
    freeze({"role": "assistant", "tool_calls": [{"id": "a", "type": "function"}]}),
    freeze({"role": "tool", "tool_call_id": "a", "content": "ok"}),
    freeze({"role": "tool", "tool_call_id": "b", "content": "unpaired"}),
    freeze(_carrier("x", "y")),
    freeze(_carrier("x", "x")),
    freeze({"role": "assistant", "tool_calls": [{"id": "b", "type": "function"}]}),
]


def _outcome(check: Any, payload: dict[str, Any], provider: str) -> str | None:
    try:
        check(payload, provider)
    except WireValidationError as error:
        return str(error)
    return None


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["openai-chat", "kimi"]),
    st.lists(st.lists(st.tuples(st.integers(0, 6), st.booleans()), max_size=8), max_size=6),
)
def test_resumed_chat_rules_equal_cold_ones(
    provider: str, lists: list[list[tuple[int, bool]]]
) -> None:
    check = SEMANTIC_CHECKS[provider]
    history: list[Any] = []
    for picks in lists:  # grows from the shared history, or starts over
        added = [POOL[i] if frozen else dict(POOL[i]) for i, frozen in picks]
        history = [*history[: len(history) // 2], *added] if picks else added
        payload = {"model": "m", "messages": history}
        with disabled():
            cold = _outcome(check, payload, provider)
        assert _outcome(check, payload, provider) == cold


def test_a_problem_past_the_shared_part_is_named() -> None:
    check = SEMANTIC_CHECKS["kimi"]
    good = [POOL[0], POOL[1], POOL[2], POOL[4]]
    check({"messages": good}, "kimi")
    assert _outcome(check, {"messages": [*good, POOL[5]]}, "kimi") is not None
    assert _outcome(check, {"messages": [*good, POOL[5]]}, "openai-chat") is None
    unpaired = _outcome(check, {"messages": [*good, POOL[3]]}, "kimi")
    assert unpaired is not None and "messages.4" in unpaired and "'b'" in unpaired
    assert _outcome(check, {"messages": [*good, POOL[6], POOL[3]]}, "kimi") is None


INPUT_POOL = [
    freeze({"role": "user", "content": "hi"}),
    freeze({"type": "function_call", "call_id": "a", "name": "t", "arguments": "{}"}),
    freeze({"type": "function_call_output", "call_id": "a", "output": "ok"}),
    freeze({"type": "function_call_output", "call_id": "b", "output": "unpaired"}),
    freeze({"type": "tool_search_call", "call_id": "s", "execution": "client", "arguments": {}}),
    freeze({"type": "tool_search_output", "call_id": "s", "execution": "client", "tools": []}),
    freeze({"type": "tool_search_output", "call_id": "z", "execution": "client", "tools": []}),
]


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.booleans()), max_size=8), max_size=6))
def test_resumed_responses_input_rules_equal_cold_ones(lists: list[list[tuple[int, bool]]]) -> None:
    check = SEMANTIC_CHECKS["openai-responses"]
    history: list[Any] = []
    for picks in lists:
        added = [INPUT_POOL[i] if frozen else dict(INPUT_POOL[i]) for i, frozen in picks]
        history = [*history[: len(history) // 2], *added] if picks else added
        payload = {"model": "m", "input": history}
        with disabled():
            cold = _outcome(check, payload, "openai-responses")
        assert _outcome(check, payload, "openai-responses") == cold
