"""The provider's prompt cache as the analyzer models it: what each request reads and writes,
under which key, and how long each write lives."""

from __future__ import annotations

from typing import Any

from dtl_notebook.cache.carry import Carried
from dtl_notebook.cache.prefix_rules import CacheRule, cache_namespace
from dtl_notebook.cache.prefix_store import Lifetime, PrefixStore
from dtl_notebook.cache.retention import request_ttl
from dtl_notebook.context.model import ModelContext, Segment
from dtl_notebook.context.tokens import encoding_for

__all__ = ["PromptCache", "SegmentKeys", "generated_run"]


class SegmentKeys:
    """Cache keys of a request's segments: the chain hash, with the request's settings mixed
    in from segment `cut` on."""

    def __init__(self, chain: list[str], cut: int, settings_salt: str) -> None:
        self.chain, self.cut, self.salt = chain, cut, settings_salt

    def __getitem__(self, i: int) -> str:
        key = self.chain[i]
        return key + self.salt if self.salt and i >= self.cut else key


class PromptCache:
    """What one conversation reads and writes, in the scope-level `PrefixStore` it shares
    with every other conversation of the same organization (or OpenAI project)."""

    def __init__(self, store: PrefixStore | None = None) -> None:
        self.store = store if store is not None else PrefixStore()
        # the automatic-caching run the previous request belongs to: every link of its chain
        # (and only those) shares one lifetime, so a request that extends it refreshes them all
        self.run: tuple[CacheRule, Lifetime, int, str] | None = None

    # -- Anthropic-style: writes at breakpoints, reads look back a fixed number of blocks -----
    def breakpoints(
        self,
        ctx: ModelContext,
        facts: Carried,
        chain: SegmentKeys,
        points: list[tuple[int, float]],
        rule: CacheRule,
        now: float,
    ) -> tuple[int, int, bool, int]:
        """(cached, written, expired, the last segment written or -1)."""
        cum, ends = facts.cum, facts.ends
        scope = self.store.scope(rule.provider, ctx.model)
        expired, cached, hit_key = False, 0, None
        for point, _ in points:
            block = ctx.segments[point].block
            for back in range(block, max(block - rule.lookback_blocks, -1), -1):
                key = chain[ends[back]] if back in ends else None
                hit, gone = scope.live(key, now) if key else (None, False)
                expired = expired or gone
                if hit is None:
                    continue
                if cum[ends[back]] > cached:
                    cached, hit_key = cum[ends[back]], key
                break
        if hit_key is not None:  # a read refreshes the entry's lifetime
            scope.put(hit_key, Lifetime(now, scope.written[hit_key].ttl))
        written, wrote = 0, -1
        self.run = None
        for point, ttl in points:
            if cum[point] >= rule.min_tokens:
                scope.put(chain[point], Lifetime(now, ttl))
                written = max(written, cum[point] - cached)
                wrote = max(wrote, point)
        return cached, written, expired, wrote

    # -- automatic prefix caching (OpenAI, OpenAI-compatible servers, Kimi) -------------------
    def prefix_cache(
        self,
        ctx: ModelContext,
        facts: Carried,
        rule: CacheRule,
        now: float,
        payload: dict[str, Any],
        hidden_tokens: int = 0,
    ) -> tuple[int, int, bool]:
        """(cached, written, expired) under automatic prefix caching; `hidden_tokens`: the
        provider's own leading prompt that every request with the same hosted tools shares
        (`prefix_rules.shared_prefix`), read from the cache across conversations."""
        chain, cum, shared = facts.chain, facts.cum, facts.shared
        common, expired, matched, start = 0, False, -1, 0
        key = cache_namespace(rule, payload)
        space = self.store.scope(rule.provider, ctx.model, key)
        run = self.run
        extends = run is not None and run[0] == rule and 0 < run[2] == shared and run[3] == key
        # the shared links are all in this run's lifetime, unless it expired: another
        # conversation of the scope may have read them since, so they are looked up again
        extends = extends and run is not None and run[1].alive(now)
        if run is not None and extends:
            lifetime = run[1]
            matched, common, start = shared - 1, cum[shared - 1], shared
        else:
            lifetime = Lifetime(now, request_ttl(rule.provider, payload, rule.ttl_seconds))
        for i in range(start, len(chain)):
            hit, gone = space.live(chain[i], now)
            if hit is None:
                expired = gone
                break
            matched, common = i, cum[i]
        # where an earlier request ended, the output its call generated follows
        ended = matched >= 0 and chain[matched] in space.ends
        if rule.output_items and not rule.reports_writes and ended:
            matched = generated_run(ctx.segments, matched, rule.output_items)
            common = cum[matched]
        if not rule.reports_writes and matched + 1 < len(ctx.segments):
            # a common prefix can end inside the next segment
            following = space.prefix.get(chain[matched] if matched >= 0 else "")
            if following is not None:
                text = ctx.segments[matched + 1].text
                chars = _common_chars(following[1], text)
                if chars:
                    common += encoding_for(ctx.provider, ctx.model).count(text[:chars])
        common = max(common, hidden_tokens)
        cached = rule.floor(common)
        if rule.reports_writes:  # exact boundaries: only ends of earlier requests were written
            # running totals only grow: the last earlier end within the match counts
            ends = (cum[i] for i in range(matched, -1, -1) if chain[i] in space.ends)
            cached = next(ends, 0)
            cached = cached if cached >= rule.min_tokens else 0
        lifetime.written_at = now
        first = shared if extends else 0
        for i in range(first, len(chain)):
            space.put(chain[i], lifetime)
        for i in range(max(first - 1, 0), len(chain) - 1):
            space.prefix[chain[i]] = (cum[i], ctx.segments[i + 1].text)
        self.run = (rule, lifetime, len(chain), key)
        if chain:
            space.ends.add(chain[-1])
            space.prefix[""] = (0, ctx.segments[0].text)
        total = cum[-1] if cum else 0
        written = total - cached if rule.reports_writes and total >= rule.min_tokens else 0
        return cached, written, expired

    # -- what the provider's answer proves ------------------------------------------------------
    def prove(
        self,
        ctx: ModelContext,
        facts: Carried,
        keys: SegmentKeys,
        rule: CacheRule,
        now: float,
        read: int,
        payload: dict[str, Any],
    ) -> None:
        """The provider reported reading `read` tokens of this request: that prefix exists in
        the scope (written by a request we did not see), so later requests may read it. It is
        recorded at the last block end within `read` (where a breakpoint read looks)."""
        cum = facts.cum
        ends = sorted(facts.ends.values()) if rule.breakpoints else range(len(cum))
        inside = [i for i in ends if i < len(cum) and cum[i] <= read]
        if not inside:
            return
        last = inside[-1]
        routing = "" if rule.breakpoints else cache_namespace(rule, payload)
        scope = self.store.scope(rule.provider, ctx.model, routing)
        lifetime = Lifetime(now, request_ttl(rule.provider, payload, rule.ttl_seconds))
        for i in (last,) if rule.breakpoints else range(last + 1):
            found, _ = scope.live(keys[i], now)
            if found is None or found.written_at < now:
                scope.put(keys[i], lifetime)
        if rule.reports_writes:
            scope.ends.add(keys[last])


def generated_run(segments: list[Segment], end: int, items: tuple[str, ...]) -> int:
    """The last of the items right after `end` (an earlier request's end) that its call
    generated: reasoning, function calls, the assistant's message. The provider cached them
    with that request's prefix when the call ended (`data/generated.json`), where the run
    starts with `items[0]` (reasoning: what the measurement and the provider's page show)."""
    last = end
    for segment in segments[end + 1 :]:
        label = "message" if segment.label == "assistant" else segment.label
        if segment.role != "assistant" or segment.kind != "message" or label not in items:
            break
        if last == end and label != items[0]:
            return end
        last += 1
    return last


def _common_chars(a: str, b: str) -> int:
    """The length of the common start of `a` and `b`: a binary search over slice comparisons
    (each at C speed), not a loop over characters (a tool result may be long)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        mid = (low + high) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid
    return low
