"""A minimal diff of two texts in about linear time.

The common prefix and suffix are found by comparing slices (C speed, O(n log n) at worst);
only the middle that differs is diffed, by lines, and a middle too large to diff by lines is
one replacement. Each edit carries the character offset in the new text and a short excerpt
with context before and after.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

EditKind = Literal["insert", "delete", "replace"]
CONTEXT = 20  # characters of context each side of an edit
MAX_LINES = 400  # a middle with more lines than this is one replacement
MAX_EDITS = 3


@dataclass(frozen=True)
class Edit:
    """`old[old_start:old_end]` became `new[new_start:new_end]`; excerpts with context."""

    op: EditKind
    old_start: int
    old_end: int
    new_start: int
    new_end: int


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over slice comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo], a[:hi+1] != b[:hi+1]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix, at most `limit` characters."""
    lo, hi = 0, limit
    if hi and a[len(a) - hi :] == b[len(b) - hi :]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def edits(a: str, b: str) -> list[Edit]:
    """The edits that turn `a` into `b` (at most MAX_EDITS), in order."""
    if a == b:
        return []
    p = common_prefix(a, b)
    s = common_suffix(a, b, min(len(a), len(b)) - p)
    mid_a, mid_b = a[p : len(a) - s], b[p : len(b) - s]
    if not mid_a or not mid_b:
        return [Edit(_kind(mid_a, mid_b), p, p + len(mid_a), p, p + len(mid_b))]
    lines_a = mid_a.splitlines(keepends=True)
    lines_b = mid_b.splitlines(keepends=True)
    if len(lines_a) + len(lines_b) > MAX_LINES or len(lines_a) == len(lines_b) == 1:
        return [Edit("replace", p, p + len(mid_a), p, p + len(mid_b))]
    starts_a, starts_b = _starts(lines_a, p), _starts(lines_b, p)
    out: list[Edit] = []
    matcher = difflib.SequenceMatcher(a=lines_a, b=lines_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.append(Edit(_OPS[tag], starts_a[i1], starts_a[i2], starts_b[j1], starts_b[j2]))
        if len(out) >= MAX_EDITS:
            break
    return out


def excerpt(text: str, start: int, end: int, context: int = CONTEXT, limit: int = 240) -> str:
    """`text[start:end]` with `context` characters either side, clipped to `limit`."""
    piece = text[max(start - context, 0) : end + context]
    return piece if len(piece) <= limit else piece[: limit - 1] + "…"


_OPS: dict[str, EditKind] = {"replace": "replace", "insert": "insert", "delete": "delete"}


def _kind(mid_a: str, mid_b: str) -> EditKind:
    return "insert" if not mid_a else "delete" if not mid_b else "replace"


def _starts(lines: list[str], offset: int) -> list[int]:
    starts = [offset]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts
