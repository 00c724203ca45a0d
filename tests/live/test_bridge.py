"""load_mode="bridge": tools[] fixed as tool_search + call_tool on openai-chat and Kimi, found
definitions in the search results, every inner call checked by the execution wrapper."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent.bridge import CALL_TOOL, enable_bridge, read_carried
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.context.model import model_context
from dtl_notebook.live import Agent, KeywordPolicy, ScriptedPolicy
from dtl_notebook.live.load_modes import LoadModeWatch, compare_load_modes
from dtl_notebook.wire import build_request
from dtl_notebook.wire.modes import ModeConflictError

BRIDGED = [("openai-chat", "gpt-4.1"), ("kimi", "kimi-k2")]
NAMES = [f"t{i}" for i in range(6)]


def _tool(name: str, description: str | None = None) -> Tool:
    return Tool(
        name,
        description=description or f"The {name} tool: look up the {name} record.",
        parameters={
            "type": "object",
            "properties": {"key": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["key"],
        },
        execute=lambda key, count=1: f"{name}:{key}x{count}",
    )


def _session(active: list[str] | None = None) -> Session:
    s = Session(system="You help.", tools=[_tool(n) for n in NAMES], active=active)
    enable_bridge(s)
    return s


def _find(s: Session, call_id: str, query: str, limit: int = 2) -> Any:
    call = ToolCall(id=call_id, name="tool_search", arguments={"query": query, "limit": limit})
    s.assistant(tool_calls=[call])
    return s.execute(call)


def _dispatch(s: Session, call_id: str, name: str, arguments: dict[str, Any]) -> Any:
    call = ToolCall(id=call_id, name=CALL_TOOL, arguments={"name": name, "arguments": arguments})
    s.assistant(tool_calls=[call])
    return s.execute(call)


def test_a_search_result_carries_the_found_definitions() -> None:
    s = _session()
    s.user("find t3")
    result = _find(s, "c1", "t3")
    carried = read_carried(result.text)
    assert carried is not None
    definitions, withdrawn = carried
    assert definitions[0]["name"] == "t3" and withdrawn == []
    assert definitions[0]["parameters"] == dict(s.registry["t3"].parameters)
    assert CALL_TOOL not in [d["name"] for d in definitions]


def test_dispatched_arguments_are_checked_against_the_inner_schema() -> None:
    s = _session()
    s.user("go")
    _find(s, "c1", "t2", 1)
    bad = _dispatch(s, "c2", "t2", {"key": 5})
    assert bad.is_error and "'t2'" in bad.text and "at key" in bad.text, bad.text
    missing = _dispatch(s, "c3", "t2", {"count": 2})
    assert missing.is_error and "'t2'" in missing.text and "'key'" in missing.text
    good = _dispatch(s, "c4", "t2", {"key": "k", "count": 2})
    assert not good.is_error and good.text == "t2:kx2"


def test_calls_to_tools_not_visible_are_refused() -> None:
    s = _session()
    s.user("go")
    never = _dispatch(s, "c1", "t4", {"key": "k"})
    assert never.is_error and "'t4'" in never.text and "not active" in never.text
    _find(s, "c2", "t4", 1)
    assert not _dispatch(s, "c3", "t4", {"key": "k"}).is_error
    s.assistant("done")
    s.remove_tools(["t4"])
    s.user("again")
    withdrawn = _dispatch(s, "c4", "t4", {"key": "k"})
    assert withdrawn.is_error and "'t4'" in withdrawn.text and "removed" in withdrawn.text
    unknown = _dispatch(s, "c5", "nope", {})
    assert unknown.is_error and "'nope'" in unknown.text
    itself = _dispatch(s, "c6", CALL_TOOL, {"name": "t0", "arguments": {}})
    assert itself.is_error and "itself" in itself.text


OPS = st.lists(
    st.tuples(st.sampled_from(["find", "call", "remove", "redefine", "add"]), st.integers(0, 5)),
    min_size=1,
    max_size=14,
)


@settings(max_examples=25, deadline=None)
@given(ops=OPS)
# an initial tool redefined after its removal keeps its first definition in the head
@example(ops=[("remove", 0), ("redefine", 0)])
def test_tools_stay_byte_identical_and_every_request_extends_the_last(
    ops: list[tuple[str, int]],
) -> None:
    s = Session(system="You help.", tools=[_tool(n) for n in NAMES[:4]], active=None)
    s.set_active_tools(["tool_search", "t0"])
    enable_bridge(s)
    s.user("start")
    bodies: dict[str, list[dict[str, Any]]] = {p: [] for p, _ in BRIDGED}
    extra = 0
    for step, (op, i) in enumerate(ops):
        name = NAMES[i]
        visible = s.visible_tools()
        if op == "find" and name in s.registry:
            _find(s, f"f{step}", name, 1)
        elif op == "call":
            result = _dispatch(s, f"c{step}", name, {"key": "k"})
            assert result.is_error is (name not in visible), result.text
        elif op == "remove" and name in s.active_tools:
            s.remove_tools([name])
        elif op == "redefine" and name in s.registry:
            s.redefine_tool(_tool(name, f"{name}, version {step}"))
        elif op == "add":
            extra += 1
            s.registry.register(_tool(f"x{extra}"))
        if s.pending_calls():
            continue
        s.user(f"turn {step}")
        for provider, model in BRIDGED:  # validated strictly against the SDK types
            bodies[provider].append(build_request(s, provider, model, load_mode="bridge").plain())
    for provider, seen in bodies.items():
        first = json.dumps(seen[0]["tools"]) if seen else None
        for previous, current in pairwise(seen):
            assert json.dumps(current["tools"]) == first, provider
            earlier = json.dumps(previous["messages"])[:-1]
            assert json.dumps(current["messages"]).startswith(earlier), provider


@pytest.mark.parametrize(("provider", "model"), BRIDGED)
def test_the_agent_completes_a_bridge_turn_on_the_emulator(provider: str, model: str) -> None:
    s = Session(system="You help.", tools=[_tool(n) for n in NAMES])
    agent = Agent(s, provider, model, load_mode="bridge", policy=KeywordPolicy())
    result = agent.run("Look up the t3 record for key abc.")
    calls = [c.name for step in agent.steps for c in step.reply.message.tool_calls]
    assert calls == ["tool_search", CALL_TOOL], calls
    assert "t3 returned t3:" in (result.text or ""), result.text
    fixed = {json.dumps(step.request.payload["tools"]) for step in agent.steps}
    assert len(fixed) == 1
    last = agent.steps[-1].context
    assert any(seg.kind == "loaded_schema" and seg.label == "t3" for seg in last.segments)
    assert any("t3 (through call_tool)" in seg.label for seg in last.segments)
    assert any("call_tool dispatcher" in note for note in agent.steps[-1].request.notes)


def test_the_scripted_model_calls_through_the_dispatcher() -> None:
    s = Session(system="You help.", tools=[_tool(n) for n in NAMES])
    steps = [{"search": "t1"}, {"call": "t1", "arguments": {"key": "q"}}, {"text": "ok"}]
    agent = Agent(s, "openai-chat", "gpt-4.1", load_mode="bridge", policy=ScriptedPolicy(steps))
    assert agent.run("go").text == "ok"
    sent = agent.steps[1].request.payload["messages"]
    assert sent[-1]["role"] == "tool"
    call = agent.steps[1].reply.message.tool_calls[0]
    assert (call.name, call.arguments) == (CALL_TOOL, {"name": "t1", "arguments": {"key": "q"}})


def test_the_bridge_keeps_the_whole_cache_where_the_full_list_breaks() -> None:
    s = Session(system="You are a careful assistant. " * 400, tools=[_tool(n) for n in NAMES])
    steps = []
    for name in NAMES[:3]:
        steps += [{"search": name}, {"call": name, "arguments": {"key": "k"}}, {"text": "done"}]
    policy = ScriptedPolicy(steps)
    agent = Agent(s, "openai-chat", "gpt-4.1", load_mode="bridge", policy=policy)
    for name in NAMES[:3]:
        agent.run(f"Look up the {name} record.")
    comparison = compare_load_modes(agent, ["full_list", "bridge"])
    full, bridge = comparison.rows
    assert (full.mode, bridge.mode) == ("full_list", "bridge")
    assert bridge.share == 1.0 and bridge.breaks == 0
    assert full.share < 1.0 and full.breaks > 0
    assert "share" in comparison.table() and "bridge" in repr(comparison)
    assert any("emulator cannot judge" in n for n in bridge.notes)


def test_bad_setups_name_what_is_wrong() -> None:
    s = Session(tools=[_tool("t0")])
    s.user("go")
    with pytest.raises(InvalidArgumentError, match="enable_bridge"):
        build_request(s, "openai-chat", "gpt-4.1", load_mode="bridge")
    with pytest.raises(ModeConflictError, match="openai-chat, kimi only, not anthropic"):
        build_request(s, "anthropic", "claude-opus-4-8", load_mode="bridge")
    enable_bridge(s)
    with pytest.raises(ModeConflictError, match="off in the profile"):
        build_request(s, "openai-chat", "gpt-4.1", load_mode="bridge", profile={"bridge": False})
    with pytest.raises(InvalidArgumentError, match="search=None"):
        enable_bridge(Session(tools=[_tool("t0")], search=None))
    own = Session(tools=[_tool("t0"), _tool(CALL_TOOL)])
    with pytest.raises(InvalidArgumentError, match="of its own"):
        enable_bridge(own)
    agent = Agent(s, "openai-chat", "gpt-4.1")
    with pytest.raises(InvalidArgumentError, match="no openai-chat steps"):
        compare_load_modes(agent, [None, "bridge"])


def test_the_model_context_shows_initial_tools_and_withdrawals() -> None:
    s = _session(active=["tool_search", "t0"])
    enable_bridge(s)  # idempotent
    s.user("go")
    _find(s, "c1", "t5", 1)
    s.assistant("found")
    s.remove_tools(["t5"])
    s.user("next")
    request = build_request(s, "kimi", "kimi-k2", load_mode="bridge")
    names = [t["function"]["name"] for t in request.payload["tools"]]
    assert names == ["tool_search", CALL_TOOL]
    loaded = [seg.label for seg in model_context(request).segments if seg.kind == "loaded_schema"]
    assert loaded == ["t0", "t5"]
    change = request.payload["messages"][-2]
    assert change["role"] == "system" and read_carried(change["content"]) == ([], ["t5"])


def test_a_watched_run_gives_the_figures_of_a_later_comparison() -> None:
    s = Session(system="You are a careful assistant. " * 400, tools=[_tool(n) for n in NAMES])
    steps = [{"search": "t2"}, {"call": "t2", "arguments": {"key": "k"}}, {"text": "done"}]
    agent = Agent(s, "kimi", "kimi-k2", load_mode="bridge", policy=ScriptedPolicy(steps * 2))
    watch = LoadModeWatch(agent, [None, "bridge"])
    agent.run("first")
    s.remove_tools(["t2"])
    agent.run("second")
    watched = watch.comparison()
    assert watched.rows == compare_load_modes(agent, [None, "bridge"]).rows
    assert [r.mode for r in watched.rows] == ["kimi", "bridge"]
    s.registry.unregister("t2")
    with pytest.raises(InvalidArgumentError, match=r"\['t2'\] .* LoadModeWatch"):
        compare_load_modes(agent)
