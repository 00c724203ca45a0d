"""Anthropic's hidden deferred-tool prompt: the first request carrying a `defer_loading` tool
misses the whole cache (measured by Claude Code 2.1.304 and Pi), unless a never-called deferred
placeholder is declared from the first request (the default in client search)."""

from __future__ import annotations

import copy

import pytest

from dtl_notebook import Session, ToolCall
from dtl_notebook.cache import analyze
from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.demo import demo_session
from dtl_notebook.live import Agent
from dtl_notebook.wire import build_request
from dtl_notebook.wire.anthropic import PLACEHOLDER
from tests.support.wire_requests import ANTHROPIC_MODEL, doc_tools, tool_names

NAME = PLACEHOLDER["name"]


def _requests(placeholder: bool) -> list:
    """Request 1 without deferred tools, request 2 after a search loaded get_weather."""
    s = Session(system="Be brief. " * 400, tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("weather in Paris?")
    flags = {"deferred_placeholder": placeholder}
    first = build_request(s, "anthropic", ANTHROPIC_MODEL, profile=flags)
    s.assistant(tool_calls=[ToolCall(id="c1", name="tool_search", arguments={"query": "weather"})])
    s.tool_result("c1", "found", added_tool_names=["get_weather"])
    return [first, build_request(s, "anthropic", ANTHROPIC_MODEL, profile=flags)]


def test_placeholder_is_declared_deferred_from_the_first_request_and_never_loaded() -> None:
    first, second = _requests(placeholder=True)
    assert tool_names(first.payload) == ["tool_search", "read_file", NAME]
    assert first.payload["tools"][-1]["defer_loading"] is True
    assert "cache_control" not in first.payload["tools"][-1]
    # the tool list only grows at its end; the placeholder is neither a load point nor loaded
    assert second.payload["tools"][:3] == first.payload["tools"]
    assert tool_names(second.payload)[3:] == ["get_weather"]
    assert [lp.tools for lp in second.load_points] == [["get_weather"]]
    assert NAME not in str(second.payload["messages"])


def test_profile_flag_turns_the_placeholder_off() -> None:
    first, second = _requests(placeholder=False)
    assert NAME not in tool_names(first.payload) + tool_names(second.payload)


def test_no_placeholder_where_nothing_can_be_loaded() -> None:
    tools = [t for t in doc_tools() if t.name in ("get_weather", "get_time")]
    s = Session(tools=tools, active=["get_weather", "get_time"], search=None)
    s.user("hi")
    assert NAME not in tool_names(build_request(s, "anthropic", ANTHROPIC_MODEL).payload)


def test_without_search_a_tool_run_load_keeps_the_cache_from_request_one() -> None:
    """search=None with registered tools that a tool run can load: the placeholder is there
    from the first request, so the first load only appends a deferred tool."""
    s = Session(tools=doc_tools(), active=["read_file"], search=None)
    s.user("hi")
    first = build_request(s, "anthropic", ANTHROPIC_MODEL)
    assert tool_names(first.payload) == ["read_file", NAME]
    s.assistant(tool_calls=[ToolCall(id="r1", name="read_file", arguments={"path": "a"})])
    s.tool_result("r1", "text", added_tool_names=["get_weather"])
    second = build_request(s, "anthropic", ANTHROPIC_MODEL)
    assert second.payload["tools"][:2] == first.payload["tools"]
    assert tool_names(second.payload)[2:] == ["get_weather"]
    old = build_request(s, "anthropic", "claude-opus-4-1")  # no defer_loading support
    assert not any(t.get("defer_loading") for t in old.payload["tools"])


def test_analyzer_names_the_first_deferred_tool_as_the_cause() -> None:
    without = analyze(_requests(placeholder=False))
    brk = without[1].cache_break
    assert brk is not None and brk.cause == BreakCause.DEFERRED_PROMPT_ADDED
    assert brk.where == "tools" and brk.involved == ["get_weather"]
    assert without[1].cached_tokens == 0
    assert brk.lost_tokens == without[0].total_tokens
    with_placeholder = analyze(_requests(placeholder=True))
    assert with_placeholder[1].cache_break is None
    assert with_placeholder[1].cached_tokens == with_placeholder[0].total_tokens > 0


def test_dropping_every_deferred_tool_breaks_the_cache_too() -> None:
    first, second = _requests(placeholder=True)
    undeferred = copy.deepcopy(second.payload)
    undeferred["tools"] = [t for t in undeferred["tools"] if not t.get("defer_loading")]
    report = analyze([first.payload, undeferred], provider="anthropic")
    brk = report[1].cache_break
    assert brk is not None and brk.cause == BreakCause.DEFERRED_PROMPT_REMOVED
    assert report[1].cached_tokens == 0


@pytest.mark.parametrize("placeholder", [False, True])
def test_emulator_reports_the_first_load_miss_only_without_the_placeholder(
    placeholder: bool,
) -> None:
    agent = Agent(
        demo_session(),
        "anthropic",
        "claude-sonnet-4-6",
        profile={"deferred_placeholder": placeholder},
    )
    agent.run("What is the shipping ETA of order_42?")
    agent.run("And the weather in Paris?")
    reads = [s.response["usage"]["cache_read_input_tokens"] for s in agent.steps]
    causes = [s.cache.cache_break.cause for s in agent.steps if s.cache.cache_break]
    # the demo's second request is the first that carries a deferred tool
    first_load = next(i for i, s in enumerate(agent.steps) if s.request.load_points)
    if placeholder:
        assert all(r > 0 for r in reads[1:]) and causes == []
    else:
        assert reads[first_load] == 0 and causes == [BreakCause.DEFERRED_PROMPT_ADDED]
        assert all(r > 0 for i, r in enumerate(reads[1:], 1) if i != first_load)
