"""Cache health in a few words, for a terminal line and a status: what is warm and for how
long, the warning when it expires before the next likely request, the hit rate and money
against all-uncached, and as plain data for a view that counts down by itself
(`warmth_data`: the expiry as a timestamp, not a number of seconds left).
"""

from __future__ import annotations

import time
from typing import Any

from dtl_notebook.cache.collapse import CacheMiss
from dtl_notebook.cache.health import CacheHealth
from dtl_notebook.cache.warmth import ExpiryWarning, WarmNow, Warmth

__all__ = ["health_words", "miss_words", "span_left", "warmth_data", "warmth_words"]


def span_left(seconds: float) -> str:
    """`4m59s`, `1h02m`, `12s`."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _money(dollars: float) -> str:
    return f"${dollars:.4f}" if dollars < 0.01 else f"${dollars:.2f}"


def _warning_words(warning: ExpiryWarning) -> str:
    cost = f", {_money(warning.dollars)}" if warning.dollars is not None else ""
    return f"expires before the next likely request ({warning.tokens:,} tokens again{cost})"


def warmth_words(warm: WarmNow) -> str:
    """`warm 30,222 tok 4m59s left (until 02:33:12 UTC)`, `cold`, a warning where one."""
    if warm.expires_at is None or warm.tokens == 0:
        return "cold"
    until = time.strftime("%H:%M:%S", time.gmtime(warm.expires_at))
    words = f"warm {warm.tokens:,} tok {span_left(warm.seconds_left)} left (until {until} UTC)"
    words += " best effort" if warm.best_effort else ""
    return words + (f"; {_warning_words(warm.warning)}" if warm.warning else "")


def health_words(health: CacheHealth) -> str:
    """`hit 97% · $0.12 of $0.95 uncached` (the money only where every model is priced)."""
    words = f"hit {health.hit_rate:.0%}" + ("" if health.reported else " predicted")
    if health.spent is not None and health.uncached is not None:
        words += f" · {_money(health.spent)} of {_money(health.uncached)} uncached"
    if health.refreshes:
        words += f" · {health.refreshes} keep-warm"
    return words


def miss_words(miss: CacheMiss) -> str:
    """`cache miss (expired, expired): ... fix: ...` for an alert line."""
    return f"cache miss ({miss.reason}, {miss.code}): {miss.message}; fix: {miss.fix}"


def warmth_data(warmth: Warmth | None) -> dict[str, Any] | None:
    """What a request left warm as JSON data: a viewer counts down to `expires_at` (seconds
    since the epoch on the sender's clock) by itself."""
    if warmth is None or warmth.expires_at is None:
        return None
    warning = warmth.warning
    return {
        "tokens": warmth.tokens,
        "at": warmth.at,
        "expires_at": warmth.expires_at,
        "ttl": warmth.ttl,
        "tiers": [list(t) for t in warmth.tiers],
        "best_effort": warmth.best_effort,
        "earliest_expiry": warmth.earliest_expiry,
        "note": warmth.note,
        "warning": None
        if warning is None
        else {
            "message": _warning_words(warning),
            "fix": warning.fix,
            "tokens": warning.tokens,
            "dollars": warning.dollars,
            "next_request_at": warning.next_request_at,
        },
    }
