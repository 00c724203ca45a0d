"""Predict prompt-cache hits request by request, and explain every break.

Each request becomes a model context (ordered segments); a chain hash over the segments lets
a new request be compared with everything written before by hash lookups alone, so the work
per request is its new part plus one hash per segment.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.cache.diagnostics import (
    FIRST_DEFERRED,
    NO_MORE_DEFERRED,
    ProviderDiagnosis,
    agreement,
    provider_diagnosis,
)
from dtl_notebook.cache.rules import CacheRule, cache_rule
from dtl_notebook.context.model import ModelContext, Segment, model_context
from dtl_notebook.context.tokens import encoding_for
from dtl_notebook.wire.arguments import check_analyze_arguments
from dtl_notebook.wire.common import WireRequest

TOOL_KINDS = {"tool_schema", "tool_summary", "hidden"}
SYSTEM_KINDS = {"system"}
_TAG = re.compile(r"<([a-z][a-z0-9_-]*)>\n(.*?)\n</\1>", re.S)


@dataclass(frozen=True)
class DiffOp:
    """One edit between the old and new request at the divergence (nbdime-style vocabulary)."""

    op: str  # "replace" | "insert" | "delete"
    path: str
    old: str | None = None
    new: str | None = None


@dataclass(frozen=True)
class CacheBreak:
    """Why the cached prefix stopped short: cause in words, where, what, and a minimal diff."""

    cause: str
    where: str | None = None
    involved: list[str] = field(default_factory=list)
    diff: list[DiffOp] = field(default_factory=list)
    lost_tokens: int = 0

    def __str__(self) -> str:
        what = f" ({', '.join(self.involved)})" if self.involved else ""
        at = f" at {self.where}" if self.where else ""
        return f"{self.cause}{what}{at}"


@dataclass(frozen=True)
class Usage:
    cached: int
    written: int
    uncached: int


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

    def __repr__(self) -> str:
        brk = f", break={self.cache_break.cause!r}" if self.cache_break else ""
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


def _chain(
    segments: list[Segment],
    model: str,
    scaffolding: bool = False,
    previous: tuple[list[Segment], list[str]] | None = None,
) -> list[str]:
    """Hash after each segment, over the model (and any hidden deferred-tool scaffolding,
    which sits ahead of everything) and every segment before it. `previous` (the segments and
    chain of an earlier context with the same model and scaffolding) lends the hashes of the
    leading segments it shares by identity (segments are immutable)."""
    out: list[str] = []
    if previous is not None:
        old, old_chain = previous
        limit = min(len(old), len(segments))
        same = 0
        while same < limit and segments[same] is old[same]:
            same += 1
        out = old_chain[:same]
    if out:
        state = out[-1]
    else:
        seed = f"{model}\0deferred-tool scaffolding" if scaffolding else model
        state = hashlib.blake2b(seed.encode(), digest_size=16).hexdigest()
    for seg in segments[len(out) :]:
        state = hashlib.blake2b(f"{state}{seg.digest}".encode(), digest_size=16).hexdigest()
        out.append(state)
    return out


class CacheAnalyzer:
    """Feeds requests in order and predicts each one's cache figures against the earlier ones."""

    def __init__(
        self, provider: str | None = None, model: str | None = None, **overrides: Any
    ) -> None:
        self.provider, self.model, self.overrides = provider, model, overrides
        self.entries: list[CacheEntry] = []
        self._written: dict[str, tuple[int, float, float]] = {}  # chain -> tokens, time, ttl
        self._prefix: dict[str, tuple[int, str]] = {}  # chain -> tokens, next segment text
        self._ends: set[str] = set()  # chain hashes at the end of earlier requests
        self._previous: tuple[ModelContext, list[str]] | None = None
        self._previous_deferred = False

    def add(
        self, request: WireRequest | dict[str, Any], response: Any = None, at: float | None = None
    ) -> CacheEntry:
        """Analyze the next request (sent at time `at`, in seconds) and remember its writes."""
        ctx = model_context(request, self.provider, self.model)
        rule = cache_rule(ctx.provider, ctx.model, **self.overrides)
        segments = ctx.segments
        payload = request.payload if isinstance(request, WireRequest) else request
        deferred = _deferred_tools(payload) if rule.deferred_scaffolding else []
        same_start = (
            self._previous is not None
            and self._previous[0].model == ctx.model
            and self._previous_deferred == bool(deferred)
        )
        lend = (
            (self._previous[0].segments, self._previous[1])
            if same_start and self._previous
            else None
        )
        chain = _chain(segments, ctx.model, bool(deferred), lend)
        cum = _cumulative(segments)
        now = float(len(self.entries)) if at is None else at
        if rule.breakpoints:
            cached, written, expired = self._breakpoints(request, ctx, chain, cum, rule, now)
        else:
            cached, written, expired = self._prefix_cache(ctx, chain, cum, rule, now)
        total = cum[-1] if cum else 0
        previous = self._previous
        best = rule.floor(previous[0].total_tokens) if previous else 0
        if previous is not None and bool(deferred) != self._previous_deferred:
            brk: CacheBreak | None = _scaffolding_break(previous[0], deferred)
        else:
            brk = _explain(previous, ctx, chain, rule, cached, total, expired, request)
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
        )
        if response is not None:
            entry.reported = reported_usage(response, ctx.provider)
            entry.disagreement = _disagreement(entry, rule)
            entry.diagnosis = provider_diagnosis(response, ctx.provider, payload)
            entry.diagnosis_agreement = agreement(brk.cause if brk else None, entry.diagnosis)
        self.entries.append(entry)
        self._previous = (ctx, chain)
        self._previous_deferred = bool(deferred)
        return entry

    # -- Anthropic-style: writes at breakpoints, reads look back a fixed number of blocks -----
    def _breakpoints(
        self,
        request: Any,
        ctx: ModelContext,
        chain: list[str],
        cum: list[int],
        rule: CacheRule,
        now: float,
    ) -> tuple[int, int, bool]:
        payload = request.payload if isinstance(request, WireRequest) else request
        points = _breakpoint_segments(payload, ctx.segments)
        ends = _block_ends(ctx.segments)
        expired, cached, hit_key = False, 0, None
        for point, _ in points:
            block = ctx.segments[point].block
            for back in range(block, max(block - rule.lookback_blocks, -1), -1):
                key = chain[ends[back]] if back in ends else None
                hit = self._written.get(key) if key else None
                if hit is None:
                    continue
                if now - hit[1] > hit[2]:
                    expired = True
                    continue
                if cum[ends[back]] > cached:
                    cached, hit_key = cum[ends[back]], key
                break
        if hit_key is not None:  # a read refreshes the entry's lifetime
            tokens, _, ttl = self._written[hit_key]
            self._written[hit_key] = (tokens, now, ttl)
        written = 0
        for point, ttl in points:
            if cum[point] >= rule.min_tokens:
                self._written[chain[point]] = (cum[point], now, ttl)
                written = max(written, cum[point] - cached)
        return cached, written, expired

    # -- automatic prefix caching (OpenAI, OpenAI-compatible servers, Kimi) -------------------
    def _prefix_cache(
        self, ctx: ModelContext, chain: list[str], cum: list[int], rule: CacheRule, now: float
    ) -> tuple[int, int, bool]:
        common = 0
        expired = False
        matched = -1
        for i, link in enumerate(chain):
            hit = self._written.get(link)
            if hit is None:
                break
            if now - hit[1] > hit[2]:
                expired = True
                break
            matched, common = i, cum[i]
        if not rule.reports_writes and matched + 1 < len(ctx.segments):
            # a common prefix can end inside the next segment
            following = self._prefix.get(chain[matched] if matched >= 0 else "")
            if following is not None:
                text = ctx.segments[matched + 1].text
                shared = _common_chars(following[1], text)
                if shared:
                    common += encoding_for(ctx.provider, ctx.model).count(text[:shared])
        cached = rule.floor(common)
        if rule.reports_writes:  # exact boundaries: only ends of earlier requests were written
            cached = max((cum[i] for i in range(matched + 1) if chain[i] in self._ends), default=0)
            cached = cached if cached >= rule.min_tokens else 0
        for i, link in enumerate(chain):
            self._written[link] = (cum[i], now, rule.ttl_seconds)
            if i + 1 < len(chain):
                self._prefix[link] = (cum[i], ctx.segments[i + 1].text)
        if chain:
            self._ends.add(chain[-1])
            self._prefix.setdefault("", (0, ctx.segments[0].text))
        total = cum[-1] if cum else 0
        written = total - cached if rule.reports_writes and total >= rule.min_tokens else 0
        return cached, written, expired

    def report(self) -> CacheReport:
        return CacheReport(list(self.entries))


def _deferred_tools(payload: dict[str, Any]) -> list[str]:
    tools = payload.get("tools") if isinstance(payload, dict) else None
    listed = tools if isinstance(tools, list) else []
    return [
        str(t.get("name")) for t in listed if isinstance(t, dict) and t.get("defer_loading") is True
    ]


def _scaffolding_break(old: ModelContext, deferred: list[str]) -> CacheBreak:
    """The hidden deferred-tool prompt appeared or went: nothing cached before it is reused."""
    if deferred:
        return CacheBreak(FIRST_DEFERRED, "tools", deferred, lost_tokens=old.total_tokens)
    return CacheBreak(NO_MORE_DEFERRED, "tools", lost_tokens=old.total_tokens)


def _cumulative(segments: list[Segment]) -> list[int]:
    total, out = 0, []
    for seg in segments:
        total += seg.tokens
        out.append(total)
    return out


def _block_ends(segments: list[Segment]) -> dict[int, int]:
    """Block number -> index of its last segment."""
    return {seg.block: i for i, seg in enumerate(segments) if seg.block >= 0}


def _breakpoint_segments(
    payload: dict[str, Any], segments: list[Segment]
) -> list[tuple[int, float]]:
    """Segments that end at a cache breakpoint, with the TTL in seconds."""
    ends = _block_ends(segments)
    marks: list[tuple[str, dict[str, Any]]] = []
    for i, tool in enumerate(payload.get("tools") or []):
        if isinstance(tool, dict) and tool.get("cache_control"):
            marks.append((f"tools.{i}", tool["cache_control"]))
    system = payload.get("system")
    for i, block in enumerate(system if isinstance(system, list) else []):
        if block.get("cache_control"):
            marks.append((f"system.{i}", block["cache_control"]))
    for m, message in enumerate(payload.get("messages") or []):
        content = message.get("content")
        for b, block in enumerate(content if isinstance(content, list) else []):
            path = f"messages.{m}.content.{b}"
            if block.get("cache_control"):
                marks.append((path, block["cache_control"]))
            inner_blocks = block.get("content")
            for inner in inner_blocks if isinstance(inner_blocks, list) else []:
                if isinstance(inner, dict) and inner.get("cache_control"):
                    marks.append((path, inner["cache_control"]))
    out: list[tuple[int, float]] = []
    for path, control in marks:
        idx = next(
            (
                i
                for i, s in enumerate(segments)
                if s.source == path or s.source.startswith(path + ".")
            ),
            None,
        )
        if idx is not None:
            out.append((ends[segments[idx].block], _ttl(control)))
    if payload.get("cache_control") and segments:
        last = max(ends.values(), default=len(segments) - 1)
        out.append((last, _ttl(payload["cache_control"])))
    return sorted(set(out))


def _ttl(control: dict[str, Any]) -> float:
    return 3600.0 if control.get("ttl") == "1h" else 300.0


def _common_chars(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _explain(
    previous: tuple[ModelContext, list[str]] | None,
    ctx: ModelContext,
    chain: list[str],
    rule: CacheRule,
    cached: int,
    total: int,
    expired: bool,
    request: Any,
) -> CacheBreak | None:
    if previous is None:
        return None
    old, old_chain = previous
    if old.model != ctx.model or old.provider != ctx.provider:
        return CacheBreak(
            "model changed", involved=[f"{old.model} → {ctx.model}"], lost_tokens=old.total_tokens
        )
    i = 0
    while i < len(old_chain) and i < len(chain) and old_chain[i] == chain[i]:
        i += 1
    if i < len(old_chain):
        return _divergence(old, ctx, i)
    best = rule.floor(old.total_tokens)
    if best == 0 and cached == 0:
        return CacheBreak(
            "below the minimum", involved=[f"{old.total_tokens} < {rule.min_tokens} tokens"]
        )
    if cached >= best:
        return None
    if expired:
        return CacheBreak("expired", lost_tokens=best - cached)
    if rule.breakpoints:
        payload = request.payload if isinstance(request, WireRequest) else request
        if not _breakpoint_segments(payload, ctx.segments):
            return CacheBreak("no breakpoint", lost_tokens=best - cached)
        return CacheBreak("no breakpoint within the 20-block lookback", lost_tokens=best - cached)
    return None


def _divergence(old: ModelContext, new: ModelContext, i: int) -> CacheBreak:
    a = old.segments[i]
    b = new.segments[i] if i < len(new.segments) else None
    where = (b or a).source
    lost = old.total_tokens - sum(s.tokens for s in old.segments[:i])
    nxt = new.segments[i + 1] if i + 1 < len(new.segments) else None
    if b is not None and nxt is not None and nxt.digest == a.digest:
        diff = [DiffOp("insert", b.source, new=_clip(b.text))]
    elif b is not None and i + 1 < len(old.segments) and old.segments[i + 1].digest == b.digest:
        diff = [DiffOp("delete", a.source, old=_clip(a.text))]
    else:
        diff = _diff(a, b)
    kinds = {a.kind, b.kind if b else a.kind}
    if kinds & TOOL_KINDS:
        old_tools = [s.label for s in old.segments if s.kind in TOOL_KINDS - {"hidden"}]
        new_tools = [s.label for s in new.segments if s.kind in TOOL_KINDS - {"hidden"}]
        old_text = {s.label: s.text for s in old.segments if s.kind in TOOL_KINDS}
        new_text = {s.label: s.text for s in new.segments if s.kind in TOOL_KINDS}
        if sorted(old_tools) == sorted(new_tools) and old_text == new_text:
            order = [DiffOp("replace", "tools", old=", ".join(old_tools), new=", ".join(new_tools))]
            moved = [n for n, m in zip(old_tools, new_tools, strict=False) if n != m]
            return CacheBreak("tool order changed", where, moved, order, lost)
        involved = [f"+{n}" for n in new_tools if n not in old_text]
        involved += [f"-{n}" for n in old_tools if n not in new_text]
        involved += [f"~{n}" for n in new_tools if n in old_text and old_text[n] != new_text[n]]
        return CacheBreak("tool set changed in the prefix", where, involved, diff, lost)
    if kinds & SYSTEM_KINDS:
        old_sections = dict(
            _TAG.findall("\n".join(s.text for s in old.segments if s.kind == "system"))
        )
        new_sections = dict(
            _TAG.findall("\n".join(s.text for s in new.segments if s.kind == "system"))
        )
        names = sorted(
            n
            for n in set(old_sections) | set(new_sections)
            if old_sections.get(n) != new_sections.get(n)
        )
        return CacheBreak("system section changed", where, names or ["preamble"], diff, lost)
    return CacheBreak("history rewritten", where, [a.label], diff, lost)


def _diff(a: Segment, b: Segment | None) -> list[DiffOp]:
    if b is None:
        return [DiffOp("delete", a.source, old=_clip(a.text))]
    if a.kind != b.kind or a.label != b.label:
        return [DiffOp("replace", b.source, old=_clip(a.text), new=_clip(b.text))]
    ops: list[DiffOp] = []
    matcher = difflib.SequenceMatcher(a=a.text, b=b.text, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        ops.append(
            DiffOp(
                tag,
                f"{b.source}@{j1}",
                old=_clip(a.text[max(i1 - 20, 0) : i2 + 20]) or None,
                new=_clip(b.text[max(j1 - 20, 0) : j2 + 20]) or None,
            )
        )
        if len(ops) >= 3:
            break
    return ops


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reported_usage(response: Any, provider: str) -> Usage | None:
    """Cache figures as the provider reported them (SDK object or dict)."""
    data = response if isinstance(response, dict) else getattr(response, "model_dump", dict)()
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return None
    if provider == "anthropic":
        cached = int(usage.get("cache_read_input_tokens") or 0)
        written = int(usage.get("cache_creation_input_tokens") or 0)
        return Usage(cached, written, int(usage.get("input_tokens") or 0))
    if "input_tokens_details" in usage or provider == "openai-responses":
        details = usage.get("input_tokens_details") or {}
        total = int(usage.get("input_tokens") or 0)
    else:
        details = usage.get("prompt_tokens_details") or {}
        total = int(usage.get("prompt_tokens") or 0)
    cached = int(details.get("cached_tokens") or 0)
    written = int(details.get("cache_write_tokens") or 0)
    return Usage(cached, written, total - cached - written)


def _disagreement(entry: CacheEntry, rule: CacheRule) -> str | None:
    if entry.reported is None:
        return None
    tolerance = max(rule.granularity, int(0.1 * max(entry.total_tokens, 1)))
    gap = entry.reported.cached - entry.cached_tokens
    if abs(gap) <= tolerance:
        return None
    return (
        f"predicted {entry.cached_tokens} cached tokens, the provider reported "
        f"{entry.reported.cached} ({'+' if gap > 0 else ''}{gap})"
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
