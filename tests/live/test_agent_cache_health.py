"""An Agent's cache health on the emulator, on a fake clock: keep-warm refreshes sent only
when they pay and within their caps, collapses named with their reasons (and none on a
healthy run), warmth and the hit rate as data."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dtl_notebook import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.collapse import CacheMiss, MissThresholds
from dtl_notebook.cache.keep_warm import KeepWarm
from dtl_notebook.cache.prices import shipped_prices
from dtl_notebook.live import Agent, AgentEvent, emulator_transport
from dtl_notebook.wire import WireRequest
from tests.support.scenario import LONG_SYSTEM
from tests.support.tools import make_tools

OPUS = "claude-opus-4-1"  # $15 / MTok: a 30k-token prefix is worth keeping warm


class Clock:
    """The fake clock the agent and its emulator read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _agent(clock: Clock, model: str = OPUS, repeat: int = 20, **kwargs: Any) -> Agent:
    session = Session(system=LONG_SYSTEM * repeat, tools=make_tools(), active=["tool_search"])
    return Agent(session, "anthropic", model, clock=clock, **kwargs)


def _ticks(agent: Agent, clock: Clock, until: float, every: float = 5.0) -> list[float]:
    """Tick every `every` seconds up to `until`; the times a refresh was sent."""
    assert agent.keep_warm is not None
    sent = []
    while clock.now < until:
        clock.now += every
        if agent.keep_warm.tick().refresh:
            sent.append(clock.now)
    return sent


def test_keep_warm_refreshes_before_expiry_until_its_time_cap() -> None:
    clock = Clock()
    agent = _agent(clock, keep_warm=KeepWarm(max_idle_seconds=900.0, background=False))
    agent.run("Hello there.")
    warm = agent.warmth()
    assert warm.tokens > 20_000 and warm.expires_at == 300.0 and warm.seconds_left == 300.0
    messages = len(agent.session.messages)
    sent = _ticks(agent, clock, 1200.0)
    # due 30 s before each expiry; each refresh starts a new 5-minute lifetime; none after
    # 900 s idle
    assert sent == [270.0, 540.0, 810.0]
    refreshes = [s for s in agent.steps if s.keep_warm is not None]
    assert len(refreshes) == 3
    price = shipped_prices().find(OPUS)
    assert price is not None
    for step in refreshes:
        assert step.request.payload["max_tokens"] == 1
        assert step.cache.reported is not None and step.cache.reported.cached == warm.tokens
        assert step.cache_miss is None and step.keep_warm is not None
        decision = step.keep_warm
        assert decision.cost == pytest.approx(warm.tokens * 15 / 1e6 * 0.1, rel=0.01)
        assert decision.saving is not None and decision.saving >= 0.05
    assert len(agent.session.messages) == messages  # a refresh adds nothing to the conversation
    assert agent.keep_warm is not None and agent.keep_warm.spent == pytest.approx(
        sum(s.keep_warm.cost or 0 for s in refreshes if s.keep_warm)
    )
    spent = agent.keep_warm.spent
    # the prefix refreshed at 810 s is still warm at 1000 s: the next turn reads it
    clock.now = 1000.0
    result = agent.run("And again.")
    assert result.steps[0].cache.cached_tokens >= warm.tokens
    assert result.steps[0].cache_miss is None
    health = agent.cache_health()
    assert health.refreshes == 3 and health.refresh_spent == pytest.approx(spent, rel=0.01)


def test_without_keep_warm_the_idle_gap_is_an_expired_miss() -> None:
    clock, misses = Clock(), []
    agent = _agent(clock, on_cache_miss=misses.append)
    agent.run("Hello there.")
    clock.now = 1000.0
    result = agent.run("And again.")
    assert [m.reason for m in misses] == ["expired"]
    miss = misses[0]
    assert miss.code == "expired" and miss.read == 0 and miss.lost == miss.expected > 20_000
    assert result.steps[0].cache_miss == miss


@pytest.mark.parametrize(("gap", "warned"), [(400.0, True), (60.0, False)])
def test_warmth_warns_when_it_expires_before_the_next_likely_turn(gap: float, warned: bool) -> None:
    clock = Clock()
    agent = _agent(clock)
    for turn in range(3):
        clock.now = turn * gap
        agent.run(f"Turn {turn}.")
    warm = agent.warmth()
    assert warm.tokens > 20_000 and warm.seconds_left == 300.0
    assert (warm.warning is not None) is warned
    if warm.warning is not None:
        assert warm.warning.next_request_at == 2 * gap + gap and warm.warning.tokens == warm.tokens
        price = shipped_prices().find(OPUS)
        assert price is not None and warm.warning.dollars == pytest.approx(
            warm.tokens * 15 / 1e6 * (1.25 - 0.1)
        )
    assert agent.warmth(clock.now + 301.0).tokens == 0


def test_a_refresh_waits_for_its_money_cap_and_for_a_paying_saving() -> None:
    clock = Clock()
    one = 20_000 * 15 / 1e6 * 0.1  # about one refresh of the prefix
    capped = _agent(clock, keep_warm=KeepWarm(max_spend=one * 1.9, background=False))
    capped.run("Hello there.")
    assert len(_ticks(capped, clock, 1200.0)) == 1
    clock = Clock()  # a small prompt on a cheaper model: the saving is under $0.05
    small = _agent(clock, "claude-sonnet-4-6", repeat=2, keep_warm=True)
    assert small.keep_warm is not None
    small.keep_warm.stop()  # this test drives it by hand
    small.run("Hello there.")
    clock.now = 280.0
    decision = small.keep_warm.tick()
    assert not decision.refresh and decision.reason == "the saving is below the threshold"
    assert all(s.keep_warm is None for s in small.steps)


def test_a_turn_in_progress_holds_a_refresh_back() -> None:
    clock = Clock()
    agent = _agent(clock, keep_warm=KeepWarm(background=False))
    agent.run("Hello there.")
    clock.now = 280.0
    heard: list[str] = []

    def during(event: AgentEvent) -> None:
        if event.kind == "step":  # another thread's tick, while this turn runs
            assert agent.keep_warm is not None
            keeper = agent.keep_warm
            worker = threading.Thread(target=lambda: heard.append(keeper.tick().reason))
            worker.start()
            worker.join()

    agent.run("And again.", on_step=during)
    assert heard and set(heard) == {"a turn is in progress"}
    assert all(s.keep_warm is None for s in agent.steps)


class _Unreporting:
    """The emulator, with its cache figures left out of the usage while `strip` is set."""

    name = "emulator"

    def __init__(self, clock: Clock) -> None:
        self.inner = emulator_transport("openai-chat", clock=clock)
        self.emulator = self.inner.emulator  # type: ignore[attr-defined]
        self.strip = False

    def send(self, request: WireRequest) -> dict[str, Any]:
        response = self.inner.send(request)
        if self.strip:
            response["usage"].pop("prompt_tokens_details", None)
        return response


def _workload(inject: bool) -> tuple[list[tuple[int, CacheMiss]], list[int], Agent]:
    """40 turns of a conversation, 30 s apart; with `inject`, five collapses of known
    reasons. The alerts heard (turn, miss), the turns of "cache_miss" events, the agent."""
    clock, heard, events = Clock(), [], []
    transport = _Unreporting(clock)
    session = Session(
        system=LONG_SYSTEM * 4, tools=make_tools(), active=["tool_search", "read_file"]
    )
    agent = Agent(
        session,
        "openai-chat",
        "gpt-4.1",
        transport,
        clock=clock,
        on_cache_miss=lambda miss: heard.append((turn, miss)),
        miss_thresholds=MissThresholds(min_share=0.05, min_tokens=2000),
    )
    agent.listeners.append(lambda e: events.append(turn) if e.kind == "cache_miss" else None)
    for turn in range(40):
        clock.now += 30.0
        transport.strip = inject and turn == 35
        if inject and turn == 10:
            clock.now += 700.0  # idle past the 10-minute lifetime
        if inject and turn == 20:
            agent.options = {"parallel_tool_calls": False}  # a cached-on setting changed
        if inject and turn == 25:
            session.messages = list(session.messages)[:2]  # the history compacted
        if inject and turn == 30:
            transport.emulator.cache = CacheAnalyzer("openai-chat")  # the provider lost it
        agent.run(f"Say hello number {turn}.")
    return heard, events, agent


def test_no_alert_on_a_healthy_forty_turn_run() -> None:
    heard, events, agent = _workload(inject=False)
    assert agent.turns == 40 and heard == [] and events == []
    health = agent.cache_health()
    assert health.reported and health.hit_rate > 0.9
    assert health.spent is not None and health.uncached is not None
    assert health.spent < health.uncached


def test_every_injected_collapse_is_named_with_its_reason() -> None:
    heard, events, _ = _workload(inject=True)
    named = [(turn, miss.reason, miss.code) for turn, miss in heard]
    assert named == [
        (10, "expired", "expired"),
        (20, "changed", "parallel_tool_calls_changed"),
        (25, "compacted", "history_rewritten"),
        (30, "unexpected", "prefix_intact_not_read"),
        (35, "unreported", "cache_unreported"),
    ]
    assert events == [turn for turn, _ in heard]
    for _, miss in heard:
        assert miss.message and miss.fix and miss.expected >= 2000


def test_bad_cache_watch_arguments_name_the_field() -> None:
    with pytest.raises(TypeError, match="on_cache_miss"):
        _agent(Clock(), on_cache_miss="print")
    with pytest.raises(TypeError, match="keep_warm"):
        _agent(Clock(), keep_warm="yes")
    with pytest.raises(ValueError, match="min_share"):
        MissThresholds(min_share=5)
