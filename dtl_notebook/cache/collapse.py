"""A cache collapse: a request read clearly less than the previous one left warm, and why.

Expected is what the previous request left in the cache (as reported where the provider said,
else as predicted); read is what the provider reported (the emulator's figure on the
emulator). A drop of at least `min_share` of the expected and `min_tokens` tokens is a
collapse (pydantic-ai's defaults: 5 % and 2,000 tokens), named by a reason and the finding
code that explains it:

- expired: the prefix outlived its lifetime (`expired`, or `ttl_gap` where the prediction
  still held but the time since the previous request passed its expiry);
- compacted: the history was rewritten shorter (`history_rewritten`);
- changed: something in the prefix changed (the break's own code);
- unexpected: the prefix was intact and in time, yet not read (`prefix_intact_not_read`);
- unreported: the provider stopped reporting cache figures (`cache_unreported`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.cache.codes import code
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.prefix_rules import CacheRule
from dtl_notebook.cache.warmth import held_tokens

__all__ = ["CacheMiss", "MissReason", "MissThresholds", "detect_miss"]

MissReason = Literal["expired", "compacted", "changed", "unexpected", "unreported"]


@dataclass(frozen=True)
class MissThresholds:
    """How big a drop in read tokens is a collapse: both a share and a number of tokens."""

    min_share: float = 0.05
    min_tokens: int = 2000

    def __post_init__(self) -> None:
        share = self.min_share
        if isinstance(share, bool) or not isinstance(share, int | float):
            raise TypeError(f"min_share must be a number from 0 to 1, got {share!r}")
        if not (math.isfinite(share) and 0 <= share <= 1):
            raise ValueError(f"min_share must be from 0 to 1, got {share!r}")
        tokens = self.min_tokens
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(f"min_tokens must be a whole number ≥ 0, got {tokens!r}")


@dataclass(frozen=True)
class CacheMiss:
    """One collapse: the request, why, by how much, and the fix."""

    index: int
    reason: MissReason
    code: str
    expected: int  # tokens the previous request left warm
    read: int | None  # tokens this request read (None: not reported)
    lost: int
    message: str
    fix: str


def detect_miss(
    previous: CacheEntry | None,
    entry: CacheEntry,
    rule: CacheRule,
    thresholds: MissThresholds = MissThresholds(),
) -> CacheMiss | None:
    """The collapse of `entry` against `previous` (the request before it), or None."""
    if previous is None:
        return None
    expected = _held(previous, rule)
    if entry.reported is not None and entry.reported.cached is None:
        said = previous.reported is not None and previous.reported.cached is not None
        if said and expected >= thresholds.min_tokens:
            return _miss(entry, "unreported", "cache_unreported", expected, None)
        return None
    read = entry.reported.cached if entry.reported is not None else entry.cached_tokens
    lost = expected - (read or 0)
    if lost < thresholds.min_tokens or lost < thresholds.min_share * expected:
        return None
    brk = entry.cache_break
    if brk is not None:
        if brk.cause == BreakCause.EXPIRED:
            return _miss(entry, "expired", str(brk.cause), expected, read)
        if brk.cause == BreakCause.HISTORY_REWRITTEN and entry.total_tokens < previous.total_tokens:
            return _miss(entry, "compacted", str(brk.cause), expected, read)
        return _miss(entry, "changed", str(brk.cause), expected, read)
    if _outlived(previous, entry):
        return _miss(entry, "expired", "ttl_gap", expected, read)
    return _miss(entry, "unexpected", "prefix_intact_not_read", expected, read)


def _held(previous: CacheEntry, rule: CacheRule) -> int:
    """What the previous request left warm: its reported figures where it reported them."""
    used = previous.reported
    if used is not None and used.cached is not None and (rule.breakpoints or rule.reports_writes):
        return used.cached + (used.written or 0)
    return held_tokens(previous, rule)


def _outlived(previous: CacheEntry, entry: CacheEntry) -> bool:
    """Whether `entry` was sent after what `previous` left warm may have gone."""
    before, now = previous.warmth, entry.warmth
    if before is None or now is None or before.earliest_expiry is None:
        return False
    return now.at > before.earliest_expiry


def _miss(
    entry: CacheEntry, reason: MissReason, name: str, expected: int, read: int | None
) -> CacheMiss:
    row = code(name)
    lost = expected - (read or 0)
    message = f"{row.message} ({lost} of {expected} warm tokens not read)"
    return CacheMiss(entry.index, reason, name, expected, read, lost, message, row.fix)
