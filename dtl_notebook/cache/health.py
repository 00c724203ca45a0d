"""A conversation's cache health at a glance: its hit rate (tokens read from the cache over
input tokens) and what its input cost against sending everything uncached.

The figures are the provider's where it reported them, else the analyzer's prediction; an
engine that reported no cache figure for a request tells nothing about its hits, so that
request is left out of the rate (`reported_usage`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.prices import PriceTable, shipped_prices

__all__ = ["CacheHealth", "HitCount", "RunningHealth", "conversation_health", "hit_tokens"]


@dataclass(frozen=True)
class CacheHealth:
    """Hit rate and money of one conversation (dollars; None where a model is not priced)."""

    requests: int
    input_tokens: int
    cached_tokens: int
    hit_rate: float  # cached / input tokens
    reported: bool  # the provider's figures (False: predicted)
    spent: float | None
    uncached: float | None  # had nothing been read from the cache
    refreshes: int = 0  # keep-warm refreshes among the requests
    refresh_spent: float = 0.0

    @property
    def saved(self) -> float | None:
        return None if self.spent is None or self.uncached is None else self.uncached - self.spent


def _figures(entry: CacheEntry) -> tuple[int, int, int] | None:
    """(cached, written, uncached): reported where known, else predicted; None: unknown."""
    used = entry.reported
    if used is None:
        return entry.cached_tokens, entry.written_tokens, entry.uncached_tokens
    if used.cached is None:
        return None
    return used.cached, used.written or 0, used.uncached or 0


class HitCount:
    """`hit_tokens` gathered one entry at a time (an audit that streams a long capture)."""

    def __init__(self) -> None:
        self.predicted = [0, 0]  # read, input tokens
        self.known = [0, 0]  # the same, as reported
        self.any_known = self.reported = False

    def add(self, entry: CacheEntry) -> None:
        self.predicted[0] += entry.cached_tokens
        self.predicted[1] += entry.total_tokens
        if entry.reported is None:
            return
        self.reported = True
        figures = _figures(entry)
        if figures is not None:
            self.any_known = True
            self.known[0] += figures[0]
            self.known[1] += sum(figures)

    def result(self) -> tuple[int, int, bool]:
        read, total = self.known if self.any_known else self.predicted
        return read, total, self.reported


def hit_tokens(entries: Sequence[CacheEntry]) -> tuple[int, int, bool]:
    """(tokens read from the cache, input tokens, whether any were reported) over `entries`:
    reported figures where any request reported them, else the predictions."""
    count = HitCount()
    for entry in entries:
        count.add(entry)
    return count.result()


class RunningHealth:
    """`conversation_health` gathered one entry at a time (the proxy keeps no entries)."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.table = prices or shipped_prices()
        self.count = HitCount()
        self.requests = self.refreshes = 0
        self.spent = self.uncached = self.refresh_spent = 0.0
        self.priced = True

    def add(self, entry: CacheEntry, refresh: bool = False) -> None:
        self.count.add(entry)
        self.requests += 1
        self.refreshes += refresh
        price, figures = self.table.find(entry.model), _figures(entry)
        if price is None or figures is None:
            self.priced = False
            return
        cached, written, plain = figures
        ttl = entry.warmth.ttl if entry.warmth is not None else 0.0
        share = cached * price.cache_read + written * price.write_share(ttl) + plain
        cost = price.input / 1_000_000 * share
        self.spent += cost
        self.uncached += price.input / 1_000_000 * (cached + written + plain)
        self.refresh_spent += cost if refresh else 0.0

    def result(self) -> CacheHealth:
        read, total, reported = self.count.result()
        return CacheHealth(
            self.requests,
            total,
            read,
            read / total if total else 0.0,
            reported,
            self.spent if self.priced else None,
            self.uncached if self.priced else None,
            self.refreshes,
            self.refresh_spent,
        )


def conversation_health(
    entries: Sequence[CacheEntry],
    prices: PriceTable | None = None,
    refreshes: Collection[int] = (),
) -> CacheHealth:
    """The health of one conversation's `entries`; `refreshes`: indexes of keep-warm ones."""
    running = RunningHealth(prices)
    for k, entry in enumerate(entries):
        running.add(entry, k in refreshes)
    return running.result()
