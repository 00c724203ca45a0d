"""The analyzer's per-request facts (chain hashes, running totals, block ends, source starts)
carried over the segments a request shares with the previous one equal a cold computation."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.cache.carry import Carried, breakpoint_segments, carry, shared_length
from dtl_notebook.context.model import ModelContext, Segment
from dtl_notebook.context.segments import Rendered
from dtl_notebook.wire.rules import cache_marks

# one step: keep how many leading segments of the previous list, then which new ones follow
NEW = st.lists(
    st.tuples(st.sampled_from(["text", "tool_schema", "system"]), st.integers(0, 3), st.booleans()),
    max_size=6,
)
STEPS = st.lists(st.tuples(st.integers(0, 12), NEW, st.booleans()), min_size=1, max_size=8)


def _extend(kept: list[Segment], new: list[tuple[str, int, bool]], step: int) -> list[Segment]:
    out = list(kept)
    block = max((s.block for s in kept), default=-1)
    for n, (kind, tokens, opens_block) in enumerate(new):
        block += 1 if opens_block or block < 0 else 0
        source = f"messages.{block}.content.{n % 2}"
        hidden = kind == "system" and tokens == 0
        out.append(
            Segment(kind, f"{kind} {step} {n}", tokens, source, block=-1 if hidden else block)
        )
    return out


def _ctx(segments: list[Segment], model: str, rendered: Rendered | None = None) -> ModelContext:
    return ModelContext("anthropic", model, list(segments), "test", False, rendered=rendered)


def _facts(carried: Carried) -> tuple[Any, ...]:
    return (carried.chain, carried.cum, carried.ends, carried.starts)


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_carried_facts_equal_cold_ones(steps: list[tuple[int, Any, bool]]) -> None:
    previous: Carried | None = None
    segments: list[Segment] = []
    for step, (keep, new, scaffolding) in enumerate(steps):
        segments = _extend(segments[: min(keep, len(segments))], new, step)
        expected_shared = shared_length(previous.segments, segments) if previous else 0
        key_same = previous is not None and previous.start_key == ("m", scaffolding)
        warm = carry(_ctx(segments, "m"), scaffolding, previous)
        cold = carry(_ctx(segments, "m"), scaffolding, None)
        assert _facts(warm) == _facts(cold)
        assert warm.shared == (expected_shared if key_same else 0)
        previous = warm


def test_the_start_key_matters() -> None:
    """A different model or scaffolding seeds another chain: nothing is taken over."""
    segments = _extend([], [("text", 5, True), ("text", 7, True)], 0)
    first = carry(_ctx(segments, "m"), False, None)
    chain = list(first.chain)
    other = carry(_ctx(segments, "m"), True, first)
    assert other.shared == 0 and other.chain != chain
    assert other.chain == carry(_ctx(segments, "m"), True, None).chain
    assert carry(_ctx(segments, "n"), True, other).chain != other.chain


def test_an_equal_but_new_segment_is_hashed_again() -> None:
    """Identity, not equality, decides what is taken over; an edited one changes the hashes."""
    segments = _extend([], [("text", 5, True), ("text", 7, True)], 0)
    first = carry(_ctx(segments, "m"), False, None)
    chain = list(first.chain)
    edited = [segments[0], Segment("text", "edited", 9, segments[1].source, block=1)]
    again = carry(_ctx(edited, "m"), False, first)
    assert again.shared == 1 and again.chain[0] == chain[0] and again.chain[1] != chain[1]
    assert again.cum == [5, 14]


def test_breakpoints_find_the_block_end_of_each_marked_path() -> None:
    segments = [
        Segment("tool_schema", "t", 3, "tools.0", block=0),
        Segment("system", "hidden", 2, "system", block=-1),
        Segment("text", "a", 4, "messages.0.content.0", block=1),
        Segment("text", "b", 4, "messages.0.content.0.content.0", block=1),
        Segment("text", "c", 4, "messages.1.content.0", block=2),
    ]
    facts = carry(_ctx(segments, "m"), False, None)
    marked = {"cache_control": {"type": "ephemeral"}}
    payload = {
        "tools": [{"name": "t", **marked}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a", **marked}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "c", "cache_control": {"ttl": "1h"}}],
            },
        ],
    }
    assert breakpoint_segments(cache_marks(payload), facts) == [(0, 300.0), (3, 300.0), (4, 3600.0)]


@settings(max_examples=100, deadline=None)
@given(STEPS)
def test_a_context_rendered_from_the_previous_one_takes_over_without_comparing(
    steps: list[tuple[int, Any, bool]],
) -> None:
    """Where the renderer says (by ancestry) that a context starts with every segment of the
    previous one, the facts are taken over as they are, and equal a cold computation."""
    previous: Carried | None = None
    segments: list[Segment] = []
    for step, (keep, new, _) in enumerate(steps):
        kept = min(keep, len(segments))
        grown = _extend(segments[:kept], new, step)
        ancestry = ((segments, kept),) if previous is not None else ()
        warm = carry(_ctx(grown, "m", Rendered(grown, ancestry)), False, previous)
        cold = carry(_ctx(grown, "m"), False, None)
        assert _facts(warm) == _facts(cold)
        assert warm.shared == (shared_length(segments, grown) if previous is not None else 0)
        assert warm.segments is grown  # the rendered list itself: no copy
        previous, segments = warm, grown
