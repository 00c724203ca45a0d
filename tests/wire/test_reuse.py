"""The reuse machinery behind one door: the switch, the free call, the footprint, the bounds,
what a dropped agent leaves behind, and the read-only parts of a request body."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dtl_notebook
from dtl_notebook import Session, Tool, ToolCall, _reuse
from dtl_notebook._reuse.frozen import FrozenDict, FrozenList
from dtl_notebook._reuse.registry import Memo
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.context.model import model_context
from dtl_notebook.live import Agent
from dtl_notebook.wire import build_request
from tests.support.reuse_marks import shares

MODES: list[tuple[str, str, dict[str, Any]]] = [
    ("anthropic", "claude-sonnet-4-6", {}),
    ("anthropic", "claude-sonnet-4-6", {"search": "native-bm25"}),
    ("openai-responses", "gpt-5.4", {"load_mode": "additional_tools"}),
    ("openai-responses", "gpt-5.4", {"load_mode": "tool_search"}),
    ("openai-responses", "gpt-5.4", {"search": "hosted"}),
    ("openai-chat", "gpt-4.1", {}),
    ("kimi", "kimi-k2", {}),
]


def _tools(count: int, word: str = "thing") -> list[Tool]:
    return [
        Tool(f"tool_{i}", description=f"Does {word} {i}", parameters={"type": "object"})
        for i in range(count)
    ]


def _session(count: int = 8) -> Session:
    return Session(system="You help.", tools=_tools(count), active=["tool_0", "tool_1"])


def _turns(
    session: Session, mode: tuple[str, str, dict[str, Any]], steps: list[int], start: int = 0
) -> list[str]:
    """Each turn's body text and its model context's segment texts, as one string a turn
    (`start`: the number of the first turn)."""
    provider, model, options = mode
    out = []
    for k, step in enumerate(steps, start):
        session.user(f"question {k}")
        if step % 3 == 1:  # a call whose result loads another tool
            session.assistant(tool_calls=[ToolCall(id=f"c{k}", name="tool_0", arguments={})])
            session.tool_result(f"c{k}", "done", added_tool_names=[f"tool_{2 + step % 5}"])
        request = build_request(session, provider, model, **options)
        context = model_context(request)
        out.append(request.json() + "\0" + "\0".join(s.text for s in context.segments))
        session.assistant(f"answer {k}")
    return out


@settings(max_examples=12, deadline=None)
@given(mode=st.sampled_from(MODES), steps=st.lists(st.integers(0, 9), min_size=1, max_size=5))
def test_with_reuse_off_every_turn_is_byte_identical(
    mode: tuple[str, str, dict[str, Any]], steps: list[int]
) -> None:
    before = _reuse.enabled()
    warm = _turns(_session(), mode, steps)
    assert _reuse.enabled(False) is False
    try:
        cold = _turns(_session(), mode, steps)
        assert all(memo["entries"] == 0 for memo in _reuse.footprint().values())
    finally:
        assert _reuse.enabled(before) is before
    assert warm == cold


@settings(max_examples=8, deadline=None)
@given(
    mode=st.sampled_from(MODES),
    steps=st.lists(st.integers(0, 9), min_size=2, max_size=6),
    twice=st.booleans(),
)
def test_two_conversations_in_turn_give_what_each_gives_alone(
    mode: tuple[str, str, dict[str, Any]], steps: list[int], twice: bool
) -> None:
    # what a turn takes over from the last (walks, renderings, accepted lists) stays its own
    # conversation's, also when another conversation on the same model is served in between
    # and when a body is built and rendered twice
    provider, model, options = mode
    alone = _turns(_session(), mode, steps)
    first, second = _session(), _session()
    for k, step in enumerate(steps):
        got = _turns(first, mode, [step], start=k)[0]
        _turns(second, mode, [step], start=k)
        if twice:
            model_context(build_request(first, provider, model, **options))
        assert got == alone[k]


def test_the_switch_takes_a_bool_only() -> None:
    with pytest.raises(TypeError, match="flag must be a bool, got 0"):
        _reuse.enabled(0)  # type: ignore[arg-type]
    assert type(_reuse.enabled()) is bool


@shares
def test_the_free_call_empties_every_memo_and_the_footprint_says_what_each_held() -> None:
    session = _session(12)
    for mode in MODES:
        _turns(session, mode, [1, 2])
    report = dtl_notebook.cache_footprint()
    assert {"tool items", "builder walks", "plans", "renderings"} <= set(report)
    assert set(report) <= set(_reuse.BOUNDS)  # every memo's bound is in the one table
    assert all(set(memo) == {"entries", "held", "bound", "bytes"} for memo in report.values())
    assert all(memo["held"] <= memo["bound"] for memo in report.values())
    assert sum(memo["entries"] for memo in report.values()) > 0
    assert sum(memo["bytes"] for memo in report.values()) > 0
    dtl_notebook.free_caches()
    assert all(memo["entries"] == memo["bytes"] == 0 for memo in _reuse.footprint().values())


@given(bound=st.integers(1, 20), keys=st.lists(st.integers(0, 40), max_size=60))
def test_a_memo_keeps_its_newest_entries_within_its_bound(bound: int, keys: list[int]) -> None:
    _reuse.BOUNDS["test: bounded"] = bound
    try:
        memo = Memo("test: bounded")
        for key in keys:
            memo.put(key, str(key))
        newest = list(dict.fromkeys(reversed(keys)))[:bound]
        assert sorted(memo) == sorted(newest) and len(memo) <= bound
    finally:
        del _reuse.BOUNDS["test: bounded"]
        _reuse.registry._memos.pop("test: bounded", None)


def test_a_dropped_agent_leaves_nothing_after_the_free_call() -> None:
    refs: list[weakref.ref[Any]] = []
    for k, (provider, model, options) in enumerate(MODES):
        session = Session(system="You help.", tools=_tools(30, f"word{k}"))
        agent = Agent(session, provider, model, **options)  # rehearses its first request
        session.user("go")
        request = build_request(session, provider, model, **options)
        CacheAnalyzer(provider).add(request, context=model_context(request))
        # the session's own tools' items (the placeholder and server tools are constants)
        names = {t.name for t in session.registry}
        declared = _declared(request.payload).items()
        items = [t for n, t in declared if n in names and type(t) is FrozenDict]
        refs += [weakref.ref(item) for item in items]
        refs += [weakref.ref(tool) for tool in session.registry]
        del agent, session, request, declared, items
    assert refs
    dtl_notebook.free_caches()
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    assert all(memo["entries"] == 0 for memo in _reuse.footprint().values())


@shares
def test_a_dropped_registry_frees_its_tool_items_without_the_free_call() -> None:
    session = Session(tools=_tools(20, "dropped"))
    session.user("go")
    build_request(session, "openai-responses", "gpt-5.4", search="hosted")
    refs = [weakref.ref(tool) for tool in session.registry]
    before = _reuse.footprint()["tool items"]["entries"]
    del session
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    assert _reuse.footprint()["tool items"]["entries"] <= before - 20


def _containers(value: Any, frozen_above: bool = False) -> list[tuple[type, bool]]:
    """Every container in `value` with whether a read-only one holds it."""
    kind = type(value)
    if kind not in (dict, list, FrozenDict, FrozenList):
        return []
    inner = frozen_above or kind in (FrozenDict, FrozenList)
    children = value.values() if isinstance(value, dict) else value
    return [(kind, frozen_above), *(c for v in children for c in _containers(v, inner))]


@pytest.mark.parametrize(("provider", "model", "options"), MODES)
def test_the_payload_is_plain_where_new_and_read_only_throughout_where_shared(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    session = Session(system="You help.", tools=_tools(10))
    for k in range(3):
        session.user(f"turn {k}")
        request = build_request(session, provider, model, **options)
        session.assistant(f"reply {k}")
    containers = _containers(request.payload)
    assert type(request.payload) is dict
    assert all(kind in (FrozenDict, FrozenList) for kind, under in containers if under)
    shared = [t for t in request.payload.get("tools", []) if type(t) is FrozenDict]
    shared += [m for m in request.payload.get("messages", request.payload.get("input", []))]
    frozen = next((part for part in shared if type(part) is FrozenDict), None)
    if frozen is not None:
        with pytest.raises(TypeError, match=r"edit a copy made with copy\.deepcopy"):
            frozen["extra"] = 1
    plain = request.plain()
    assert all(kind in (dict, list) for kind, _ in _containers(plain))
    assert json.dumps(plain, ensure_ascii=False) == request.json()
    plain["model"] = "edited"  # a plain copy: the request is untouched
    assert json.loads(request.json())["model"] == model
    assert copy.deepcopy(request.payload) == plain | {"model": model}


def _declared(payload: dict[str, Any]) -> dict[str, Any]:
    """A body's top-level tool items by name (Chat nests the name in `function`)."""
    items = payload.get("tools", [])
    return {t.get("name") or t.get("function", {}).get("name"): t for t in items}


@pytest.mark.parametrize(("provider", "model", "options"), MODES)
def test_a_tool_declared_again_is_the_same_read_only_item(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    tools = _tools(6)
    native = options.get("search", "").startswith("native")
    # native search: the search tool and the shown tools lead tools[] as plain items made
    # anew (one takes the breakpoint), the deferred catalog after them is shared
    active = [t.name for t in tools[:2]] if native else [t.name for t in tools]
    session = Session(system="You help.", tools=tools, active=active)
    bodies = []
    for k in range(2):
        session.user(f"turn {k}")
        bodies.append(_declared(build_request(session, provider, model, **options).payload))
        session.assistant(f"reply {k}")
    names = {t.name for t in tools}
    again = {name: item for name, item in bodies[1].items() if name in names}
    assert names <= set(again) <= set(bodies[0])
    # the same objects, found by identity by the next validation, rendering and analysis;
    # only an item that carries this body's own cache breakpoint is a copy
    for name, item in again.items():
        if native and name in active:
            assert type(item) is not FrozenDict, name
            continue
        assert item is bodies[0][name] or "cache_control" in item, name
        assert type(item) is FrozenDict or "cache_control" in item, name
