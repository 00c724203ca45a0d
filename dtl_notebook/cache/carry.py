"""What the analyzer works out per request, carried forward over the segments it shares.

A new model context starts with the previous one's segments themselves (the renderers replay
frozen units), so the chain hashes, cumulative token counts, block ends and where each payload
path starts are the previous request's for that shared part; only the new part is computed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from dtl_notebook._reuse.frozen import shared_prefix
from dtl_notebook.cache.retention import retention
from dtl_notebook.context.model import ModelContext, Segment
from dtl_notebook.wire.providers import marked_provider
from dtl_notebook.wire.shape_errors import Path


@dataclass
class Carried:
    """Per-segment facts of one request: hash chain, running token totals, the last segment of
    each block, and the first segment at or under each dotted source path. `chain` and `cum`
    may be grown by the next request's facts: read their first `len(segments)` entries."""

    segments: list[Segment]
    chain: list[str]
    cum: list[int]
    ends: dict[int, int]
    starts: dict[str, int]
    start_key: tuple[str, bool]  # model and hidden scaffolding: what seeds the chain
    shared: int = 0  # leading segments taken over from the previous request


def shared_length(old: list[Segment], new: list[Segment]) -> int:
    """How many leading segments `new` shares with `old` (the same objects, compared at C
    speed, or equal ones: a segment's facts follow from its fields)."""
    return shared_prefix(old, new)


def _seed(model: str, scaffolding: bool) -> str:
    seed = f"{model}\0deferred-tool scaffolding" if scaffolding else model
    return hashlib.blake2b(seed.encode(), digest_size=16).hexdigest()


def _source_prefixes(source: str) -> list[str]:
    parts = source.split(".")
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def carry(ctx: ModelContext, scaffolding: bool, previous: Carried | None) -> Carried:
    """The facts for `ctx`'s segments, resumed after what they share with `previous` (which is
    updated in place and must not be used afterwards)."""
    model = ctx.model
    segments = ctx.rendered.segments if ctx.rendered is not None else list(ctx.segments)
    key = (model, scaffolding)
    if previous is None or previous.start_key != key:
        previous = Carried([], [], [], {}, {}, key)
    old = previous.segments
    known = ctx.rendered.shares(old) if ctx.rendered is not None else None
    # all of `old`, by ancestry; else compared (at C speed)
    same = len(old) if known == len(old) else shared_length(old, segments)
    if same == len(previous.chain):  # grows the same lists: earlier views keep their size
        chain, cum = previous.chain, previous.cum
    else:
        chain, cum = previous.chain[:same], previous.cum[:same]
    ends, starts = previous.ends, previous.starts
    dropped: set[int] = set()
    for i in range(same, len(old)):
        seg = old[i]
        if ends.get(seg.block, -1) >= same:
            del ends[seg.block]
            dropped.add(seg.block)
        for path in _source_prefixes(seg.source):
            if starts.get(path, -1) >= same:
                del starts[path]
    for block in dropped:  # the block may also end inside the shared part
        for j in range(same - 1, -1, -1):
            if segments[j].block == block:
                ends[block] = j
                break
            if 0 <= segments[j].block < block:  # blocks are numbered in order
                break
    state = chain[-1] if chain else _seed(model, scaffolding)
    total = cum[-1] if cum else 0
    for i in range(same, len(segments)):
        seg = segments[i]
        state = hashlib.blake2b(f"{state}{seg.digest}".encode(), digest_size=16).hexdigest()
        chain.append(state)
        total += seg.tokens
        cum.append(total)
        if seg.block >= 0:
            ends[seg.block] = i
        for path in _source_prefixes(seg.source):
            starts.setdefault(path, i)
    return Carried(segments, chain, cum, ends, starts, key, same)  # a list nobody edits


def breakpoint_segments(marks: list[tuple[Path, Any]], facts: Carried) -> list[tuple[int, float]]:
    """Segments that end at a cache breakpoint, with the TTL in seconds: `marks` are the
    validator's (`wire.rules.cache_marks`), each at the end of the block it marks."""
    segments = facts.segments
    out: list[tuple[int, float]] = []
    for path, control in marks:
        if path == ("cache_control",):
            if segments:  # automatic caching: the last block's end
                last = next(
                    (i for i in range(len(segments) - 1, -1, -1) if segments[i].block >= 0), -1
                )
                out.append((last if last >= 0 else len(segments) - 1, _ttl(control)))
            continue
        end = _block_end(facts, ".".join(map(str, path[: 4 if path[0] == "messages" else 2])))
        if end is not None:
            out.append((end, _ttl(control)))
    return sorted(set(out))


def _block_end(facts: Carried, source: str) -> int | None:
    """The last segment of the block at `source`. A server tool's hidden prompt comes first
    under the tool's path and belongs to no block: the tool's own segment ends it."""
    first = facts.starts.get(source)
    if first is None:
        return None
    segments = facts.segments
    i = first
    while i < len(segments) and segments[i].block < 0 and _under(segments[i].source, source):
        i += 1
    if i == len(segments) or segments[i].block < 0 or not _under(segments[i].source, source):
        return i - 1  # only hidden segments under the path: the last of them
    return facts.ends[segments[i].block]


def _under(path: str, source: str) -> bool:
    return path == source or path.startswith(source + ".")


def _ttl(control: dict[str, Any]) -> float:
    # a cache_control mark's ttl names a lifetime of the provider whose requests carry marks
    return retention(marked_provider().name).ttl_for(control.get("ttl", "5m"), 300.0)
