"""The cache-health rules: warmth and expiry per provider, the warning before an expiry, the
keep-warm decision against the price table, and the hit rate and money of a conversation.
Every time is given (no clock is read)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.cache import analyze
from dtl_notebook.cache.conversation import conversation_findings
from dtl_notebook.cache.health import conversation_health
from dtl_notebook.cache.keep_warm import KeepWarm, refresh_cost, refresh_decision
from dtl_notebook.cache.prices import PriceTable, shipped_prices
from dtl_notebook.cache.retention import retention
from dtl_notebook.cache.warmth import Warmth, miss_cost
from tests.support.scenario import LONG_SYSTEM

SONNET = "claude-sonnet-4-6"
QUESTION = "Which depot ships the order? " * 200


def _anthropic(system_ttl: str | None = None, turns: int = 1) -> dict[str, Any]:
    system: dict[str, Any] = {"type": "text", "text": LONG_SYSTEM * 2}
    if system_ttl:
        system["cache_control"] = {"type": "ephemeral", "ttl": system_ttl}
    messages: list[dict[str, Any]] = []
    for k in range(turns):
        if messages:
            messages.append({"role": "assistant", "content": f"Answer {k}."})
        block = {"type": "text", "text": f"{k}: {QUESTION}", "cache_control": {"type": "ephemeral"}}
        messages.append({"role": "user", "content": [block]})
    for message in messages[:-1]:  # only the last user block keeps its breakpoint
        if isinstance(message["content"], list):
            message["content"] = [{"type": "text", "text": message["content"][0]["text"]}]
    return {"model": SONNET, "max_tokens": 100, "system": [system], "messages": messages}


def _responses(turns: int = 1, **extra: Any) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for k in range(turns):
        items.append({"role": "user", "content": f"{k}: {LONG_SYSTEM * 2}"})
    return {"model": "gpt-5.4", "input": items, **extra}


def test_anthropic_warmth_lasts_five_minutes_from_the_last_read() -> None:
    report = analyze([_anthropic(), _anthropic()], "anthropic", SONNET, times=[0.0, 200.0])
    first, second = report.entries
    assert first.warmth is not None and second.warmth is not None
    assert first.warmth.expires_at == 300.0 and first.warmth.tokens == first.written_tokens
    # the read at 200 s refreshed the entry: warm until 500 s, not 300 s
    assert second.cached_tokens == first.written_tokens
    assert second.warmth.expires_at == 500.0
    assert second.warmth.at_time(499.0).tokens == second.warmth.tokens
    assert second.warmth.at_time(501.0).tokens == 0
    assert not second.warmth.best_effort
    assert (
        second.warmth.source == "https://docs.claude.com/en/docs/build-with-claude/prompt-caching"
    )


def test_a_one_hour_system_prefix_outlives_the_five_minute_tail() -> None:
    report = analyze([_anthropic("1h")], "anthropic", SONNET, times=[0.0])
    warmth = report.entries[0].warmth
    assert warmth is not None and len(warmth.tiers) == 2
    (whole, short), (system, long) = warmth.tiers
    assert (short, long) == (300.0, 3600.0) and system < whole
    assert warmth.at_time(100.0).tokens == whole
    later = warmth.at_time(1000.0)
    assert later.tokens == system and later.expires_at == 3600.0 and later.seconds_left == 2600.0


def test_openai_in_memory_retention_is_best_effort() -> None:
    report = analyze([_responses()], "openai-responses", "gpt-5.4", times=[0.0])
    warmth = report.entries[0].warmth
    kept = retention("openai-responses")
    assert warmth is not None and warmth.best_effort and kept.best_effort
    assert warmth.expires_at == 600.0  # the model's rule: about 10 minutes idle
    assert warmth.earliest_expiry == kept.earliest_seconds == 300.0  # may go after 5
    assert kept.max_seconds == 3600.0 and "best effort" in warmth.note
    assert warmth.source == "https://platform.openai.com/docs/guides/prompt-caching"


def test_extended_retention_keeps_the_prefix_a_day() -> None:
    hours = 3 * 3600.0
    plain = analyze([_responses(), _responses(2)], "openai-responses", "gpt-5.4", times=[0, hours])
    assert plain.entries[1].cached_tokens == 0
    extended = [
        _responses(prompt_cache_retention="24h"),
        _responses(2, prompt_cache_retention="24h"),
    ]
    kept = analyze(extended, "openai-responses", "gpt-5.4", times=[0.0, hours])
    warmth = kept.entries[0].warmth
    assert warmth is not None and warmth.expires_at == 86400.0
    assert kept.entries[1].cached_tokens > 0


def test_an_expiry_before_the_next_likely_request_is_warned_with_its_price() -> None:
    # requests 400 s apart on a 5-minute cache: each one expires before the next
    requests = [_anthropic(turns=k + 1) for k in range(3)]
    report = analyze(requests, "anthropic", SONNET, times=[0.0, 400.0, 800.0])
    last = report.entries[-1].warmth
    assert last is not None and last.warning is not None
    warning = last.warning
    assert warning.next_request_at == 1200.0 and warning.expires_at == 1100.0
    price = shipped_prices().find(SONNET)
    assert price is not None
    assert warning.tokens == last.tokens
    assert warning.dollars == pytest.approx(last.tokens * 3.0 / 1e6 * (1.25 - 0.1))
    assert warning.dollars == pytest.approx(miss_cost(price, last.tokens, 300.0))
    # a minute apart: the prefix outlasts the next request
    quick = analyze(requests, "anthropic", SONNET, times=[0.0, 60.0, 120.0])
    assert all(e.warmth is not None and e.warmth.warning is None for e in quick.entries)


def test_one_hour_writes_are_priced_apart() -> None:
    price = shipped_prices().find(SONNET)
    assert price is not None
    assert price.write_share(300.0) == 1.25 and price.write_share(3600.0) == 2.0
    gpt = shipped_prices().find("gpt-5.4")
    assert gpt is not None and gpt.write_share(86400.0) == 1.0


def _warm(tokens: int, at: float = 0.0, ttl: float = 300.0) -> Warmth:
    return Warmth(at, ttl, ((tokens, at + ttl),), False, at + ttl, "", "")


def test_a_refresh_is_due_shortly_before_expiry_and_only_when_it_pays() -> None:
    policy = KeepWarm(lead_seconds=30.0, min_saving=0.05)
    price = shipped_prices().find("claude-opus-4-1")  # $15 / MTok
    assert price is not None
    big = _warm(50_000)
    early = refresh_decision(policy, big, 50_000, price, 200.0, 0.0, 0.0)
    assert not early.refresh and early.due_at == 270.0
    due = refresh_decision(policy, big, 50_000, price, 275.0, 0.0, 0.0)
    assert due.refresh
    assert due.cost == pytest.approx(50_000 * 15 / 1e6 * 0.1)
    assert due.saving == pytest.approx(50_000 * 15 / 1e6 * (1.25 - 0.1) - due.cost)
    small = refresh_decision(policy, _warm(2_000), 2_000, price, 275.0, 0.0, 0.0)
    assert not small.refresh and small.reason == "the saving is below the threshold"
    gone = refresh_decision(policy, big, 50_000, price, 301.0, 0.0, 0.0)
    assert not gone.refresh and gone.reason == "nothing is warm"


def test_refreshes_stop_at_their_caps() -> None:
    policy = KeepWarm(max_idle_seconds=1800.0, max_spend=0.10)
    price = shipped_prices().find("claude-opus-4-1")
    assert price is not None
    late = _warm(50_000, at=1790.0)
    idle = refresh_decision(policy, late, 50_000, price, 2070.0, 0.0, 0.0)
    assert not idle.refresh and idle.reason == "past the idle-time cap"
    spent = refresh_decision(policy, _warm(50_000), 50_000, price, 280.0, 0.0, 0.05)
    assert not spent.refresh and spent.reason == "past the money cap"


@given(
    tokens=st.integers(0, 400_000),
    tail=st.integers(0, 20_000),
    now=st.floats(0, 4000),
    spent=st.floats(0, 2),
    model=st.sampled_from(sorted(shipped_prices().prices)),
    ttl=st.sampled_from([300.0, 600.0, 3600.0]),
)
def test_a_refresh_never_breaks_a_cap_nor_costs_more_than_it_saves(
    tokens: int, tail: int, now: float, spent: float, model: str, ttl: float
) -> None:
    policy = KeepWarm()
    price = shipped_prices().prices[model]
    decision = refresh_decision(
        policy, _warm(tokens, ttl=ttl), tokens + tail, price, now, 0.0, spent
    )
    if decision.refresh:
        assert decision.cost is not None and decision.saving is not None
        assert decision.cost == pytest.approx(refresh_cost(price, tokens, tokens + tail))
        assert decision.saving >= policy.min_saving
        assert spent + decision.cost <= policy.max_spend
        assert now <= policy.max_idle_seconds and now >= ttl - policy.lead_seconds


def test_bad_keep_warm_settings_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"keep_warm\.max_spend"):
        KeepWarm(max_spend=-1)
    with pytest.raises(TypeError, match=r"keep_warm\.lead_seconds"):
        KeepWarm(lead_seconds="soon")  # type: ignore[arg-type]


def test_health_prices_what_was_read_written_and_sent() -> None:
    requests = [_anthropic(turns=k + 1) for k in range(3)]
    report = analyze(requests, "anthropic", SONNET, times=[0.0, 60.0, 120.0])
    health = conversation_health(report.entries)
    cached = sum(e.cached_tokens for e in report.entries)
    total = sum(e.total_tokens for e in report.entries)
    assert (health.cached_tokens, health.input_tokens) == (cached, total)
    assert health.hit_rate == pytest.approx(cached / total)
    assert health.hit_rate == pytest.approx(conversation_findings(report, requests).hit_ratio)
    written = sum(e.written_tokens for e in report.entries)
    plain = sum(e.uncached_tokens for e in report.entries)
    assert health.spent == pytest.approx(3.0 / 1e6 * (cached * 0.1 + written * 1.25 + plain))
    assert health.uncached == pytest.approx(3.0 / 1e6 * total)
    assert health.saved is not None and health.saved > 0
    unpriced = conversation_health(report.entries, PriceTable({}))
    assert unpriced.spent is None and unpriced.saved is None and unpriced.hit_rate > 0
