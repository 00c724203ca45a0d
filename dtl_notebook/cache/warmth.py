"""What a conversation holds warm in the provider's cache after each request, until when, and
whether that lasts to its next likely request.

A prefix lives `ttl` seconds after its last read or write (`retention`): Anthropic 5 minutes
or 1 hour by the breakpoint's `ttl`, refreshed on every read; OpenAI's in-memory cache for the
model's rule (best effort: it may go after 5 minutes idle), 24 hours with
`prompt_cache_retention: "24h"`. Anthropic breakpoints of both lifetimes make tiers: the 1-hour
prefix outlives the 5-minute tail. The next likely request is the median of the latest gaps
between the conversation's requests; a prefix expiring before it is a warning, priced as the
write it forces instead of a read.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import Protocol

from dtl_notebook.cache.codes import code
from dtl_notebook.cache.prefix_rules import CacheRule
from dtl_notebook.cache.prices import Price, shipped_prices
from dtl_notebook.cache.retention import retention

__all__ = [
    "ExpiryWarning",
    "WarmNow",
    "Warmth",
    "held_tokens",
    "miss_cost",
    "warmth_after",
    "with_warning",
]

GAPS_KEPT = 8  # the latest gaps the next likely request is judged from


class Figures(Protocol):
    """A request's predicted cache figures (a `CacheEntry`, which carries its warmth)."""

    provider: str
    model: str
    total_tokens: int
    cached_tokens: int
    written_tokens: int


@dataclass(frozen=True)
class ExpiryWarning:
    """A warm prefix that expires before the next likely request, and what that costs."""

    expires_at: float
    next_request_at: float
    tokens: int  # written again by the next request instead of read
    dollars: float | None  # the write over the read it replaces; None: the model is not priced
    message: str
    fix: str


@dataclass(frozen=True)
class WarmNow:
    """What is warm at one moment: tokens, until when, and how sure that is."""

    tokens: int
    expires_at: float | None  # None: nothing warm
    seconds_left: float
    best_effort: bool
    note: str
    warning: ExpiryWarning | None


@dataclass(frozen=True)
class Warmth:
    """What one request left warm: (tokens, expires_at) tiers, longest prefix first."""

    at: float  # when the request read or wrote it
    ttl: float  # the lifetime of the longest prefix
    tiers: tuple[tuple[int, float], ...]
    best_effort: bool
    earliest_expiry: float | None  # a best-effort cache may clear it this soon
    note: str
    source: str
    warning: ExpiryWarning | None = None

    @property
    def tokens(self) -> int:
        return self.tiers[0][0] if self.tiers else 0

    @property
    def expires_at(self) -> float | None:
        return self.tiers[0][1] if self.tiers else None

    def at_time(self, now: float) -> WarmNow:
        """What of it is still warm at `now`: the longest tier not yet expired."""
        live = [(tokens, end) for tokens, end in self.tiers if end >= now]
        tokens, end = max(live, default=(0, None))
        left = end - now if end is not None else 0.0
        return WarmNow(tokens, end, left, self.best_effort, self.note, self.warning)


def held_tokens(entry: Figures, rule: CacheRule) -> int:
    """What a request leaves in the cache for the next one to read."""
    if rule.breakpoints or rule.reports_writes:  # only what was read or written is held
        return entry.cached_tokens + entry.written_tokens
    # automatic caching holds the whole prefix, in whole steps of the granularity
    return rule.floor(entry.total_tokens)


def miss_cost(price: Price, tokens: int, ttl: float) -> float:
    """Dollars a miss of `tokens` adds: writing them again instead of reading them."""
    return tokens * price.input / 1_000_000 * (price.write_share(ttl) - price.cache_read)


def warmth_after(
    entry: Figures,
    rule: CacheRule,
    now: float,
    written: list[tuple[int, float]],
    ttl: float,
    gaps: list[float],
) -> Warmth:
    """What `entry` (sent at `now`) leaves warm. `written`: (tokens, ttl) of each breakpoint
    it marked; `ttl`: the lifetime of an automatic entry (or of the entry a breakpoint
    request read); `gaps`: the conversation's latest gaps between requests."""
    kept = retention(entry.provider)
    if rule.breakpoints:
        lifetimes = [(t, life) for t, life in written if t >= rule.min_tokens]
        if entry.cached_tokens:  # a read refreshes the entry it read
            lifetimes.append((entry.cached_tokens, ttl))
    else:
        held = held_tokens(entry, rule)
        lifetimes = [(held, ttl)] if held >= max(rule.min_tokens, 1) else []
    tiers = _tiers([(t, now + life) for t, life in lifetimes])
    earliest = None
    if tiers:
        earliest = tiers[0][1]
        if kept.best_effort and kept.earliest_seconds is not None:
            earliest = min(earliest, now + kept.earliest_seconds)
    longest = tiers[0][1] - now if tiers else 0.0
    warning = _warning(now, earliest, tiers[0][0] if tiers else 0, longest, entry.model, gaps)
    return Warmth(now, longest, tiers, kept.best_effort, earliest, kept.note, kept.source, warning)


def _tiers(ends: list[tuple[int, float]]) -> tuple[tuple[int, float], ...]:
    """Longest prefix first; a shorter prefix is a tier only where it outlives every longer."""
    if len(ends) < 2:  # most requests: one lifetime
        return tuple(ends)
    out: list[tuple[int, float]] = []
    for tokens, end in sorted(ends, key=lambda te: (-te[0], -te[1])):
        if not out or end > out[-1][1]:  # the ends kept only grow
            out.append((tokens, end))
    return tuple(out)


def with_warning(warmth: Warmth, model: str, gaps: list[float]) -> Warmth:
    """`warmth` judged again against other `gaps` (e.g. between a user's turns)."""
    warning = _warning(warmth.at, warmth.earliest_expiry, warmth.tokens, warmth.ttl, model, gaps)
    return replace(warmth, warning=warning)


def _warning(
    at: float, expiry: float | None, tokens: int, ttl: float, model: str, gaps: list[float]
) -> ExpiryWarning | None:
    """A warning where `tokens` warm until `expiry` go before the next likely request: the
    median of the latest `gaps` after `at`."""
    latest = gaps[-GAPS_KEPT:]
    if not latest or expiry is None or expiry >= at + max(latest):  # lasts past any gap
        return None
    next_at = at + statistics.median(latest)
    if expiry >= next_at:
        return None
    price = shipped_prices().find(model)
    dollars = miss_cost(price, tokens, ttl) if price else None
    row = code("expires_before_next")
    return ExpiryWarning(expiry, next_at, tokens, dollars, row.message, row.fix)
