"""Every builder resumes its message walk from the last request of a grown transcript, and the
body equals a cold build.

The Anthropic, Responses, Chat Completions and Kimi builders keep their state after walking a
transcript (`_reuse.walks`). Kimi's batches also read the current tool definitions where a
marker recorded none, so its walk resumes only while each name it looked up still names the
same definition. A key field left out makes the byte-identity check fail (checked below).
"""

from __future__ import annotations

from typing import Any

import pytest

from dtl_notebook import Session, ToolCall
from dtl_notebook._reuse import disabled, reset
from dtl_notebook._reuse.frozen import FrozenDict, freeze, thaw
from dtl_notebook.agent.messages import TextPart, ToolResultMessage
from dtl_notebook.wire import build_request, chat, responses
from dtl_notebook.wire.betas import message_features
from dtl_notebook.wire.chat import SYSTEM_UPDATES, chat_messages
from dtl_notebook.wire.planning import plan
from tests.cache.test_incremental_turns import _apply, _tool
from tests.support.reuse_marks import shares

MODEL = {"anthropic": "claude-opus-4-8", "kimi": "kimi-k2.5"}


def _same_as_cold(session: Session, provider: str, **options: Any) -> dict[str, Any]:
    request = build_request(session, provider, MODEL.get(provider, "gpt-5.4"), **options)
    with disabled():
        cold = build_request(session, provider, MODEL.get(provider, "gpt-5.4"), **options)
    assert request.json() == cold.json()
    assert request.load_points == cold.load_points and request.notes == cold.notes
    return request.payload


def _session(tools: int = 4) -> Session:
    session = Session(system="You help.", tools=[_tool(i) for i in range(tools)])
    for step, action in enumerate([("user", "order"), ("search", "order"), ("call", 1)]):
        _apply(session, action, step)
    return session


def test_kimi_batches_follow_the_definitions_they_read() -> None:
    """A marker without recorded definitions declares the current one; redefining that tool
    (used before, so not deferred: no load point changes), or deactivating it, changes the
    resumed body as it changes a cold one."""
    session = _session()
    name = _tool(2).name
    session.set_active_tools([*session.active_tools, name])
    _apply(session, ("call", 2), 40)
    session.assistant(tool_calls=[ToolCall(id="m1", name="tool_search", arguments={})])
    marker = ToolResultMessage(
        call_id="m1", content=[TextPart(text="found")], added_tool_names=[name]
    )
    session.messages.append(marker)
    before = _same_as_cold(session, "kimi")
    _apply(session, ("redefine", 2), 50)
    session.user("and now?")
    after = _same_as_cold(session, "kimi")
    declared = [m for m in after["messages"] if m.get("tools")]
    assert "v50" in declared[-1]["tools"][0]["function"]["description"]
    assert before["messages"] != after["messages"][: len(before["messages"])]
    session.set_active_tools(n for n in session.active_tools if n != name)
    session.user("without it")
    _same_as_cold(session, "kimi")


def test_each_walk_resumes_only_under_its_own_settings() -> None:
    """Switching load mode, search mode, system updates or provider between turns of one
    transcript gives each setting's cold body, not another setting's walk."""
    session = _session()
    _apply(session, ("section", "eta"), 9)
    settings: list[tuple[str, dict[str, Any]]] = [
        ("openai-responses", {"load_mode": "additional_tools"}),
        ("openai-responses", {"load_mode": "tool_search"}),
        ("openai-responses", {"search": "hosted"}),
        ("openai-responses", {"load_mode": "full_list"}),
        ("openai-chat", {}),
        ("openai-chat", {"system_updates": "rerender"}),
        ("kimi", {}),
        ("kimi", {"system_updates": "rerender"}),
    ]
    for turn in range(3):
        for provider, options in settings:
            _same_as_cold(session, provider, **options)
        _apply(session, ("search", "eta"), 20 + turn)
        _apply(session, ("user", "eta"), 30 + turn)


def test_a_resumed_batch_open_at_the_end_is_closed_again() -> None:
    """A walk that ended inside a run of tool results resumes with that run still open: the
    Kimi declaration lands after the whole run, as in a cold build."""
    session = _session()
    call = ToolCall(id="s9", name="tool_search", arguments={"query": "eta"})
    other = ToolCall(id="c9", name=_tool(1).name, arguments={"order_id": "x"})
    session.assistant(tool_calls=[call, other])
    session.execute(call)
    first = _same_as_cold(session, "kimi")
    session.execute(other)
    second = _same_as_cold(session, "kimi")
    assert first["messages"][-1].get("tools") and second["messages"][-1].get("tools")
    assert second["messages"][-2]["role"] == "tool"


def test_kimi_walk_checks_each_definition_it_read() -> None:
    """The same plan walked with another active definition of a tool that a marker named
    without recording it declares that definition (planning replans on any tool change, so
    this calls the walk directly to isolate its own check)."""
    session = _session()
    name = _tool(2).name
    session.set_active_tools([*session.active_tools, name])
    _apply(session, ("call", 2), 40)
    session.assistant(tool_calls=[ToolCall(id="m1", name="tool_search", arguments={})])
    session.messages.append(
        ToolResultMessage(call_id="m1", content=[TextPart(text="found")], added_tool_names=[name])
    )
    session.user("thanks")  # closes the batch: its declaration is part of the walk kept
    the_plan = plan(session)
    active = {t.name: t for t in the_plan.full_list()}
    first, _, _ = chat_messages(the_plan, "kimi", "append", [], active)
    redefined = {**active, name: _tool(2, "v2")}
    second, points, _ = chat_messages(the_plan, "kimi", "append", [], redefined)
    with disabled():
        cold, cold_points, _ = chat_messages(the_plan, "kimi", "append", [], redefined)
    assert second == cold != first and points == cold_points
    assert "v2" in second[-2]["tools"][0]["function"]["description"]


@shares
def test_kept_payload_messages_are_frozen_and_checked_by_identity() -> None:
    """Payload messages a later request shares are read-only; their beta features are
    remembered per object, and an edited copy is looked at afresh."""
    session = _session()
    _same_as_cold(session, "anthropic")
    session.user("more")
    payload = _same_as_cold(session, "anthropic")
    shared = payload["messages"][0]
    assert type(shared) is FrozenDict
    with pytest.raises(TypeError, match="read-only"):
        shared["content"] = []
    block = {"type": "mcp_tool_use", "id": "x", "name": "n", "server_name": "s", "input": {}}
    edited = freeze({**thaw(shared), "content": [block]})
    assert message_features(shared) == message_features(thaw(shared)) == (False, frozenset())
    assert message_features(edited) == message_features(thaw(edited)) != (False, frozenset())


def _switch_settings(settings: list[tuple[str, dict[str, Any]]]) -> None:
    session = _session()
    _apply(session, ("section", "eta"), 9)
    for turn in range(2):
        for provider, options in settings:
            _same_as_cold(session, provider, **options)
        _apply(session, ("search", "eta"), 20 + turn)
        _apply(session, ("user", "eta"), 30 + turn)


# key fields a walk reads, and settings that tell two values of them apart
BROKEN_KEYS = [
    (
        responses,
        {"load_mode"},
        [("openai-responses", {"load_mode": m}) for m in ("additional_tools", "full_list")],
    ),
    (chat, {"system_updates"}, [("openai-chat", {"system_updates": m}) for m in SYSTEM_UPDATES]),
    (chat, {"provider", "batches"}, [("openai-chat", {}), ("kimi", {})]),
]


@shares
@pytest.mark.parametrize(("module", "names", "settings"), BROKEN_KEYS)
def test_a_walk_key_left_without_a_field_gives_another_settings_body(
    monkeypatch: pytest.MonkeyPatch, module: Any, names: set[str], settings: Any
) -> None:
    """The byte-identity check above catches each key field left out: with it, every body
    equals its cold build; without it, a walk of other settings is resumed."""
    _switch_settings(settings)
    reset()
    broken = tuple(field for field in module._Walked.KEY if field not in names)
    monkeypatch.setattr(module._Walked, "KEY", broken)
    with pytest.raises(AssertionError):
        _switch_settings(settings)
    reset()
