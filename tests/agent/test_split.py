from __future__ import annotations

from dtl_notebook.agent import (
    AssistantMessage,
    TextPart,
    Tool,
    ToolCall,
    ToolResultMessage,
    split_deferred_tools,
)
from dtl_notebook.agent.messages import ToolCallPart


def call(cid: str, name: str) -> AssistantMessage:
    return AssistantMessage(content=[ToolCallPart(call=ToolCall(id=cid, name=name))])


def result(cid: str, added: list[str] | None = None) -> ToolResultMessage:
    return ToolResultMessage(call_id=cid, content=[TextPart(text="ok")], added_tool_names=added)


TOOLS = [Tool("search"), Tool("a"), Tool("b"), Tool("c")]


def names(tools: list) -> list[str]:
    return [t.name for t in tools]


def test_no_markers_everything_immediate() -> None:
    split = split_deferred_tools(TOOLS, [call("1", "search"), result("1")])
    assert names(split.immediate) == ["search", "a", "b", "c"]
    assert split.deferred == {}


def test_marked_names_are_deferred_in_tools_order() -> None:
    msgs = [call("1", "search"), result("1", ["c", "a"])]
    split = split_deferred_tools(TOOLS, msgs)
    assert names(split.immediate) == ["search", "b"]
    assert list(split.deferred) == ["a", "c"]


def test_used_before_marker_stays_immediate() -> None:
    msgs = [call("1", "a"), result("1"), call("2", "search"), result("2", ["a", "b"])]
    split = split_deferred_tools(TOOLS, msgs)
    assert names(split.immediate) == ["search", "a", "c"]
    assert list(split.deferred) == ["b"]


def test_deferred_stays_deferred_after_use() -> None:
    msgs = [call("1", "search"), result("1", ["b"]), call("2", "b"), result("2", ["b"])]
    assert list(split_deferred_tools(TOOLS, msgs).deferred) == ["b"]


def test_removed_tools_are_dropped_not_resurrected() -> None:
    msgs = [call("1", "search"), result("1", ["gone", "b"])]
    split = split_deferred_tools(TOOLS, msgs)
    assert "gone" not in split.deferred
    assert "gone" not in names(split.immediate)
    assert list(split.deferred) == ["b"]


def test_duplicate_keeps_first_position_and_last_value() -> None:
    tools = [Tool("a", description="old"), Tool("b"), Tool("a", description="new")]
    split = split_deferred_tools(tools, [])
    assert names(split.immediate) == ["a", "b"]
    assert split.immediate[0].description == "new"


def test_a_failed_call_before_the_marker_is_not_a_use() -> None:
    # The model called `a` while it was inactive (an error result), then a search loaded it:
    # `a` still enters at its load point instead of rewriting the prefix.
    failed = ToolResultMessage(call_id="1", content=[TextPart(text="Error")], is_error=True)
    messages = [call("1", "a"), failed, call("2", "search"), result("2", added=["a"])]
    split = split_deferred_tools(TOOLS, messages)
    assert list(split.deferred) == ["a"]
    assert "a" not in names(split.immediate)


def test_a_successful_call_before_the_marker_stays_a_use() -> None:
    messages = [call("1", "a"), result("1"), call("2", "search"), result("2", added=["a"])]
    split = split_deferred_tools(TOOLS, messages)
    assert split.deferred == {}
    assert "a" in names(split.immediate)
