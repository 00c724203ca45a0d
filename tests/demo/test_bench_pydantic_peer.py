"""The benchmark's pydantic-ai peer runs and agent-loop overhead row (benchmarks/)."""

from __future__ import annotations

import json
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic_ai")  # the `bench` extra
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from agent_overhead import MODES, overhead_ms
from cache_workload import STRATEGIES, row, script_steps
from prefix_metrics import render
from pydantic_peer import PEERS, run_peer
from workload_script import conversation

from dtl_notebook.demo import core_tool_names, demo_catalog

TURNS = 4  # two discoveries (turns 0 and 3) and two follow-ups
ALL_TURNS = conversation(demo_catalog())


@pytest.fixture(scope="module")
def tools() -> list:
    return demo_catalog()


@pytest.mark.parametrize("peer", PEERS, ids=[p[0] for p in PEERS])
def test_pydantic_ai_plays_the_workload_and_keeps_the_prefix(tools: list, peer: tuple) -> None:
    label, provider, model, cache = peer
    outcome = run_peer(tools, label, provider, model, cache, turns_played=TURNS)
    bodies = outcome.payloads
    assert len(bodies) == 2 * TURNS  # native search: search + call in one response, then answer
    assert outcome.refused_calls == 0
    # tools[] is frozen: every catalog tool from request 1, all but the core ones deferred
    assert all(b["tools"] == bodies[0]["tools"] for b in bodies)
    deferred = {t["name"] for t in bodies[0]["tools"] if t.get("defer_loading")}
    assert deferred == {t.name for t in tools} - set(core_tool_names())
    # each request's cacheable bytes start with the whole previous request's
    renders = [render(b, provider) for b in bodies]
    assert all(now.startswith(before) for before, now in pairwise(renders))
    figures = row(outcome)
    assert figures["breaks_bytes"] == 0 and figures["retention_bytes"] == 1.0
    # the discovered tools are revealed in history, at the search result
    history = json.dumps(bodies[-1]["messages" if provider == "anthropic" else "input"])
    reveal = "tool_search_tool_result" if provider == "anthropic" else "tool_search_output"
    assert history.count(f'"{reveal}"') == 2
    if provider == "anthropic":
        marked = "cache_control" in json.dumps(bodies[0])
        assert marked == cache  # pydantic-ai sets breakpoints only with its `cache` opt-in
        # without breakpoints Anthropic caches nothing: the analyzer reads nothing back (a
        # finding about the client, not a break on every request)
        assert (sum(e.cached_tokens for e in outcome.entries[1:]) > 0) == cache
        if cache:
            assert figures["retention_analyzer"] > 0.9


def test_overhead_has_one_figure_per_request(tools: list) -> None:
    for mode in (MODES[0], MODES[4]):  # a client-side and a server-side search mode
        figures = overhead_ms(tools, mode, turns=2)
        steps = script_steps(conversation(tools)[:2], mode)
        server_searches = sum("search" in s for s in steps) if "search" in mode.options else 0
        expected = len(steps) - server_searches  # a server search shares its call's response
        assert len(figures) == expected
        assert all(f > 0 for f in figures)


@settings(max_examples=25, deadline=None)
@given(count=st.integers(min_value=0, max_value=40), index=st.sampled_from(range(len(STRATEGIES))))
def test_script_has_a_search_only_where_a_deferred_strategy_discovers(
    count: int, index: int
) -> None:
    turns = ALL_TURNS[:count]
    strategy = STRATEGIES[index]
    steps = script_steps(turns, strategy)
    discoveries = sum(t.query is not None for t in turns)
    searches = [s for s in steps if "search" in s]
    assert len(searches) == (discoveries if strategy.binding == "deferred" else 0)
    assert len(steps) == 2 * len(turns) + len(searches)
    assert [s["call"] for s in steps if "call" in s] == [t.tool for t in turns]
