"""Predict prompt-cache hits request by request, and explain every break.

Each request becomes a model context (ordered segments); a chain hash over the segments lets
a new request be compared with everything written before by hash lookups alone, so the work
per request is its new part plus one hash per segment.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from dtl_notebook.cache.carry import Carried, breakpoint_segments, carry
from dtl_notebook.cache.change_savings import ChangeSaving, change_savings
from dtl_notebook.cache.diagnostics import ProviderDiagnosis, agreement, provider_diagnosis
from dtl_notebook.cache.explain import (
    SYSTEM_KINDS,
    TOOL_KINDS,
    CacheBreak,
    DiffOp,
    Earlier,
    Now,
    explain,
    scaffolding_break,
)
from dtl_notebook.cache.prefix_rules import CacheRule, cache_namespace, cache_rule, shared_prefix
from dtl_notebook.cache.reported import Usage, reported_usage
from dtl_notebook.cache.settings import cache_view, changed_setting, request_settings, salt
from dtl_notebook.context.input_transformations import as_seen
from dtl_notebook.context.model import ModelContext, model_context
from dtl_notebook.context.tokens import encoding_for
from dtl_notebook.wire.arguments import check_analyze_arguments
from dtl_notebook.wire.request import WireRequest

__all__ = [
    "SYSTEM_KINDS",
    "TOOL_KINDS",
    "CacheAnalyzer",
    "CacheBreak",
    "CacheEntry",
    "CacheReport",
    "DiffOp",
    "Usage",
    "analyze",
    "reported_usage",
]


@dataclass(repr=False)
class CacheEntry:
    """The prediction for one request."""

    index: int
    provider: str
    model: str
    total_tokens: int
    cached_tokens: int
    written_tokens: int
    uncached_tokens: int
    best_cached_tokens: int
    cache_break: CacheBreak | None
    context: ModelContext
    reported: Usage | None = None
    disagreement: str | None = None
    diagnosis: ProviderDiagnosis | None = None  # the provider's own reason, when it gave one
    diagnosis_agreement: str = "unavailable"  # predicted cause vs. the provider's reason
    # a fact, not a break: the request is shorter than the model's minimum cacheable prefix,
    # so none of it is written to the cache, e.g. "40 < 1024 tokens"
    below_minimum: str | None = None
    # each tool change first carried here: its cost against a naive rewrite of the tools
    change_savings: list[ChangeSaving] = field(default_factory=list)
    # hidden prompts of hosted tools whose size is not published: shared by every request
    # with the same tool, they are read from the cache across conversations (a first request
    # included) but are not in `cached_tokens`
    shared_unpredicted: tuple[str, ...] = ()

    def __repr__(self) -> str:
        brk = f", break={str(self.cache_break.cause)!r}" if self.cache_break else ""
        brk += f", below the minimum ({self.below_minimum})" if self.below_minimum else ""
        return (
            f"CacheEntry(index={self.index}, cached={self.cached_tokens}, "
            f"written={self.written_tokens}, uncached={self.uncached_tokens}{brk})"
        )


@dataclass(repr=False)
class CacheReport:
    """One entry per request, in order."""

    entries: list[CacheEntry]

    def __repr__(self) -> str:
        cached = sum(e.cached_tokens for e in self.entries)
        total = sum(e.total_tokens for e in self.entries) or 1
        return (
            f"CacheReport(requests={len(self.entries)}, breaks={len(self.breaks)}, "
            f"cached={round(100 * cached / total)}%)"
        )

    def __getitem__(self, index: int) -> CacheEntry:
        return self.entries[index]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[CacheEntry]:
        return iter(self.entries)

    @property
    def breaks(self) -> list[CacheEntry]:
        return [e for e in self.entries if e.cache_break is not None]


class _Keys:
    """Cache keys of a request's segments: the chain hash, with the request's settings mixed
    in from segment `cut` on."""

    def __init__(self, chain: list[str], cut: int, settings_salt: str) -> None:
        self.chain, self.cut, self.salt = chain, cut, settings_salt

    def __getitem__(self, i: int) -> str:
        key = self.chain[i]
        return key + self.salt if self.salt and i >= self.cut else key


@dataclass
class _Lifetime:
    """When a cache entry was last written or read, and how long it lives after that."""

    written_at: float
    ttl: float


@dataclass
class _Space:
    """What automatic prefix caching has written under one routing key (`prompt_cache_key`)."""

    written: dict[str, _Lifetime]  # chain hash -> when written, for how long
    prefix: dict[str, tuple[int, str]]  # chain -> tokens, next segment text
    ends: set[str]  # chain hashes at the end of earlier requests


class CacheAnalyzer:
    """Feeds requests in order and predicts each one's cache figures against the earlier ones."""

    def __init__(
        self, provider: str | None = None, model: str | None = None, **overrides: Any
    ) -> None:
        self.provider, self.model, self.overrides = provider, model, overrides
        self.entries: list[CacheEntry] = []
        self._written: dict[str, _Lifetime] = {}  # chain hash -> when written, for how long
        # the automatic-caching run the previous request belongs to: every link of its chain
        # (and only those) shares one lifetime, so a request that extends it refreshes them all
        self._run: tuple[CacheRule, _Lifetime, int, str] | None = None
        # automatic caching, per routing key ("" for requests without one)
        self._spaces: dict[str, _Space] = {"": _Space(self._written, {}, set())}
        self._previous: Earlier | None = None
        self._carried: Carried | None = None
        self._previous_deferred = False
        self._changes: set[tuple[int, str]] = set()  # tool changes already paid for

    def add(
        self,
        request: WireRequest | dict[str, Any],
        response: Any = None,
        at: float | None = None,
        *,
        context: ModelContext | None = None,
    ) -> CacheEntry:
        """Analyze the next request (sent at time `at`, in seconds) and remember its writes.
        `context`: the request's model context, where the caller already has it (what
        `model_context(request)` returned); else it is worked out here."""
        ctx = _own_context(request, context) or model_context(request, self.provider, self.model)
        payload = request.payload if isinstance(request, WireRequest) else request
        if response is not None:  # parts the reply says the model never saw
            ctx = as_seen(ctx, payload, response)
        rule = cache_rule(ctx.provider, ctx.model, **self.overrides)
        deferred = _deferred_tools(payload) if rule.deferred_scaffolding else []
        previous = self._previous
        settings = request_settings(ctx.provider, payload)
        settings_salt = salt(ctx.provider, settings)
        carried, self._carried = self._carried, None  # updated in place: unusable if this fails
        facts = carry(cache_view(ctx, settings_salt), bool(deferred), carried)
        chain, cum = facts.chain, facts.cum
        now = float(len(self.entries)) if at is None else at
        points = breakpoint_segments(payload, facts) if rule.breakpoints else []
        if rule.breakpoints:
            # the settings sit between system and messages: mixed into the keys from there
            cut = facts.starts.get("messages", len(chain)) if settings_salt else len(chain)
            keys = _Keys(chain, cut, settings_salt)
            cached, written, expired, wrote = self._breakpoints(ctx, facts, keys, points, rule, now)
        else:
            cut, wrote = 0, len(chain) - 1
            cached, written, expired = self._prefix_cache(ctx, facts, rule, now, payload)
        total = cum[-1] if cum else 0
        best = previous.best(rule) if previous else 0
        setting = None
        if previous is not None and previous.context.model == ctx.model:
            setting = changed_setting(ctx.provider, previous.settings, settings)
        if previous is not None and bool(deferred) != self._previous_deferred:
            brk: CacheBreak | None = scaffolding_break(previous, deferred)
        else:
            brk = explain(
                previous,
                ctx,
                chain,
                facts.shared,
                rule,
                Now(cached, expired, [cum[p] for p, _ in points], setting, settings),
            )
        if brk is not None and self.entries:
            brk = replace(brk, lost_tokens=_lost(self.entries[-1], rule, cached))
        entry = CacheEntry(
            len(self.entries),
            ctx.provider,
            ctx.model,
            total,
            cached,
            written,
            total - cached - written,
            best,
            brk,
            ctx,
            below_minimum=f"{total} < {rule.min_tokens} tokens"
            if total < rule.min_tokens
            else None,
            shared_unpredicted=shared_prefix(ctx, payload, rule)[1],
        )
        if isinstance(request, WireRequest):
            entry.change_savings = change_savings(
                request.load_points, self._changes, ctx, rule, cached
            )
        if response is not None:
            self.answer(entry, response, payload)
        self.entries.append(entry)
        start = facts.starts.get("messages", len(chain)) if rule.breakpoints else 0
        self._previous = Earlier(ctx, chain, cum, len(chain), wrote, settings, start)
        self._previous_deferred = bool(deferred)
        self._carried = facts
        return entry

    def answer(self, entry: CacheEntry, response: Any, payload: dict[str, Any]) -> None:
        """Set what the provider reported for `entry` (predicted earlier, from `payload`
        alone): its figures, how far they are from the prediction, its own diagnosis."""
        rule = cache_rule(entry.provider, entry.model, **self.overrides)
        brk = entry.cache_break
        entry.reported = reported_usage(response, entry.provider)
        entry.disagreement = _disagreement(entry, rule)
        entry.diagnosis = provider_diagnosis(response, entry.provider, payload)
        entry.diagnosis_agreement = agreement(brk.cause if brk else None, entry.diagnosis)

    # -- Anthropic-style: writes at breakpoints, reads look back a fixed number of blocks -----
    def _breakpoints(
        self,
        ctx: ModelContext,
        facts: Carried,
        chain: _Keys,
        points: list[tuple[int, float]],
        rule: CacheRule,
        now: float,
    ) -> tuple[int, int, bool, int]:
        """(cached, written, expired, the last segment written or -1)."""
        cum, ends = facts.cum, facts.ends
        expired, cached, hit_key = False, 0, None
        for point, _ in points:
            block = ctx.segments[point].block
            for back in range(block, max(block - rule.lookback_blocks, -1), -1):
                key = chain[ends[back]] if back in ends else None
                hit = self._written.get(key) if key else None
                if hit is None:
                    continue
                if now - hit.written_at > hit.ttl:
                    expired = True
                    continue
                if cum[ends[back]] > cached:
                    cached, hit_key = cum[ends[back]], key
                break
        if hit_key is not None:  # a read refreshes the entry's lifetime
            self._written[hit_key] = _Lifetime(now, self._written[hit_key].ttl)
        written, wrote = 0, -1
        self._run = None
        for point, ttl in points:
            if cum[point] >= rule.min_tokens:
                self._written[chain[point]] = _Lifetime(now, ttl)
                written = max(written, cum[point] - cached)
                wrote = max(wrote, point)
        return cached, written, expired, wrote

    # -- automatic prefix caching (OpenAI, OpenAI-compatible servers, Kimi) -------------------
    def _prefix_cache(
        self,
        ctx: ModelContext,
        facts: Carried,
        rule: CacheRule,
        now: float,
        payload: dict[str, Any],
    ) -> tuple[int, int, bool]:
        chain, cum, shared = facts.chain, facts.cum, facts.shared
        common, expired, matched, start = 0, False, -1, 0
        key = cache_namespace(rule, payload)
        space = self._spaces.setdefault(key, _Space({}, {}, set()))
        run = self._run
        extends = run is not None and run[0] == rule and 0 < run[2] == shared and run[3] == key
        if run is not None and extends:  # the shared links are all in this run's lifetime
            lifetime = run[1]
            if now - lifetime.written_at > lifetime.ttl:
                expired, start = True, len(chain)
            else:
                matched, common, start = shared - 1, cum[shared - 1], shared
        else:
            lifetime = _Lifetime(now, rule.ttl_seconds)
        for i in range(start, len(chain)):
            hit = space.written.get(chain[i])
            if hit is None:
                break
            if now - hit.written_at > hit.ttl:
                expired = True
                break
            matched, common = i, cum[i]
        if not rule.reports_writes and matched + 1 < len(ctx.segments):
            # a common prefix can end inside the next segment
            following = space.prefix.get(chain[matched] if matched >= 0 else "")
            if following is not None:
                text = ctx.segments[matched + 1].text
                chars = _common_chars(following[1], text)
                if chars:
                    common += encoding_for(ctx.provider, ctx.model).count(text[:chars])
        # the provider's own leading prompt every request with these hosted tools shares
        common = max(common, shared_prefix(ctx, payload, rule)[0])
        cached = rule.floor(common)
        if rule.reports_writes:  # exact boundaries: only ends of earlier requests were written
            # running totals only grow: the last earlier end within the match counts
            ends = (cum[i] for i in range(matched, -1, -1) if chain[i] in space.ends)
            cached = next(ends, 0)
            cached = cached if cached >= rule.min_tokens else 0
        lifetime.written_at = now
        first = shared if extends else 0
        for i in range(first, len(chain)):
            space.written[chain[i]] = lifetime
        for i in range(max(first - 1, 0), len(chain) - 1):
            space.prefix[chain[i]] = (cum[i], ctx.segments[i + 1].text)
        self._run = (rule, lifetime, len(chain), key)
        if chain:
            space.ends.add(chain[-1])
            space.prefix.setdefault("", (0, ctx.segments[0].text))
        total = cum[-1] if cum else 0
        written = total - cached if rule.reports_writes and total >= rule.min_tokens else 0
        return cached, written, expired

    def report(self) -> CacheReport:
        return CacheReport(list(self.entries))


def _own_context(
    request: WireRequest | dict[str, Any], context: ModelContext | None
) -> ModelContext | None:
    """`context`, checked to be one of `request`'s provider and model."""
    if context is None:
        return None
    if not isinstance(context, ModelContext):
        raise TypeError(f"context must be a ModelContext, got {type(context).__name__}")
    if isinstance(request, WireRequest) and (
        context.provider != request.provider or context.model != request.model
    ):
        raise ValueError(
            f"context is for {context.provider} {context.model}, but the request is for "
            f"{request.provider} {request.model}"
        )
    return context


def _lost(previous: CacheEntry, rule: CacheRule, cached: int) -> int:
    """What the previous request left in the cache that this one does not read."""
    if rule.breakpoints or rule.reports_writes:  # only what was read or written is held
        held = previous.cached_tokens + previous.written_tokens
    else:  # automatic caching holds the whole prefix, in whole steps of the granularity
        held = rule.floor(previous.total_tokens)
    return max(0, held - cached)


def _deferred_tools(payload: dict[str, Any]) -> list[str]:
    tools = payload.get("tools") if isinstance(payload, dict) else None
    listed = tools if isinstance(tools, list) else []
    return [
        str(t.get("name")) for t in listed if isinstance(t, dict) and t.get("defer_loading") is True
    ]


def _common_chars(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _disagreement(entry: CacheEntry, rule: CacheRule) -> str | None:
    if entry.reported is None or entry.reported.cached is None:
        return None
    tolerance = max(rule.granularity, int(0.1 * max(entry.total_tokens, 1)))
    gap = entry.reported.cached - entry.cached_tokens
    if abs(gap) <= tolerance:
        return None
    why = (
        f"; the hidden prompt of {', '.join(entry.shared_unpredicted)} (size not published) is "
        "read from the cache across conversations and is not in the prediction"
        if gap > 0 and entry.shared_unpredicted
        else ""
    )
    return (
        f"predicted {entry.cached_tokens} cached tokens, the provider reported "
        f"{entry.reported.cached} ({'+' if gap > 0 else ''}{gap}){why}"
    )


def analyze(
    requests: list[Any],
    provider: str | None = None,
    model: str | None = None,
    responses: list[Any] | None = None,
    times: list[float] | None = None,
    **overrides: Any,
) -> CacheReport:
    """Predict cached, written and uncached tokens for each request, and explain breaks.

    `requests` are WireRequests or plain payload dicts (then pass `provider`); `responses`
    (same length, None allowed) adds reported usage; `times` are send times in seconds.
    """
    check_analyze_arguments(requests, provider, model, responses, times)
    analyzer = CacheAnalyzer(provider, model, **overrides)
    for i, request in enumerate(requests):
        response = responses[i] if responses and i < len(responses) else None
        analyzer.add(request, response, times[i] if times else None)
    return analyzer.report()
