"""What each tool change cost against what a naive rewrite of the tool list would have cost.

A naive rewrite (the full current list, `tool_changes="rewrite"`) breaks the cache at the first
tool whose declaration changes: at the withdrawn or redefined tool, or after the last declared
tool for a new one. The tools come first in every provider's prefix, so from there on the
whole request is processed again. What it cost here is the request's tokens not read from the
cache. Only the changes this request carries for the first time count (a change is paid for
once, in the request that first holds it).
"""

from __future__ import annotations

from dataclasses import dataclass

from dtl_notebook.cache.prefix_rules import CacheRule
from dtl_notebook.context.model import ModelContext
from dtl_notebook.wire.request import LoadPoint

CHANGE_KINDS = ("addition", "removal", "redefinition")


@dataclass(frozen=True)
class ChangeSaving:
    """One change: the tokens a naive rewrite would have processed again, and this one."""

    kind: str  # "addition", "removal" or "redefinition"
    tools: list[str]
    path: str  # where the request carries it
    naive_tokens: int
    actual_tokens: int

    @property
    def saved_tokens(self) -> int:
        return self.naive_tokens - self.actual_tokens


def change_savings(
    points: list[LoadPoint],
    seen: set[tuple[int, str]],
    ctx: ModelContext,
    rule: CacheRule,
    cached_tokens: int,
) -> list[ChangeSaving]:
    """The savings of the changes in `points` not in `seen` (updated: (message, kind))."""
    fresh = [p for p in points if p.kind in CHANGE_KINDS and (p.message_index, p.kind) not in seen]
    if not fresh:
        return []
    total = sum(s.tokens for s in ctx.segments)
    out = []
    for point in fresh:
        seen.add((point.message_index, point.kind))
        kept = _kept_by_rewrite(ctx, point)
        naive = total - rule.floor(kept)
        actual = total - cached_tokens
        out.append(ChangeSaving(point.kind, list(point.tools), point.path, naive, actual))
    return out


def _kept_by_rewrite(ctx: ModelContext, point: LoadPoint) -> int:
    """The tokens before the first tool declaration a rewrite would change."""
    running = last_tool_end = 0
    for segment in ctx.segments:
        if segment.kind == "tool_schema":
            if segment.label in point.tools and point.kind != "addition":
                return running
            last_tool_end = running + segment.tokens
        running += segment.tokens
    return last_tool_end
