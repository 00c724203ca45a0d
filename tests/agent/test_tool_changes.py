"""Tool-set changes as neutral events: remove_tools, redefine_tool, set_active_tools, the fold."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import SystemUpdate, ToolResultMessage, UnknownToolError
from dtl_notebook.agent.errors import ArgumentTypeError, InvalidArgumentError
from dtl_notebook.agent.messages import MESSAGES
from dtl_notebook.agent.storage import session_from_dict
from dtl_notebook.agent.tool_timeline import START
from dtl_notebook.demo.sessions import replay_demo

OBJECT = {"type": "object", "properties": {}}


def _tool(name: str, description: str = "") -> Tool:
    return Tool(name, description=description or f"The {name} tool.", execute=lambda: name)


def _session() -> Session:
    s = Session(system="Be brief.", tools=[_tool("a"), _tool("b"), _tool("c")])
    s.set_active_tools(["tool_search", "a", "b"])
    s.user("hi")
    s.assistant("hello")
    return s


def _call(s: Session, name: str, call_id: str) -> ToolResultMessage:
    s.assistant(tool_calls=[ToolCall(id=call_id, name=name)])
    return s.execute(s.pending_calls()[0])


def test_remove_tools_records_one_update_and_refuses_later_calls() -> None:
    s = _session()
    assert s.remove_tools(["a"]) == ["a"]
    update = s.messages[-1]
    assert isinstance(update, SystemUpdate)
    assert (update.tools_removed, update.tools_added) == (["a"], [])
    assert s.active_tools == ["tool_search", "b"]
    assert s.visible_tools() == {"tool_search", "b"}
    result = _call(s, "a", "late")
    assert result.is_error and "was removed from this conversation" in result.text
    assert _call(s, "b", "ok").text == "b"


def test_redefine_tool_is_a_removal_plus_an_addition_of_the_same_name() -> None:
    s = _session()
    s.redefine_tool(Tool("a", description="A, second version.", execute=lambda: "a2"))
    position, update = len(s.messages) - 1, s.messages[-1]
    assert isinstance(update, SystemUpdate) and update.redefined == ["a"]
    assert update.tools_added[0].description == "A, second version."
    assert _call(s, "a", "new").text == "a2"
    history = s.declared_tools()["a"]
    assert [(p, spec.description) for p, spec in history] == [
        (START, "The a tool."),
        (position, "A, second version."),
    ]
    # an identical definition only re-binds the implementation
    count = len(s.messages)
    s.redefine_tool(Tool("a", description="A, second version.", execute=lambda: "a3"))
    assert len(s.messages) == count and _call(s, "a", "again").text == "a3"


def test_set_active_tools_records_a_swap_and_a_readd_but_not_an_append() -> None:
    s = _session()
    count = len(s.messages)
    s.set_active_tools(["tool_search", "a", "b", "c"])  # a pure append: nothing recorded
    assert len(s.messages) == count
    s.set_active_tools(["tool_search", "b", "c"])
    assert s.messages[-1].tools_removed == ["a"]  # type: ignore[union-attr]
    s.set_active_tools(["tool_search", "b", "c", "a"])  # re-adding a removed tool is recorded
    update = s.messages[-1]
    assert isinstance(update, SystemUpdate)
    assert [t.name for t in update.tools_added] == ["a"] and not update.tools_removed
    assert s.visible_tools() == {"tool_search", "a", "b", "c"}


def test_a_change_during_a_tool_run_is_anchored_after_its_last_result() -> None:
    s = _session()
    s.assistant(tool_calls=[ToolCall(id="1", name="a"), ToolCall(id="2", name="b")])
    s.remove_tools(["b"])
    assert not isinstance(s.messages[-1], SystemUpdate)  # never between a call and its result
    s.tool_result("1", "done")
    assert not isinstance(s.messages[-1], SystemUpdate)
    s.tool_result("2", "done")
    assert s.messages[-1].tools_removed == ["b"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (lambda s: s.remove_tools(["nope"]), UnknownToolError, "'nope'"),
        (lambda s: s.remove_tools(["c"]), InvalidArgumentError, "names[0]: tool 'c' is not active"),
        (lambda s: s.remove_tools(["tool_search"]), InvalidArgumentError, "'tool_search' cannot"),
        (lambda s: s.remove_tools("a"), ArgumentTypeError, "names"),
        (lambda s: s.redefine_tool(_tool("zz")), UnknownToolError, "register it before"),
        (lambda s: s.redefine_tool({"name": "a"}), ArgumentTypeError, "tool"),
        (lambda s: s.visible_tools(99), InvalidArgumentError, "position: 99"),
    ],
)
def test_bad_changes_name_the_field_and_leave_the_session_as_it_was(
    call: object, error: type[Exception], needle: str
) -> None:
    s = _session()
    before = (list(s.messages), s.active_tools, s.registry.names())
    with pytest.raises(error) as info:
        call(s)  # type: ignore[operator]
    assert needle in str(info.value)
    assert (list(s.messages), s.active_tools, s.registry.names()) == before


def test_a_call_to_a_tool_never_loaded_is_refused() -> None:
    s = _session()
    result = _call(s, "c", "guess")
    assert result.is_error and "not active at this point" in result.text


def test_new_events_round_trip_exactly(tmp_path: Path) -> None:
    s = _session()
    s.remove_tools(["a"])
    s.redefine_tool(Tool("b", description="B again.", execute=lambda: "b2"))
    s.set_active_tools(["tool_search", "b", "a"])
    path = tmp_path / "s.json"
    s.save(path)
    loaded = Session.load(path)
    assert loaded.messages == s.messages and loaded.active_tools == s.active_tools
    assert loaded.declared_tools() == s.declared_tools()
    loaded.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_updates_without_tool_changes_serialize_as_before() -> None:
    data = MESSAGES.dump_python([SystemUpdate(sections={"x": "y"})], mode="json", exclude_none=True)
    assert data == [{"role": "system", "sections": {"x": "y"}}]


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses", "openai-chat", "kimi"])
def test_demo_sessions_round_trip_byte_identically(provider: str, tmp_path: Path) -> None:
    session = replay_demo(provider).session
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    session.save(first)
    assert b"tools_added" not in first.read_bytes() and b"tools_removed" not in first.read_bytes()
    Session.load(first).save(second)
    assert second.read_bytes() == first.read_bytes()


NAMES = [f"t{i}" for i in range(5)]
OPS = st.lists(
    st.tuples(st.sampled_from(["remove", "load", "redefine", "call"]), st.integers(0, 4)),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_the_fold_matches_a_plain_replay_and_withdrawn_tools_are_refused(
    ops: list[tuple[str, int]],
) -> None:
    s = Session(tools=[_tool(n) for n in NAMES], active=["tool_search", "t0", "t1"])
    s.user("go")
    visible = {"tool_search", "t0", "t1"}
    withdrawn: set[str] = set()  # removed and not re-added: no load brings them back
    seen: dict[int, set[str]] = {}  # assistant message index -> what the model could call
    for step, (op, i) in enumerate(ops):
        name = NAMES[i]
        if op == "remove" and name in visible:
            s.remove_tools([name])
            visible.discard(name)
            withdrawn.add(name)
        elif op == "load" and name not in visible:
            seen[len(s.messages)] = set(visible)
            s.assistant(tool_calls=[ToolCall(id=f"s{step}", name="tool_search")])
            if name in withdrawn:
                with pytest.raises(InvalidArgumentError, match=f"added_tool_names.*'{name}'"):
                    s.tool_result(f"s{step}", "found", added_tool_names=[name])
                s.tool_result(f"s{step}", "found")
                continue
            s.tool_result(f"s{step}", "found", added_tool_names=[name])
            visible.add(name)
        elif op == "redefine":
            s.redefine_tool(Tool(name, description=f"{name}, version {step}", execute=lambda: 1))
            withdrawn.discard(name)  # re-added: loadable again
        elif op == "call":
            seen[len(s.messages)] = set(visible)
            s.assistant(tool_calls=[ToolCall(id=f"c{step}", name=name)])
            result = s.execute(s.pending_calls()[0])
            assert result.is_error is (name not in visible), result.text
    assert set(s.active_tools) == visible == s.visible_tools()
    for position, expected in seen.items():
        assert s.visible_tools(position) == expected
    data = s.to_dict()
    loaded = session_from_dict(Session, data)
    assert loaded.to_dict() == data
    assert all(loaded.visible_tools(p) == expected for p, expected in seen.items())


def test_a_tool_registered_mid_session_is_recorded_at_the_next_turn_boundary() -> None:
    s = Session(system="Be brief.", tools=[_tool("a")])
    s.registry.register(_tool("early"))  # before the first message: an initial tool
    s.user("hi")
    assert not any(getattr(m, "tools_registered", None) for m in s.messages)
    start = len(s.messages)
    s.assistant(tool_calls=[ToolCall(id="c1", name="tool_search", arguments={"query": "qqq"})])
    s.registry.register(_tool("late"))
    assert len(s.messages) == start + 1  # a call waits for its result: nothing between them
    s.execute(s.pending_calls()[0])
    update = s.messages[-1]
    assert isinstance(update, SystemUpdate) and update.tools_registered == ["late"]
    assert (update.tools_added, update.tools_removed, update.sections) == ([], [], {})
    assert "late" not in s.visible_tools()  # registered: searchable, not offered
    assert s.timeline().registered == {"late": len(s.messages) - 1}
    s.registry.unregister("late")
    s.registry.register(_tool("late"))  # back again: its registration is already recorded
    s.assistant("ok")
    s.user("more")
    assert sum(bool(getattr(m, "tools_registered", None)) for m in s.messages) == 1


def test_a_registration_rides_on_the_change_made_at_the_same_boundary() -> None:
    s = _session()
    s.registry.register(_tool("d"))
    s.set_active_tools(["tool_search", "a", "d"])  # b out, d in
    update = s.messages[-1]
    assert isinstance(update, SystemUpdate)
    assert (update.tools_registered, update.tools_removed) == (["d"], ["b"])
    assert [t.name for t in update.tools_added] == ["d"]


def test_registrations_round_trip_and_a_loaded_session_records_none(tmp_path: Path) -> None:
    s = _session()
    s.registry.register(_tool("d"))
    s.record_registrations()
    assert s.messages[-1] == SystemUpdate(tools_registered=["d"])
    s.user("next")
    path, again = tmp_path / "s.json", tmp_path / "again.json"
    s.save(path)
    loaded = Session.load(path)
    assert list(loaded.messages) == list(s.messages)  # loading registers, records nothing
    assert loaded.timeline().registered == s.timeline().registered
    loaded.user("after loading")
    assert sum(bool(getattr(m, "tools_registered", None)) for m in loaded.messages) == 1
    Session.load(path).save(again)
    assert again.read_bytes() == path.read_bytes()


def test_updates_without_registrations_serialize_as_before() -> None:
    data = MESSAGES.dump_python([SystemUpdate(tools_removed=["a"])], mode="json", exclude_none=True)
    assert data == [{"role": "system", "sections": {}, "tools_removed": ["a"]}]
    with pytest.raises(ValueError, match="'x' is registered twice"):
        SystemUpdate(tools_registered=["x", "x"])
