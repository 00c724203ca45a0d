"""Why a request cached less than the one before: the cause (a code), where, and a diff."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.cache.codes import Code, code
from dtl_notebook.cache.edit_diff import EditKind, edits, excerpt
from dtl_notebook.cache.prefix_rules import CacheRule
from dtl_notebook.context.model import ModelContext, Segment

TOOL_KINDS = {"tool_schema", "tool_summary", "hidden"}
SYSTEM_KINDS = {"system"}
_TAG = re.compile(r"<([a-z][a-z0-9_-]*)>\n(.*?)\n</\1>", re.S)


@dataclass(frozen=True)
class Earlier:
    """The previous request's context with its chain hashes and running token totals: the
    first `size` entries of `chain` and `cum` (later requests may append to the same lists);
    `wrote`: its last segment written to the cache (-1: none); `settings`: what it cached on
    outside the text; `start`: the segment where those settings enter the prefix."""

    context: ModelContext
    chain: list[str]
    cum: list[int]
    size: int
    wrote: int = -1
    settings: dict[BreakCause, str] = field(default_factory=dict)
    start: int = 0

    @property
    def total(self) -> int:
        return self.cum[self.size - 1] if self.size else 0

    def upto(self, rule: CacheRule) -> int:
        """How many leading segments a later request can read: what this one wrote (at its
        breakpoints), or all of it (automatic prefix caching)."""
        return self.wrote + 1 if rule.breakpoints else self.size

    def best(self, rule: CacheRule) -> int:
        """The most a later request can read of this one, in tokens."""
        if rule.breakpoints:
            return self.cum[self.wrote] if self.wrote >= 0 else 0
        return rule.floor(self.total)


@dataclass(frozen=True)
class Now:
    """What the analyzer worked out for the current request: tokens read, whether an entry
    had expired, the running totals at its breakpoints, and the setting that changed."""

    cached: int
    expired: bool
    points: list[int]
    setting: tuple[BreakCause, str] | None = None
    settings: dict[BreakCause, str] = field(default_factory=dict)


DiffKind = EditKind


@dataclass(frozen=True)
class DiffOp:
    """One edit between the old and new request at the divergence: `new` inserted, `old`
    deleted, or `old` replaced by `new`, at `path` (a context source, `@offset` inside it)."""

    op: DiffKind
    path: str
    old: str | None = None
    new: str | None = None


@dataclass(frozen=True)
class CacheBreak:
    """Why the cached prefix stopped short: the cause's code, where, what, and a minimal diff;
    `message` (and `str()`) has it in words. `capabilities`: the model's (`codes.capabilities`),
    which pick the fix it can take."""

    cause: BreakCause
    where: str | None = None
    involved: list[str] = field(default_factory=list)
    diff: list[DiffOp] = field(default_factory=list)
    lost_tokens: int = 0
    capabilities: frozenset[str] = frozenset()

    @property
    def entry(self) -> Code:
        """The cause's row (`data/causes.json`)."""
        return code(self.cause)

    @property
    def message(self) -> str:
        """The cause in words."""
        return self.entry.message

    @property
    def fix(self) -> str:
        """The one-line fix of the cause that this model can take."""
        return self.entry.fix_for(self.capabilities)

    @property
    def expected(self) -> bool:
        """The provider does this by design: nothing to undo."""
        return self.entry.expected

    def __str__(self) -> str:
        what = f" ({', '.join(self.involved)})" if self.involved else ""
        at = f" at {self.where}" if self.where else ""
        return f"{self.message}{what}{at}"


def scaffolding_break(old: Earlier, deferred: list[str]) -> CacheBreak:
    """The hidden deferred-tool prompt appeared or went: nothing cached before it is reused."""
    if deferred:
        return CacheBreak(
            BreakCause.DEFERRED_PROMPT_ADDED, "tools", deferred, lost_tokens=old.total
        )
    return CacheBreak(BreakCause.DEFERRED_PROMPT_REMOVED, "tools", lost_tokens=old.total)


def explain(
    previous: Earlier | None,
    ctx: ModelContext,
    chain: list[str],
    shared: int,
    rule: CacheRule,
    now: Now,
) -> CacheBreak | None:
    """Why `ctx` read less than the previous request wrote, or None. `shared`: how many
    leading segments (so chain hashes) the two have in common by identity."""
    if previous is None:
        return None
    old, old_chain = previous.context, previous.chain
    if old.model != ctx.model or old.provider != ctx.provider:
        return CacheBreak(
            BreakCause.MODEL_CHANGED,
            involved=[f"{old.model} → {ctx.model}"],
            lost_tokens=previous.best(rule),
        )
    upto = previous.upto(rule)
    # a changed setting invalidates from where it sits: an earlier text change comes first
    limit = min(upto, previous.start) if now.setting else upto
    i = shared
    while i < limit and i < len(chain) and old_chain[i] == chain[i]:
        i += 1
    if i < limit:
        return _divergence(previous, ctx, i, rule)
    best = previous.best(rule)
    if now.cached >= best:
        return None
    if now.setting is not None:
        cause, path = now.setting
        before = previous.cum[previous.start - 1] if previous.start else 0
        change = f"{previous.settings.get(cause)} → {now.settings.get(cause)}"
        return CacheBreak(cause, path, [change], lost_tokens=best - min(before, best))
    lost = best - now.cached
    if now.expired:
        return CacheBreak(BreakCause.EXPIRED, lost_tokens=lost)
    if rule.breakpoints:
        if not now.points:
            return CacheBreak(BreakCause.NO_BREAKPOINT, lost_tokens=lost)
        if max(now.points) < best:
            return CacheBreak(BreakCause.BREAKPOINT_MOVED_BACK, lost_tokens=lost)
        return CacheBreak(BreakCause.BREAKPOINT_OUT_OF_LOOKBACK, lost_tokens=lost)
    return None


_MEDIA = ("[image", "[PDF", "[document by")
_REASONING = {"reasoning", "thinking"}  # the labels of the reasoning the model saw


def _divergence(previous: Earlier, new: ModelContext, i: int, rule: CacheRule) -> CacheBreak:
    old = previous.context
    a = old.segments[i]
    b = new.segments[i] if i < len(new.segments) else None
    where = (b or a).source
    lost = previous.best(rule) - (previous.cum[i - 1] if i else 0)
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
            return CacheBreak(BreakCause.TOOL_ORDER_CHANGED, where, moved, order, lost)
        involved = [f"+{n}" for n in new_tools if n not in old_text]
        involved += [f"-{n}" for n in old_tools if n not in new_text]
        involved += [f"~{n}" for n in new_tools if n in old_text and old_text[n] != new_text[n]]
        return CacheBreak(BreakCause.TOOL_SET_CHANGED, where, involved, diff, lost)
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
        return CacheBreak(BreakCause.SYSTEM_CHANGED, where, names or ["preamble"], diff, lost)
    if b is not None and b.kind == "not_seen" and a.kind != "not_seen" and a.label in _REASONING:
        # the provider drops earlier turns' reasoning at a new user message, so the cached
        # prefix ends there: OpenAI's cookbook "Better performance from reasoning models using
        # the Responses API", Caching (https://cookbook.openai.com/examples/responses_api/
        # reasoning_items); Anthropic strips earlier turns' thinking blocks the same way
        # (https://platform.claude.com/docs/en/build-with-claude/extended-thinking)
        return CacheBreak(BreakCause.REASONING_DROPPED, where, [a.label], diff, lost)
    if a.text.startswith(_MEDIA) or (b is not None and b.text.startswith(_MEDIA)):
        return CacheBreak(BreakCause.MEDIA_CHANGED, where, [a.label], diff, lost)
    return CacheBreak(BreakCause.HISTORY_REWRITTEN, where, [a.label], diff, lost)


def _diff(a: Segment, b: Segment | None) -> list[DiffOp]:
    if b is None:
        return [DiffOp("delete", a.source, old=_clip(a.text))]
    if a.kind != b.kind or a.label != b.label:
        return [DiffOp("replace", b.source, old=_clip(a.text), new=_clip(b.text))]
    return [
        DiffOp(
            e.op,
            f"{b.source}@{e.new_start}",
            old=excerpt(a.text, e.old_start, e.old_end) or None,
            new=excerpt(b.text, e.new_start, e.new_end) or None,
        )
        for e in edits(a.text, b.text)
    ]


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
