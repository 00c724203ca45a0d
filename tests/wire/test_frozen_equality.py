"""Exact JSON equality of frozen values, and the list comparisons built on it: a resumed scan
never takes an equal-looking but different message (``1`` / ``1.0`` / ``True``) for the one
it saw."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook._reuse.frozen import freeze, identical_run, json_equal, shared_prefix
from dtl_notebook._reuse.prefix import GrowingSet
from dtl_notebook.wire.betas import body_features
from dtl_notebook.wire.validate import WireValidationError, validate_payload

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False).map(lambda f: round(f, 1)),
    st.sampled_from([-0.0, 0.0, math.nan, -math.nan, math.inf, -math.inf]),
    st.sampled_from(["", "a", "1", "true"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # 1, 1.0 and true are three different texts


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
@example(-0.0, 0.0)  # found by hypothesis: equal in Python, "-0.0" and "0.0" in a body
@example({"a": [math.nan]}, {"a": [float("nan")]})  # two NaN objects, one text "NaN"
def test_json_equal_is_equality_of_the_json_text(a: Any, b: Any) -> None:
    assert json_equal(a, b) == (_canonical(a) == _canonical(b))
    assert json_equal(freeze(a), b) == json_equal(a, freeze(b)) == json_equal(a, b)


def test_floats_compare_by_their_json_text() -> None:
    assert not json_equal(-0.0, 0.0) and not json_equal([0.0], freeze([-0.0]))
    assert json_equal(-0.0, -0.0) and json_equal(0.0, 0.0)
    assert json_equal(math.nan, float("nan")) and json_equal(math.inf, float("inf"))
    assert not json_equal(math.inf, -math.inf) and not json_equal(math.nan, 0.0)
    assert freeze({"x": -0.0}) != {"x": 0.0}


def test_frozen_values_compare_exactly() -> None:
    frozen = freeze({"n": 1, "list": [True, 2.0]})
    assert frozen == {"n": 1, "list": [True, 2.0]}
    assert frozen != {"n": True, "list": [True, 2.0]}
    plain_first = {"n": 1.0, "list": [True, 2.0]}
    assert plain_first.__ne__(frozen) is False  # a plain dict alone would call them equal
    assert plain_first != frozen  # reflected: the frozen side decides
    assert frozen["list"] != [1, 2.0]
    assert frozen != "text" and frozen != [frozen]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=12),
    st.lists(st.integers(0, 3), max_size=12),
)
def test_shared_prefix_is_the_length_of_the_exactly_equal_start(
    left: list[int], right: list[int]
) -> None:
    pool = [freeze({"v": 1}), freeze({"v": True}), freeze({"v": 1.0}), freeze({"v": "1"})]
    a = [pool[i] for i in left]
    b = [copy.deepcopy(pool[i]) if k % 2 else pool[i] for k, i in enumerate(right)]
    expected = 0
    while expected < min(len(a), len(b)) and json_equal(a[expected], b[expected]):
        expected += 1
    assert shared_prefix(a, b) == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20))
def test_identical_run_finds_where_the_same_objects_end(same: int, extra: int) -> None:
    items = [freeze({"i": i}) for i in range(same + extra)]
    other = items[:same] + [freeze({"i": i}) for i in range(same, same + extra)]
    assert identical_run(items, other, len(items)) == same


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 200)), max_size=300))
def test_a_growing_set_is_a_set_and_its_copies_are_independent(
    steps: list[tuple[bool, int]],
) -> None:
    grown, plain = GrowingSet(), set()
    copies: list[tuple[GrowingSet, set[int]]] = []
    for snapshot, item in steps:
        if snapshot:
            copies.append((copy.deepcopy(grown), set(plain)))
        grown.add(item)
        plain.add(item)
    for kept, expected in [*copies, (grown, plain)]:
        assert len(kept) == len(expected)
        assert all((i in kept) == (i in expected) for i in range(201))


def _anthropic(messages: list[Any]) -> dict[str, Any]:
    return {
        "model": "claude-opus-4-8",
        "max_tokens": 64,
        "tools": [{"name": "t", "input_schema": {"type": "object"}}],
        "messages": messages,
    }


BETA_POOL = [
    freeze({"role": "user", "content": "hi"}),
    freeze({"role": "assistant", "content": [{"type": "text", "text": "ok"}]}),
    freeze(
        {
            "role": "assistant",
            "content": [
                {"type": "mcp_tool_use", "id": "m1", "name": "q", "server_name": "s", "input": {}}
            ],
        }
    ),
    freeze({"role": "user", "content": [{"type": "compaction", "content": "summary"}]}),
]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=6), max_size=5))
def test_resumed_beta_features_equal_cold_ones(lists: list[list[int]]) -> None:
    for picks in lists:
        body = _anthropic([BETA_POOL[i] for i in picks])
        with disabled():
            cold = body_features(body)
        assert body_features(body) == cold
        assert body_features(body) == cold  # and again, from the state kept by the first


def test_a_carrier_swapped_into_a_known_history_is_validated_again() -> None:
    tool = {"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}
    history = [
        freeze({"role": "user", "content": "hi"}),
        freeze({"role": "system", "tools": [tool]}),
        freeze({"role": "user", "content": "more"}),
    ]
    body = {"model": "kimi-k2.5", "messages": history}
    validate_payload(body, "kimi")
    bad_tool = {**tool, "function": {"name": 5, "parameters": {"type": "object"}}}
    swapped = [history[0], freeze({"role": "system", "tools": [bad_tool]}), history[2]]
    try:
        validate_payload({**body, "messages": swapped}, "kimi")
    except WireValidationError as exc:
        assert "messages.1.tools.0" in str(exc)
    else:
        raise AssertionError("an invalid carrier in place of a valid one was accepted")
    validate_payload(
        {**body, "messages": [*history, freeze({"role": "user", "content": "x"})]}, "kimi"
    )
