"""Cache health as the view shows it: what is warm and until when (a timestamp the browser
counts down to by itself, with the agent's clock at sending so a test's fake clock counts
too), the session's hit rate and money against all-uncached, a keep-warm refresh and a
collapse on their timeline boxes, and the same in words for `%dtl status`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from dtl_notebook.cache.collapse import CacheMiss, detect_miss
from dtl_notebook.cache.glance import health_words, miss_words, warmth_data, warmth_words
from dtl_notebook.cache.health import CacheHealth, conversation_health
from dtl_notebook.cache.prefix_rules import cache_rule
from dtl_notebook.cache.warmth import WarmNow
from dtl_notebook.live.agent import Agent
from dtl_notebook.notebook.records import RequestRecord

__all__ = ["header_health", "item_health", "records_health", "records_miss", "status_text"]


def _money(dollars: float | None) -> float | None:
    return None if dollars is None else round(dollars, 6)


def _warm(warm: WarmNow, now: float, keep_warm: bool) -> dict[str, Any]:
    warning = warm.warning
    return {
        "tokens": warm.tokens,
        "expires_at": warm.expires_at,
        "clock": now,
        "best_effort": warm.best_effort,
        "warning": None
        if warning is None
        else {
            "tokens": warning.tokens,
            "dollars": _money(warning.dollars),
            "next_request_at": warning.next_request_at,
            "fix": warning.fix,
        },
        "keep_warm": keep_warm,
    }


def _health(health: CacheHealth) -> dict[str, Any]:
    return {
        "requests": health.requests,
        "hit_rate": round(health.hit_rate, 4),
        "spent": _money(health.spent),
        "uncached": _money(health.uncached),
        "refreshes": health.refreshes,
        "reported": health.reported,
        "words": health_words(health) if health.requests else "",
    }


def header_health(agent: Agent) -> dict[str, Any]:
    """The header's `warm` (expiry as data, `clock`: the agent's time now), `health` and the
    latest `miss`."""
    now = agent.clock()
    misses = [s.cache_miss for s in agent.steps if s.cache_miss is not None]
    return {
        "warm": _warm(agent.warmth(now), now, agent.keep_warm is not None),
        "health": _health(agent.cache_health()),
        "miss": miss_words(misses[-1]) if misses else None,
    }


def records_health(records: Sequence[RequestRecord]) -> dict[str, Any]:
    """The same for one conversation the proxy sees, on this machine's clock."""
    now = time.time()
    last = records[-1].cache.warmth if records else None
    warm = last.at_time(now) if last is not None else WarmNow(0, None, 0.0, False, "", None)
    health = conversation_health([r.cache for r in records])
    misses = [r.miss for r in records if r.miss is not None]
    return {
        "warm": _warm(warm, now, False),
        "health": _health(health),
        "miss": miss_words(misses[-1]) if misses else None,
    }


def records_miss(records: Sequence[RequestRecord], index: int) -> CacheMiss | None:
    """The collapse of the answered request `index` against the one before it."""
    if index < 1:
        return None
    entry = records[index].cache
    rule = cache_rule(entry.provider, entry.model)
    return detect_miss(records[index - 1].cache, entry, rule)


def item_health(rec: RequestRecord) -> dict[str, Any]:
    """A timeline item's warmth (as the request left it), keep-warm refresh and collapse."""
    item: dict[str, Any] = {}
    warm = warmth_data(rec.cache.warmth)
    if warm is not None:
        item["warmth"] = {
            "tokens": warm["tokens"],
            "expires_at": warm["expires_at"],
            "warning": warm["warning"]["message"] if warm["warning"] else None,
        }
    if rec.keep_warm is not None:
        decision = rec.keep_warm
        item["keep_warm"] = {
            "saving": _money(decision.saving),
            "cost": _money(decision.cost),
            "reason": decision.reason,
        }
    if rec.miss is not None:
        item["miss"] = {
            "reason": rec.miss.reason,
            "code": rec.miss.code,
            "lost": rec.miss.lost,
            "text": miss_words(rec.miss),
        }
    return item


def status_text(agent: Agent, name: str) -> str:
    """`%dtl status`: the session, what is warm and for how long, health, keep-warm."""
    health = agent.cache_health()
    lines = [
        f"{name}: {agent.provider} {agent.model}, {agent.turns} turn(s), "
        f"{len(agent.steps)} request(s)",
        f"  cache: {warmth_words(agent.warmth())}",
    ]
    if health.requests:
        lines.append(f"  session: {health_words(health)}")
    keeper = agent.keep_warm
    if keeper is None:
        lines.append("  keep-warm: off (%%agent --keep-warm turns it on)")
    else:
        policy = keeper.policy
        lines.append(
            f"  keep-warm: on, {len(keeper.decisions)} refresh(es) this session, "
            f"${keeper.spent:.4f} this idle stretch (caps: {policy.max_idle_seconds:.0f} s "
            f"idle, ${policy.max_spend:.2f})"
        )
    misses = [s.cache_miss for s in agent.steps if s.cache_miss is not None]
    if misses:
        lines.append(f"  last {miss_words(misses[-1])}")
    return "\n".join(lines)
