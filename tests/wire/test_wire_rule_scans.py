"""The Anthropic message rules, resumed over a shared frozen history, give the verdict of a
scan of the whole body: no problem, or the same first problem at the same path with the same
message. The step that scans is the one that names the problem, so nothing can disagree."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook._reuse.frozen import freeze
from dtl_notebook.wire.rules import REFERENCES_ONLY_RULE, tool_reference
from dtl_notebook.wire.validate import SEMANTIC_CHECKS, WireValidationError

TOOLS = [
    {"name": "tool_search", "input_schema": {"type": "object"}},
    {"name": "get_weather", "input_schema": {"type": "object"}, "defer_loading": True},
]
TEXT = {"type": "text", "text": "ok"}


def _result(call_id: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, **extra}
    if content is not None:
        block["content"] = content
    return {"role": "user", "content": [block]}


def _use(*ids: str) -> dict[str, Any]:
    uses = [{"type": "tool_use", "id": i, "name": "tool_search", "input": {}} for i in ids]
    return {"role": "assistant", "content": uses}


POOL = [
    freeze({"role": "user", "content": "hi"}),
    freeze(_use("a")),
    freeze(_result("a", [TEXT])),
    freeze(_result("a", [tool_reference("get_weather")])),
    freeze(_result("a", [tool_reference("get_weather"), TEXT])),  # references-only broken
    freeze(_result("a", [tool_reference("ghost")])),  # dangling
    freeze(_result("b", [TEXT])),  # unpaired unless _use("b") precedes
    freeze(_result("a", [{"type": "image", "source": {}}], is_error=True)),  # error, not text
    freeze(_use("b")),
    freeze({"role": "user", "content": [{**TEXT, "cache_control": {"type": "ephemeral"}}]}),
    freeze(
        {"role": "user", "content": [{**TEXT, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    ),
    freeze(_result("a", [{"type": "tool_reference", "tool_name": 7}])),  # a name not a string
]


def _verdict(payload: dict[str, Any]) -> tuple[str, str] | None:
    try:
        SEMANTIC_CHECKS["anthropic"](payload, "anthropic")
    except WireValidationError as error:
        return error.path, error.reason
    return None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.booleans()), max_size=8), max_size=6
    )
)
def test_resumed_anthropic_rules_equal_a_whole_scan(lists: list[list[tuple[int, bool]]]) -> None:
    history: list[Any] = []
    for picks in lists:  # grows from the shared history, or starts over
        added = [POOL[i] if frozen else dict(POOL[i]) for i, frozen in picks]
        history = [*history[: len(history) // 2], *added] if picks else added
        payload = {"tools": TOOLS, "messages": history}
        with disabled():
            whole = _verdict(payload)
        assert _verdict(payload) == whole
        assert _verdict(payload) == whole  # and again, from the state kept this time


def test_each_problem_is_named_where_it_is_after_a_shared_prefix() -> None:
    good = [POOL[0], POOL[1], POOL[3]]
    assert _verdict({"tools": TOOLS, "messages": good}) is None
    cases = {
        4: ("messages.4.content.0.content.1", f"{REFERENCES_ONLY_RULE} (found 'text')"),
        5: (
            "messages.4.content.0.content.0",
            "Tool reference 'ghost' not found in available tools",
        ),
        6: (
            "messages.4.content.0",
            "tool_result tool_use_id 'b' has no matching tool_use in the immediately preceding "
            "assistant message",
        ),
        7: (
            "messages.4.content.0.content.0",
            "all content must be type 'text' if 'is_error' is true (found 'image')",
        ),
    }
    for index, expected in cases.items():
        messages = [*good, POOL[1], POOL[index]]
        assert _verdict({"tools": TOOLS, "messages": messages}) == expected
        with disabled():
            assert _verdict({"tools": TOOLS, "messages": messages}) == expected


def test_a_dangling_reference_before_another_problem_is_the_one_named() -> None:
    messages = [POOL[0], POOL[1], POOL[5], POOL[1], POOL[4]]
    path, reason = _verdict({"tools": TOOLS, "messages": messages}) or ("", "")
    assert (path, reason) == (
        "messages.2.content.0.content.0",
        "Tool reference 'ghost' not found in available tools",
    )
    tools = [*TOOLS, {"name": "ghost", "input_schema": {"type": "object"}, "defer_loading": True}]
    # the same kept scan, other tools: the reference is declared, the later problem is named
    assert _verdict({"tools": tools, "messages": messages}) == (
        "messages.4.content.0.content.1",
        f"{REFERENCES_ONLY_RULE} (found 'text')",
    )
