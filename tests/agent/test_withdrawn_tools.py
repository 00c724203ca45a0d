"""A withdrawn tool stays withdrawn: after `remove_tools`, no search finds it, no load brings it
back (the session's own tool_search under every engine, a provider's own search, a marker) and
a call to it is refused, on every provider and search mode, until it is re-added."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import ToolResultMessage
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator.policies import ScriptedPolicy
from dtl_notebook.wire import WireRequest, build_request

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}


def _tools() -> list[Tool]:
    return [
        Tool(
            "get_weather",
            description="Current weather for a city.",
            parameters=CITY,
            execute=lambda city="": "sunny",
        ),
        Tool(
            "get_time",
            description="Local time in a city.",
            parameters=CITY,
            execute=lambda city="": "noon",
        ),
        Tool(
            "book_table",
            description="Book a restaurant table.",
            parameters=CITY,
            execute=lambda city="": "booked",
        ),
    ]


def _search(s: Session, call_id: str, query: str = "weather") -> ToolResultMessage:
    s.assistant(tool_calls=[ToolCall(id=call_id, name="tool_search", arguments={"query": query})])
    return s.execute(s.pending_calls()[0])


def _call_weather(s: Session, call_id: str) -> ToolResultMessage:
    s.assistant(tool_calls=[ToolCall(id=call_id, name="get_weather", arguments={"city": "Oslo"})])
    return s.execute(s.pending_calls()[0])


def _withdrawn_after_use(engine: str = "bm25") -> Session:
    """get_weather found, loaded and called, then withdrawn."""
    s = Session(tools=_tools(), active=["tool_search"], search=engine)
    s.user("Weather in Oslo?")
    assert _search(s, "s1").added_tool_names == ["get_weather"]
    assert not _call_weather(s, "c1").is_error
    s.assistant("Sunny.")
    s.remove_tools(["get_weather"])
    return s


def _found(result: ToolResultMessage) -> list[str]:
    return [t["name"] for t in json.loads(result.text)["tools"]]


@pytest.mark.parametrize("engine", ["bm25", "regex", "keyword"])
def test_tool_search_neither_finds_nor_loads_a_withdrawn_tool(engine: str) -> None:
    s = _withdrawn_after_use(engine)
    s.user("And tomorrow?")
    result = _search(s, "s2")
    assert "get_weather" not in _found(result)
    assert result.added_tool_names is None
    assert "get_weather" not in s.active_tools
    assert s.withdrawn() == {"get_weather"}
    refused = _call_weather(s, "c2")
    assert refused.is_error and "removed" in refused.text


@pytest.mark.parametrize(
    "re_add",
    [
        lambda s: s.redefine_tool(_tools()[0]),
        lambda s: s.registry.register(_tools()[0], replace=True),
        lambda s: s.set_active_tools([*s.active_tools, "get_weather"]),
    ],
    ids=["redefine_tool", "registered-again", "set_active_tools"],
)
def test_a_re_added_tool_is_found_and_loaded_again(re_add: Any) -> None:
    s = _withdrawn_after_use()
    re_add(s)
    assert s.withdrawn() == frozenset()
    s.user("And tomorrow?")
    _search(s, "s2")
    assert "get_weather" in s.active_tools
    assert not _call_weather(s, "c2").is_error


def test_no_marker_and_no_activation_brings_a_withdrawn_tool_back() -> None:
    s = _withdrawn_after_use()
    s.user("Again.")
    count = len(s.messages)
    with pytest.raises(
        InvalidArgumentError, match=r"names: tool\(s\) 'get_weather' were withdrawn"
    ):
        s.activate(["get_weather"])
    s.assistant(tool_calls=[ToolCall(id="s2", name="tool_search", arguments={"query": "x"})])
    with pytest.raises(InvalidArgumentError, match="added_tool_names"):
        s.tool_result("s2", "found", added_tool_names=["get_weather"])
    assert len(s.messages) == count + 1 and s.pending_calls()  # the refused result left nothing
    assert s.activate_found(["get_weather", "get_time"]) == ["get_time"]  # a search's hits


def test_a_withdrawn_tool_stays_withdrawn_through_save_and_load(tmp_path: Any) -> None:
    s = _withdrawn_after_use()
    s.save(tmp_path / "s.json")
    loaded = Session.load(tmp_path / "s.json", _tools())
    assert loaded.withdrawn() == {"get_weather"}
    loaded.user("And tomorrow?")
    assert "get_weather" not in _found(_search(loaded, "s2"))


CASES = [
    ("anthropic", "claude-opus-4-8", {}),
    ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
    ("anthropic", "claude-opus-4-8", {"search": "native-regex"}),
    ("anthropic", "claude-sonnet-4-6", {}),
    ("openai-responses", "gpt-5.6", {}),
    ("openai-responses", "gpt-5.6", {"load_mode": "tool_search"}),
    ("openai-responses", "gpt-5.6", {"load_mode": "full_list"}),
    ("openai-responses", "gpt-5.6", {"search": "hosted"}),
    ("openai-responses", "gpt-5.6", {"search": "native-client"}),
    ("openai-chat", "gpt-4.1", {}),
    ("kimi", "kimi-k2", {}),
]
IDS = [f"{p}-{m}-{'-'.join(map(str, o.values())) or 'client'}" for p, m, o in CASES]


def _loaded_after(request: WireRequest, position: int) -> set[str]:
    """The tools a request offers anew (a load or an addition) after message `position`."""
    return {
        name
        for lp in request.load_points
        if lp.message_index >= position and lp.kind in ("load", "addition")
        for name in lp.tools
    }


@pytest.mark.parametrize(("provider", "model", "options"), CASES, ids=IDS)
def test_no_provider_or_search_mode_loads_a_withdrawn_tool(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    """The model searches for the withdrawn tool and tries to call it: whatever the provider's
    own search shows it, the session activates nothing, refuses the call, and no request
    places a load of it after its removal."""
    s = _withdrawn_after_use()
    removed_at = len(s.messages)
    policy = ScriptedPolicy([{"search": "weather"}, {"call": "get_weather"}, {"text": "ok"}])
    agent = Agent(s, provider, model, policy=policy, **options)
    agent.run("Weather in Oslo tomorrow?")
    assert "get_weather" not in s.active_tools
    assert s.withdrawn() == {"get_weather"}
    for step in agent.steps:
        assert "get_weather" not in _loaded_after(step.request, removed_at)
        for result in step.results:
            if result.tool_name == "get_weather":
                assert result.is_error and "removed" in result.text
    request = build_request(s, provider, model, **options)
    assert "get_weather" not in _loaded_after(request, removed_at)
