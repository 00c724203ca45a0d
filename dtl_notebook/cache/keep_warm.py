"""When refreshing a conversation's warm prefix pays: a refresh while the user is idle,
shortly before the prefix expires, only where it costs less than the miss it prevents, and
never past a cap on idle time or money.

Without a refresh the next request writes the prefix again (Anthropic: 1.25x the input price
for a 5-minute write, 2x for a 1-hour one; OpenAI: the full input price). With one, the
refresh reads it (0.1x on Anthropic, the model's cached price on OpenAI) plus its uncached
tail at the full price, and the next request reads it too. The saving is the difference; a
saving under `min_saving` dollars is not worth a request (Pi skips under $0.05).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dtl_notebook.cache.prices import Price
from dtl_notebook.cache.warmth import Warmth, miss_cost

__all__ = ["KeepWarm", "RefreshDecision", "refresh_cost", "refresh_decision"]


@dataclass(frozen=True)
class KeepWarm:
    """How an agent keeps its prefix warm while the user is idle (dollars, seconds)."""

    lead_seconds: float = 30.0  # refresh this long before the prefix may expire
    min_saving: float = 0.05  # a refresh must save at least this much
    max_idle_seconds: float = 1800.0  # no refresh this long after the last turn
    max_spend: float = 1.0  # refreshes in one idle stretch cost at most this much
    interval_seconds: float = 5.0  # how often the background timer looks
    background: bool = True  # False: only `tick(now)` refreshes (a scheduler of your own)

    def __post_init__(self) -> None:
        for name in ("lead_seconds", "min_saving", "max_idle_seconds", "max_spend"):
            _non_negative(name, getattr(self, name))
        _non_negative("interval_seconds", self.interval_seconds)
        if self.interval_seconds == 0:
            raise ValueError("keep_warm.interval_seconds must be above 0, got 0")


def _non_negative(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"keep_warm.{name} must be a number, got {value!r}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"keep_warm.{name} must be a finite number ≥ 0, got {value!r}")


@dataclass(frozen=True)
class RefreshDecision:
    """Whether to refresh now, why, and the figures it was judged on (dollars)."""

    refresh: bool
    reason: str
    due_at: float | None = None  # when a refresh becomes due
    tokens: int = 0  # warm tokens a refresh keeps
    cost: float | None = None
    saving: float | None = None


def refresh_cost(price: Price, warm: int, total: int) -> float:
    """Dollars of a refresh: the warm prefix read, the rest of the request sent uncached."""
    return price.input / 1_000_000 * (warm * price.cache_read + max(total - warm, 0))


def refresh_decision(
    policy: KeepWarm,
    warmth: Warmth | None,
    total_tokens: int,
    price: Price | None,
    now: float,
    idle_since: float,
    spent: float,
) -> RefreshDecision:
    """Whether to refresh at `now` the prefix `warmth` describes, by a request of
    `total_tokens`, the user idle since `idle_since`, `spent` dollars on refreshes since."""
    state = warmth.at_time(now) if warmth is not None else None
    if warmth is None or state is None or state.expires_at is None:
        return RefreshDecision(False, "nothing is warm")
    deadline = state.expires_at
    if state.tokens == warmth.tokens and warmth.earliest_expiry is not None:
        deadline = min(deadline, warmth.earliest_expiry)  # a best-effort cache may go sooner
    due = deadline - policy.lead_seconds
    if now < due:
        return RefreshDecision(False, "not due yet", due, state.tokens)
    if now - idle_since > policy.max_idle_seconds:
        return RefreshDecision(False, "past the idle-time cap", due, state.tokens)
    if price is None:
        return RefreshDecision(False, "the model has no price", due, state.tokens)
    cost = refresh_cost(price, state.tokens, total_tokens)
    saving = miss_cost(price, state.tokens, state.expires_at - warmth.at) - cost
    figures = (due, state.tokens, cost, saving)
    if saving < policy.min_saving:
        return RefreshDecision(False, "the saving is below the threshold", *figures)
    if spent + cost > policy.max_spend:
        return RefreshDecision(False, "past the money cap", *figures)
    return RefreshDecision(True, "refresh: it costs less than the miss it prevents", *figures)
