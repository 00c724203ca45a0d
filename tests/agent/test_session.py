from __future__ import annotations

import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import (
    SystemUpdate,
    ToolOutput,
    TranscriptError,
    UnknownToolError,
    UserMessage,
)
from tests.support.tools import make_tools, obj


def call(s: Session, name: str, cid: str = "c1", **arguments: object) -> ToolCall:
    tc = ToolCall(id=cid, name=name, arguments=dict(arguments))
    s.assistant(tool_calls=[tc])
    return tc


def test_defaults_register_tool_search_and_activate_it() -> None:
    s = Session(tools=make_tools())
    assert s.active_tools == ["tool_search"]
    assert "tool_search" in s.registry
    assert Session(tools=make_tools(), search=None).active_tools == [
        "get_weather",
        "get_shipping_eta",
        "add",
        "read_file",
    ]


def test_set_active_tools_rejects_unknown_and_dedupes(session: Session) -> None:
    with pytest.raises(UnknownToolError, match="unknown tool 'nope'"):
        session.set_active_tools(["tool_search", "nope"])
    assert session.active_tools == ["tool_search", "read_file"]
    session.set_active_tools(["add", "add", "read_file"])
    assert session.active_tools == ["add", "read_file"]
    assert session.messages == []


def test_execute_runs_tool_and_serializes_values(session: Session) -> None:
    session.set_active_tools(["add", "get_shipping_eta"])
    session.user("sum")
    r = session.execute(call(session, "add", a=2, b=3))
    assert r.text == "5" and not r.is_error and r.tool_name == "add"
    r = session.execute(call(session, "get_shipping_eta", "c2", order_id="o42"))
    assert r.text == '{"eta": "2026-12-05", "order_id": "o42"}'


def test_tool_exception_becomes_error_result_and_restores_active_set() -> None:
    def boom() -> str:
        s.activate(["add"])
        raise RuntimeError("disk on fire")

    s = Session(tools=[*make_tools(), Tool("boom", execute=boom)], active=["boom"])
    s.user("go")
    r = s.execute(call(s, "boom"))
    assert r.is_error
    assert "disk on fire" in r.text and "RuntimeError" in r.text
    assert s.active_tools == ["boom"]
    assert r.added_tool_names is None


def test_keyboard_interrupt_propagates_but_restores_state() -> None:
    def stop() -> str:
        s.activate(["add"])
        raise KeyboardInterrupt

    s = Session(tools=[*make_tools(), Tool("stop", execute=stop)], active=["stop"])
    s.user("go")
    tc = call(s, "stop")
    before = list(s.messages)
    with pytest.raises(KeyboardInterrupt):
        s.execute(tc)
    assert s.active_tools == ["stop"]
    assert s.messages == before


def test_unknown_inactive_and_unbound_tools_are_error_results(session: Session) -> None:
    session.user("x")
    assert "unknown tool 'ghost'" in session.execute(call(session, "ghost")).text
    r = session.execute(call(session, "add", "c2", a=1, b=2))
    assert r.is_error and "not active" in r.text
    session.registry.register(Tool("unbound"))
    session.activate(["unbound"])
    r = session.execute(call(session, "unbound", "c3"))
    assert r.is_error and "no implementation bound" in r.text


def test_invalid_arguments_are_error_results(session: Session) -> None:
    session.activate(["add"])
    session.user("x")
    r = session.execute(call(session, "add", a="two", b=3))
    assert r.is_error and "invalid arguments at a" in r.text
    bad = ToolCall(id="c9", name="add", invalid_arguments='{"a": 1,')
    session.assistant(tool_calls=[bad])
    r = session.execute(bad)
    assert r.is_error and "not a JSON object" in r.text


def test_pure_append_records_marker_with_reported_names_first() -> None:
    def loader() -> ToolOutput:
        s.activate(["get_weather", "add"])
        return ToolOutput("loaded", added_tool_names=["add"])

    s = Session(tools=[*make_tools(), Tool("loader", execute=loader)], active=["loader"])
    s.user("x")
    r = s.execute(call(s, "loader"))
    assert r.added_tool_names == ["add", "get_weather"]
    assert [t.name for t in r.added_tools] == ["add", "get_weather"]
    assert r.non_append_change is None


def test_swap_records_no_marker_and_reports_change() -> None:
    def swap() -> str:
        s.set_active_tools(["swap", "add"])
        return "swapped"

    s = Session(tools=[*make_tools(), Tool("swap", execute=swap)], active=["swap", "read_file"])
    s.user("x")
    r = s.execute(call(s, "swap"))
    assert r.added_tool_names is None
    assert r.non_append_change is not None
    assert r.non_append_change.removed == ["read_file"]
    assert r.non_append_change.added == ["add"]
    assert s.active_tools == ["swap", "add"]


def test_explicit_marker_activates_and_snapshots(session: Session) -> None:
    session.user("x")
    call(session, "tool_search", query="weather")
    r = session.tool_result("c1", "found", added_tool_names=["get_weather"])
    assert session.active_tools[-1] == "get_weather"
    assert r.snapshot("get_weather") == session.registry["get_weather"].spec()
    with pytest.raises(UnknownToolError):
        session.tool_result("c1", "x", added_tool_names=["nope"])


def test_snapshot_survives_registry_edit_and_removal(session: Session) -> None:
    session.user("x")
    call(session, "tool_search", query="weather")
    r = session.tool_result("c1", "found", added_tool_names=["get_weather"])
    original = r.snapshot("get_weather")
    session.registry.register(Tool("get_weather", description="CHANGED"), replace=True)
    assert r.snapshot("get_weather") == original
    assert original is not None and original.description != "CHANGED"


def test_result_for_unknown_call_is_rejected(session: Session) -> None:
    session.user("x")
    before = list(session.messages)
    with pytest.raises(TranscriptError, match="'nope'"):
        session.tool_result("nope", "x")
    with pytest.raises(TranscriptError, match="not pending"):
        session.execute(ToolCall(id="zz", name="add"))
    assert session.messages == before


def test_user_message_needs_pending_results_first(session: Session) -> None:
    session.user("x")
    call(session, "read_file", path="a")
    with pytest.raises(TranscriptError, match="need results"):
        session.user("again")
    with pytest.raises(TranscriptError, match="duplicate tool call ids"):
        session.assistant(tool_calls=[ToolCall(id="d", name="a"), ToolCall(id="d", name="b")])


def test_first_user_message_records_the_prompt_then_only_patches(session: Session) -> None:
    session.user("one")
    assert isinstance(session.messages[0], SystemUpdate)
    assert session.messages[0].sections == {"preamble": "You are a helpful agent."}
    session.assistant("hi")
    session.user("two")
    assert sum(isinstance(m, SystemUpdate) for m in session.messages) == 1
    session.prompt["rules"] = "Be terse."
    session.prompt["preamble"] = "You are terse."
    session.assistant("ok")
    session.user("three")
    updates = [m for m in session.messages if isinstance(m, SystemUpdate)]
    assert updates[-1].sections == {"preamble": "You are terse.", "rules": "Be terse."}
    assert session.held_sections() == session.desired_sections()
    del session.prompt["rules"]
    session.assistant("ok")
    session.user("four")
    assert session.messages[-2] == SystemUpdate(sections={"rules": None})
    assert isinstance(session.messages[-1], UserMessage)


def test_at_most_one_system_update_per_turn(session: Session) -> None:
    session.user("one")
    session.prompt["rules"] = "r1"
    call(session, "read_file", path="a")
    session.execute(session.pending_calls()[0])
    session.prompt["rules"] = "r2"
    session.user("two")
    kinds = [type(m).__name__ for m in session.messages]
    assert kinds.count("SystemUpdate") == 2
    assert kinds[-2:] == ["SystemUpdate", "UserMessage"]
    assert session.messages[-2].sections == {"rules": "r2"}  # type: ignore[union-attr]


def test_tools_section_and_cache_hazard() -> None:
    tools = [
        Tool("stable", prompt_snippet="always here", execute=lambda: "ok"),
        Tool("late", description="Late tool", prompt_snippet="late tool", execute=lambda: "ok"),
        Tool("quiet", description="Quiet tool", execute=lambda: "ok"),
    ]
    s = Session(system="P", tools=tools, active=["tool_search", "stable"])
    assert s.desired_sections() == {"preamble": "P", "tools": "- stable: always here"}
    s.user("x")
    call(s, "tool_search", query="late quiet tool")
    s.tool_result("c1", "found", added_tool_names=["late", "quiet"])
    hazards = s.cache_hazards()
    assert [h.tool for h in hazards] == ["late"]
    assert "prompt_snippet" in str(hazards[0])
    assert "late tool" in s.desired_sections()["tools"]


def test_tool_parameters_are_not_mutated_by_tools() -> None:
    def mutate(items: list) -> str:
        items.append("x")
        return "ok"

    t = Tool("m", parameters=obj(items={"type": "array"}), execute=mutate)
    s = Session(tools=[t], active=["m"], search=None)
    s.user("x")
    tc = call(s, "m", items=[1])
    s.execute(tc)
    assert s.messages[-2].tool_calls[0].arguments == {"items": [1]}  # type: ignore[union-attr]


def test_execute_refuses_a_call_that_differs_from_the_recorded_one() -> None:
    from dtl_notebook.agent import TranscriptError

    weather = Tool("weather", parameters={"type": "object"}, execute=lambda **kw: f"{kw}")
    session = Session(tools=[weather], active=["weather"])
    session.user("hi")
    session.assistant(tool_calls=[ToolCall(id="c1", name="weather", arguments={"city": "Paris"})])
    before = list(session.messages)
    with pytest.raises(TranscriptError, match="differs from the call recorded"):
        session.execute(ToolCall(id="c1", name="weather", arguments={"city": "Rome"}))
    assert session.messages == before
    result = session.execute(ToolCall(id="c1", name="weather", arguments={"city": "Paris"}))
    assert "Paris" in str(result.content)
