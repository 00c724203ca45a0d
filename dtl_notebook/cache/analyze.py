"""Predict prompt-cache hits request by request, and explain every break.

Each request becomes a model context (ordered segments); a chain hash over the segments lets
a new request be compared with everything written before by hash lookups alone, so the work
per request is its new part plus one hash per segment.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from dtl_notebook.cache.carry import Carried, breakpoint_segments, carry
from dtl_notebook.cache.change_savings import change_savings
from dtl_notebook.cache.codes import capabilities
from dtl_notebook.cache.conversation_key import conversation_names
from dtl_notebook.cache.diagnostics import agreement, provider_diagnosis
from dtl_notebook.cache.entries import CacheEntry, CacheReport, disagreement
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
from dtl_notebook.cache.prefix_rules import CacheRule, cache_rule, shared_prefix
from dtl_notebook.cache.prefix_store import PrefixStore, scope_words
from dtl_notebook.cache.prompt_cache import PromptCache, SegmentKeys, generated_run
from dtl_notebook.cache.reported import Usage, reported_usage
from dtl_notebook.cache.request_context import request_context
from dtl_notebook.cache.response_continuation import read_continuation
from dtl_notebook.cache.retention import request_ttl
from dtl_notebook.cache.session_head import session_head
from dtl_notebook.cache.settings import cache_view, changed_setting, request_settings, salt
from dtl_notebook.cache.thread_events import ThreadWatch, thread_error_code
from dtl_notebook.cache.warmth import GAPS_KEPT, held_tokens, warmth_after
from dtl_notebook.context.input_transformations import as_seen
from dtl_notebook.context.model import ModelContext
from dtl_notebook.context.response_chain import ResponseChain
from dtl_notebook.context.thread_context import ThreadRead
from dtl_notebook.wire.arguments import check_analyze_arguments
from dtl_notebook.wire.request import WireRequest
from dtl_notebook.wire.rules import cache_marks

__all__ = [
    "SYSTEM_KINDS",
    "TOOL_KINDS",
    "CacheAnalyzer",
    "CacheBreak",
    "DiffOp",
    "Usage",
    "analyze",
    "analyze_conversations",
    "reported_usage",
]


class CacheAnalyzer:
    """Feeds requests in order and predicts each one's cache figures against the earlier ones.
    `keep=False` keeps only the latest entry in `entries` (an audit of a long capture in
    bounded memory); `count` is the number of requests fed either way. `store`: the
    scope-level cache it reads and writes (`PrefixStore`), shared with every analyzer of
    the same organization's traffic; a fresh one where none is given."""

    def __init__(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        keep: bool = True,
        store: PrefixStore | None = None,
        **overrides: Any,
    ) -> None:
        self.provider, self.model, self.overrides = provider, model, overrides
        self.entries: list[CacheEntry] = []
        self.keep, self.count = keep, 0
        self._cache = PromptCache(store)
        self.store = self._cache.store
        self._conversation = self.store.new_conversation()
        self._previous: Earlier | None = None
        self._carried: Carried | None = None
        self._previous_deferred = False
        self._changes: set[tuple[int, str]] = set()  # tool changes already paid for
        self._times: list[float] = []  # the latest send times, for the next likely request
        self.threads = ThreadWatch()  # message threads: a continuation is predicted whole
        self.responses = ResponseChain()  # `previous_response_id`: predicted whole too
        # the latest request whose reply is not known yet: its thread read, time, whole body
        self._unanswered: tuple[CacheEntry, ThreadRead, float, dict[str, Any]] | None = None

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
        now = self.store.now(at)
        sent = request.payload if isinstance(request, WireRequest) else request
        unanswered = self._unanswered[1] if self._unanswered is not None else None
        read, thread = self.threads.read(sent, now, unanswered)
        before = self._unanswered[3] if self._unanswered is not None else None
        chained, continued = read_continuation(self.responses, read.payload, before)
        payload = chained.payload  # a continuation: the whole request the server rebuilds
        ctx = request_context(request, payload, context, self.provider, self.model)
        if response is not None:  # parts the reply says the model never saw
            ctx = as_seen(ctx, payload, response)
        rule = cache_rule(ctx.provider, ctx.model, **self.overrides)
        deferred = rule.deferred_scaffolding and next(_deferred_names(payload), None) is not None
        previous = self._previous
        settings = request_settings(ctx.provider, payload)
        settings_salt = salt(ctx.provider, settings)
        carried, self._carried = self._carried, None  # updated in place: unusable if this fails
        facts = carry(cache_view(ctx, settings_salt), deferred, carried)
        chain, cum = facts.chain, facts.cum
        points = breakpoint_segments(cache_marks(payload), facts) if rule.breakpoints else []
        hidden_tokens, unpredicted = shared_prefix(ctx, payload, rule)
        if rule.breakpoints:
            # the settings sit between system and messages: mixed into the keys from there
            cut = facts.starts.get("messages", len(chain)) if settings_salt else len(chain)
            keys = SegmentKeys(chain, cut, settings_salt)
            cached, written, expired, wrote = self._cache.breakpoints(
                ctx, facts, keys, points, rule, now
            )
        else:
            cut, wrote = 0, len(chain) - 1
            cached, written, expired = self._cache.prefix_cache(
                ctx, facts, rule, now, payload, hidden_tokens
            )
        total = cum[-1] if cum else 0
        best = previous.best(rule) if previous else 0
        if previous is not None and rule.output_items and facts.shared >= previous.size > 0:
            # what the previous call generated, sent back, is cached with its prefix
            end = generated_run(ctx.segments, previous.size - 1, rule.output_items)
            best = max(best, rule.floor(cum[end]))
        setting = None
        if previous is not None and previous.context.model == ctx.model:
            setting = changed_setting(ctx.provider, previous.settings, settings)
        if previous is not None and deferred != self._previous_deferred:
            brk: CacheBreak | None = scaffolding_break(previous, list(_deferred_names(payload)))
        else:
            brk = explain(
                previous,
                ctx,
                chain,
                facts.shared,
                rule,
                Now(cached, expired, [cum[p] for p, _ in points], setting, settings),
            )
        unread = chained.missing or (
            thread is not None and thread.kind == "continue" and read.payload is sent
        )
        if unread:  # a continuation not rebuilt: no comparison with the whole thread to make
            brk = None
        if brk is not None:
            lost = _lost(self.entries[-1], rule, cached) if self.entries else brk.lost_tokens
            brk = replace(brk, lost_tokens=lost, capabilities=capabilities(ctx.provider, ctx.model))
        entry = CacheEntry(
            self.count,
            ctx.provider,
            ctx.model,
            total,
            cached,
            written,
            total - cached - written,
            max(best, cached),  # the scope may hold more than the previous request left
            brk,
            ctx,
            below_minimum=f"{total} < {rule.min_tokens} tokens"
            if total < rule.min_tokens
            else None,
            shared_unpredicted=unpredicted,
        )
        if isinstance(request, WireRequest):
            entry.change_savings = change_savings(
                request.load_points, self._changes, ctx, rule, cached
            )
        entry.thread, entry.continued = thread, continued
        self._unanswered = (entry, read, now, payload)  # its reply may come later (`answer`)
        head = session_head(ctx, facts, payload, rule, self.store, now, self._conversation)
        entry.scope = scope_words(ctx.provider)
        if previous is None:  # a new session: never a break, but it may lose a shared prefix
            entry.shared_lost = head.lost(cached, rule)
        head.keep()
        ttl = request_ttl(ctx.provider, payload, rule.ttl_seconds)
        if response is not None:
            self.answer(entry, response, payload)
            proved = entry.reported.cached if entry.reported else None
            if proved is not None and proved > cached:  # the provider read it: it exists
                salted = SegmentKeys(chain, cut if rule.breakpoints else len(chain), settings_salt)
                self._cache.prove(ctx, facts, salted, rule, now, proved, payload)
        marked = [(cum[p], life) for p, life in points]
        entry.warmth = warmth_after(entry, rule, now, marked, ttl, self._gaps(now))
        if not self.keep:
            self.entries.clear()
        self.entries.append(entry)
        self.count += 1
        if unread:  # the next request is compared with the last whole one
            self._carried = carried
            return entry
        start = _settings_start(facts) if rule.breakpoints else 0
        self._previous = Earlier(ctx, chain, cum, len(chain), wrote, settings, start)
        self._previous_deferred = deferred
        self._carried = facts
        self.store.trim(now)
        return entry

    def _gaps(self, now: float) -> list[float]:
        """The latest gaps between requests, this one's (sent at `now`) included."""
        self._times = [*self._times[-GAPS_KEPT:], now]
        return [b - a for a, b in itertools.pairwise(self._times)]

    def answer(self, entry: CacheEntry, response: Any, payload: dict[str, Any]) -> None:
        """Set what the provider reported for `entry` (predicted earlier, from `payload`
        alone): its figures, how far they are from the prediction, its own diagnosis."""
        rule = cache_rule(entry.provider, entry.model, **self.overrides)
        brk = entry.cache_break
        entry.reported = reported_usage(response, entry.provider)
        entry.disagreement = disagreement(entry, rule)
        entry.diagnosis = provider_diagnosis(response, entry.provider, payload)
        entry.diagnosis_agreement = agreement(brk.cause if brk else None, entry.diagnosis)
        if entry.thread is not None and thread_error_code(response) == "thread_not_found":
            entry.thread = replace(entry.thread, event="thread_not_found")
        if self._unanswered is not None and self._unanswered[0] is entry:
            _, read, at, whole = self._unanswered
            self.threads.answered(read, response, at)  # the next continuation's history
            self.responses.keep(whole, response)
            self._unanswered = None

    def report(self) -> CacheReport:
        return CacheReport(list(self.entries))


def _settings_start(facts: Carried) -> int:
    """Where the cached-on settings enter the prefix: the thinking configuration (a hidden
    segment ahead of the messages), else the messages."""
    end = len(facts.chain)
    return min(facts.starts.get("thinking", end), facts.starts.get("messages", end))


def _lost(previous: CacheEntry, rule: CacheRule, cached: int) -> int:
    """What the previous request left in the cache that this one does not read."""
    return max(0, held_tokens(previous, rule) - cached)


def _deferred_names(payload: dict[str, Any]) -> Iterator[str]:
    """The deferred tools' names, in order (a native-search body: after its first few tools)."""
    tools = payload.get("tools") if isinstance(payload, dict) else None
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict) and tool.get("defer_loading") is True:
            yield str(tool.get("name"))


def analyze(
    requests: list[Any],
    provider: str | None = None,
    model: str | None = None,
    responses: list[Any] | None = None,
    times: list[float] | None = None,
    store: PrefixStore | None = None,
    **overrides: Any,
) -> CacheReport:
    """Predict cached, written and uncached tokens for each request, and explain breaks.

    `requests` are WireRequests or plain payload dicts (then pass `provider`); `responses`
    (same length, None allowed) adds reported usage; `times` are send times in seconds;
    `store`: the scope-level cache earlier traffic left (`PrefixStore`), a fresh one if None.
    """
    check_analyze_arguments(requests, provider, model, responses, times)
    analyzer = CacheAnalyzer(provider, model, store=store, **overrides)
    for i, request in enumerate(requests):
        response = responses[i] if responses and i < len(responses) else None
        analyzer.add(request, response, times[i] if times else None)
    return analyzer.report()


def analyze_conversations(
    requests: list[dict[str, Any]],
    provider: str,
    responses: list[Any],
    store: PrefixStore | None = None,
    times: list[float] | None = None,
    **overrides: Any,
) -> CacheReport:
    """`analyze` of one provider's traffic in arrival order, each request compared only with
    its own conversation's earlier requests (`conversation_key`): a new session or an
    interleaved parallel agent is never a break. The cache itself is the scope's
    (`PrefixStore`, shared by every conversation): a session that repeats a prefix another
    wrote reads it, within its lifetime by `times` (send times in seconds; None: one second
    apart). Entries are numbered in arrival order."""
    check_analyze_arguments(requests, provider, None, responses, times)
    store = store if store is not None else PrefixStore()
    analyzers: dict[str, CacheAnalyzer] = {}
    entries: list[CacheEntry] = []
    names = conversation_names((provider, r, a) for r, a in zip(requests, responses, strict=True))
    sent: list[float | None] = list(times) if times is not None else [None] * len(requests)
    for request, response, name, at in zip(requests, responses, names, sent, strict=True):
        analyzer = analyzers.get(name)
        if analyzer is None:
            analyzer = analyzers[name] = CacheAnalyzer(provider, store=store, **overrides)
        entries.append(replace(analyzer.add(request, response, at), index=len(entries)))
    return CacheReport(entries)
