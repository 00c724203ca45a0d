"""A CacheAnalyzer that resumes over the segments each request shares with the one before
predicts exactly what one working from scratch predicts: figures, breaks, expiry, writes."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook.cache import CacheAnalyzer

WORDS = "order eta shipping refund invoice carrier parcel address status weather".split()
# a step: keep how many earlier messages, append how many, then wait how long (seconds)
STEPS = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 4), st.sampled_from([1.0, 30.0, 700.0, 2000.0])),
    min_size=2,
    max_size=10,
)
SETUPS = [
    ("openai-chat", "gpt-5.4", {}),
    ("openai-chat", "gpt-5.4", {"exact_cache_boundary": True, "min_cacheable_tokens": 64}),
    ("kimi", "kimi-k2.5", {}),
    ("openai-responses", "gpt-5.4", {}),
]


def _message(n: int, step: int) -> dict[str, Any]:
    text = " ".join(WORDS[(n * 3 + k) % len(WORDS)] for k in range(30 + n % 7))
    return {"role": "user" if n % 2 == 0 else "assistant", "content": f"{step}.{n} {text}"}


def _payload(provider: str, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    if provider == "openai-responses":
        return {"model": model, "input": list(messages)}
    return {"model": model, "messages": list(messages)}


def _figures(entry: Any) -> tuple[Any, ...]:
    return (
        entry.total_tokens,
        entry.cached_tokens,
        entry.written_tokens,
        entry.uncached_tokens,
        entry.best_cached_tokens,
        entry.cache_break,
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SETUPS), STEPS)
def test_resumed_analysis_equals_a_cold_one(
    setup: tuple[str, str, dict[str, Any]], steps: list[tuple[int, int, float]]
) -> None:
    provider, model, overrides = setup
    warm = CacheAnalyzer(provider, **overrides)
    cold = CacheAnalyzer(provider, **overrides)
    messages: list[dict[str, Any]] = [_message(0, 0)]
    now = 0.0
    for step, (keep, add, wait) in enumerate(steps):
        messages = messages[: max(keep, 1)] + [_message(n, step) for n in range(add)]
        now += wait
        payload = _payload(provider, model, messages)
        entry = warm.add(payload, at=now)
        with disabled():  # fresh segments: nothing is shared, everything is computed
            scratch = cold.add(_payload(provider, model, messages), at=now)
        assert entry.context.segments == scratch.context.segments
        assert _figures(entry) == _figures(scratch)


def test_a_resumed_run_expires_and_refreshes_as_a_whole() -> None:
    """Each request extends the one before; a read inside the TTL refreshes every link."""
    messages = [_message(n, 0) for n in range(40)]
    analyzer = CacheAnalyzer("openai-chat")
    analyzer.add(_payload("openai-chat", "gpt-5.4", messages), at=0.0)
    messages.append(_message(40, 1))
    kept = analyzer.add(_payload("openai-chat", "gpt-5.4", messages), at=500.0)
    assert kept.cached_tokens > 0 and kept.cache_break is None
    messages.append(_message(41, 2))
    refreshed = analyzer.add(_payload("openai-chat", "gpt-5.4", messages), at=1000.0)
    assert refreshed.cached_tokens >= kept.cached_tokens  # 1,000 s after the first write
    messages.append(_message(42, 3))
    late = analyzer.add(_payload("openai-chat", "gpt-5.4", messages), at=2000.0)
    assert late.cached_tokens == 0 and late.cache_break is not None
    assert late.cache_break.cause == "expired"


def test_an_abandoned_tail_keeps_its_own_lifetime() -> None:
    """A request that shares only part of the previous one refreshes only that part: going
    back to the old tail after its TTL finds it expired, as a cold analysis does."""
    history = [_message(n, 0) for n in range(40)]
    branch = [*history[:30], _message(99, 1)]
    warm, cold = CacheAnalyzer("openai-chat"), CacheAnalyzer("openai-chat")
    for messages, at in ((history, 0.0), (branch, 500.0), (history, 900.0)):
        entry = warm.add(_payload("openai-chat", "gpt-5.4", messages), at=at)
        with disabled():
            scratch = cold.add(_payload("openai-chat", "gpt-5.4", messages), at=at)
        assert _figures(entry) == _figures(scratch)
    assert 0 < entry.cached_tokens < entry.total_tokens
