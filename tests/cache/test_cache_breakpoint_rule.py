"""One breakpoint rule for the validator, the lint and the analyzer: the same markers counted
the same way (nested blocks included, as the API counts them), and a server tool carrying a
marker analyzed like any other tool."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.cache import analyze
from dtl_notebook.cache.lint import lint
from dtl_notebook.context.model import model_context
from dtl_notebook.wire.cache_limits import MAX_CACHE_BREAKPOINTS
from dtl_notebook.wire.rules import cache_marks
from dtl_notebook.wire.validate import WireValidationError, validate_payload

MODEL = "claude-sonnet-4-5"
EPH = {"type": "ephemeral"}
TEXT = "You answer questions about the weather. " * 60


def _body(tool_marks: int, system_marks: int, nested_marks: int, top: bool) -> dict[str, Any]:
    """A valid body with markers on tools, system blocks, and text blocks nested in a
    tool_result (none of them top-level message blocks)."""
    tools = [
        {"name": f"t{i}", "input_schema": {"type": "object"}, "cache_control": EPH}
        for i in range(tool_marks)
    ] + [{"name": "unmarked", "input_schema": {"type": "object"}}]
    system = [{"type": "text", "text": TEXT, "cache_control": EPH} for _ in range(system_marks)]
    nested = [
        {"type": "text", "text": f"part {k}", "cache_control": EPH} for k in range(nested_marks)
    ]
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "t0", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": nested or "ok"}],
        },
    ]
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "tools": tools, "messages": messages}
    if system:
        body["system"] = system
    if top:
        body["cache_control"] = EPH
    return body


def _refused(body: dict[str, Any]) -> bool:
    try:
        validate_payload(body, "anthropic", cached=False)
    except WireValidationError as error:
        assert "too many cache_control breakpoints" in str(error)
        return True
    return False


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(0, 2), st.integers(0, 3), st.booleans())
def test_the_validator_and_the_lint_count_the_same_markers(
    tools: int, system: int, nested: int, top: bool
) -> None:
    body = _body(tools, system, nested, top)
    count = tools + system + nested + top
    assert len(cache_marks(body)) == count
    too_many = count > MAX_CACHE_BREAKPOINTS
    assert _refused(body) is too_many
    codes = [f.code for f in lint(body, "anthropic")]
    assert ("too_many_breakpoints" in codes) is too_many


def test_five_markers_with_one_nested_are_refused_and_linted_at_the_fifth() -> None:
    body = _body(tool_marks=2, system_marks=1, nested_marks=2, top=False)
    assert [".".join(map(str, p)) for p, _ in cache_marks(body)][-1] == (
        "messages.2.content.0.content.1.cache_control"
    )
    with pytest.raises(WireValidationError, match=r"messages\.2\.content\.0\.content\.1"):
        validate_payload(body, "anthropic", cached=False)
    (found,) = [f for f in lint(body, "anthropic") if f.code == "too_many_breakpoints"]
    assert found.where == "messages.2.content.0.content.1.cache_control"
    assert found.involved == ["5 markers"]


def test_four_top_level_markers_pass_both() -> None:
    body = _body(tool_marks=2, system_marks=1, nested_marks=0, top=True)
    assert not _refused(body)
    assert "too_many_breakpoints" not in [f.code for f in lint(body, "anthropic")]


def test_markers_after_a_broken_rule_are_still_counted() -> None:
    """The lint and the analyzer take bodies the API would refuse: the markers after an
    unpaired tool_result still count."""
    body = _body(tool_marks=1, system_marks=0, nested_marks=2, top=False)
    broken = copy.deepcopy(body)
    broken["messages"][2]["content"][0]["tool_use_id"] = "unknown"
    assert len(cache_marks(broken)) == len(cache_marks(body)) == 3


SERVER_TOOL = {
    "type": "web_search_20250305",
    "name": "web_search",
    "max_uses": 3,
    "cache_control": EPH,
}


def test_a_server_tool_with_a_marker_is_analyzed() -> None:
    """A server tool's own hidden prompt sits under its path outside any block: the marker
    ends at the tool's segment, and the prefix up to it is written then read."""
    tools = [SERVER_TOOL, {"name": "f", "description": TEXT, "input_schema": {"type": "object"}}]
    first = {
        "model": MODEL,
        "max_tokens": 64,
        "tools": tools,
        "messages": [{"role": "user", "content": "hi"}],
    }
    later = [{"role": "assistant", "content": "yo"}, {"role": "user", "content": "again"}]
    second = {**first, "messages": [{"role": "user", "content": "hi"}, *later]}
    report = analyze([first, second], provider="anthropic")
    ctx = model_context(first, "anthropic", None)
    tool_segment = next(
        i for i, s in enumerate(ctx.segments) if s.source == "tools.0" and s.block >= 0
    )
    upto = sum(s.tokens for s in ctx.segments[: tool_segment + 1])
    assert [e.written_tokens for e in report] == [upto, 0]
    assert report.entries[1].cached_tokens == upto
    assert report.entries[1].cache_break is None
