"""Why a request cached less than the one before: the cause (a code), where, and a diff."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from dtl_notebook.cache.causes import BreakCause, message
from dtl_notebook.cache.prefix_rules import CacheRule
from dtl_notebook.context.model import ModelContext, Segment

TOOL_KINDS = {"tool_schema", "tool_summary", "hidden"}
SYSTEM_KINDS = {"system"}
_TAG = re.compile(r"<([a-z][a-z0-9_-]*)>\n(.*?)\n</\1>", re.S)


@dataclass(frozen=True)
class Earlier:
    """The previous request's context with its chain hashes and running token totals: the
    first `size` entries of `chain` and `cum` (later requests may append to the same lists)."""

    context: ModelContext
    chain: list[str]
    cum: list[int]
    size: int

    @property
    def total(self) -> int:
        return self.cum[self.size - 1] if self.size else 0


# difflib's opcode names (SequenceMatcher.get_opcodes), less "equal"
DiffKind = Literal["insert", "delete", "replace"]


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
    `message` (and `str()`) has it in words."""

    cause: BreakCause
    where: str | None = None
    involved: list[str] = field(default_factory=list)
    diff: list[DiffOp] = field(default_factory=list)
    lost_tokens: int = 0

    @property
    def message(self) -> str:
        """The cause in words."""
        return message(self.cause)

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
    cached: int,
    total: int,
    expired: bool,
    has_breakpoints: bool,
) -> CacheBreak | None:
    """Why `ctx` cached less than the previous request offered, or None. `shared`: how many
    leading segments (so chain hashes) the two have in common by identity."""
    if previous is None:
        return None
    old, old_chain = previous.context, previous.chain
    if old.model != ctx.model or old.provider != ctx.provider:
        return CacheBreak(
            BreakCause.MODEL_CHANGED,
            involved=[f"{old.model} → {ctx.model}"],
            lost_tokens=previous.total,
        )
    i = shared
    while i < previous.size and i < len(chain) and old_chain[i] == chain[i]:
        i += 1
    if i < previous.size:
        return _divergence(previous, ctx, i)
    # a prefix below the minimum is not cached: a fact of the request (CacheEntry.below_minimum)
    best = rule.floor(previous.total)
    if cached >= best:
        return None
    if expired:
        return CacheBreak(BreakCause.EXPIRED, lost_tokens=best - cached)
    if rule.breakpoints:
        if not has_breakpoints:
            return CacheBreak(BreakCause.NO_BREAKPOINT, lost_tokens=best - cached)
        return CacheBreak(BreakCause.BREAKPOINT_OUT_OF_LOOKBACK, lost_tokens=best - cached)
    return None


def _divergence(previous: Earlier, new: ModelContext, i: int) -> CacheBreak:
    old = previous.context
    a = old.segments[i]
    b = new.segments[i] if i < len(new.segments) else None
    where = (b or a).source
    lost = previous.total - (previous.cum[i - 1] if i else 0)
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
    return CacheBreak(BreakCause.HISTORY_REWRITTEN, where, [a.label], diff, lost)


def _diff(a: Segment, b: Segment | None) -> list[DiffOp]:
    if b is None:
        return [DiffOp("delete", a.source, old=_clip(a.text))]
    if a.kind != b.kind or a.label != b.label:
        return [DiffOp("replace", b.source, old=_clip(a.text), new=_clip(b.text))]
    ops: list[DiffOp] = []
    matcher = difflib.SequenceMatcher(a=a.text, b=b.text, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in _EDITS:
            continue
        ops.append(
            DiffOp(
                _EDITS[tag],
                f"{b.source}@{j1}",
                old=_clip(a.text[max(i1 - 20, 0) : i2 + 20]) or None,
                new=_clip(b.text[max(j1 - 20, 0) : j2 + 20]) or None,
            )
        )
        if len(ops) >= 3:
            break
    return ops


_EDITS: dict[str, DiffKind] = {"insert": "insert", "delete": "delete", "replace": "replace"}


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
