"""The body text splices remembered texts of frozen items and equals json.dumps exactly."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled, footprint, reset
from dtl_notebook._reuse.body_text import body_text, item_text
from dtl_notebook._reuse.frozen import freeze
from tests.support.reuse_marks import shares

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        | st.builds(freeze, st.dictionaries(st.text(max_size=5), inner, max_size=3))
        | st.builds(freeze, st.lists(inner, max_size=3))
    ),
    max_leaves=25,
)
BODIES = st.dictionaries(st.text(max_size=8), VALUES, max_size=5)


@given(body=BODIES)
def test_the_text_is_json_dumps_exactly(body: dict[str, Any]) -> None:
    expected = json.dumps(body, ensure_ascii=False)
    assert body_text(body) == expected
    assert body_text(body) == expected  # again, from the remembered texts


@given(body=BODIES, item=st.dictionaries(st.text(max_size=5), VALUES, max_size=3))
def test_a_shared_frozen_item_is_written_once_and_a_new_one_afresh(
    body: dict[str, Any], item: dict[str, Any]
) -> None:
    shared = freeze({"name": "shared", **item})
    first = {**body, "tools": [shared]}
    assert body_text(first) == json.dumps(first, ensure_ascii=False)
    assert body_text(first) == json.dumps(first, ensure_ascii=False)  # its text remembered
    replaced = freeze({"name": "replaced", **item})  # another object: its own text
    second = {**body, "tools": [replaced, shared]}
    assert body_text(second) == json.dumps(second, ensure_ascii=False)
    assert item_text(replaced) == json.dumps(replaced, ensure_ascii=False)


def test_non_string_keys_fall_back_to_json() -> None:
    body: dict[Any, Any] = {"a": {1: "x", "b": [freeze({"k": 1.5})]}, "c": []}
    assert body_text(body) == json.dumps(body, ensure_ascii=False)


def test_with_reuse_off_every_text_is_written_afresh_and_none_kept() -> None:
    item = freeze({"name": "fresh"})
    before = footprint()["item texts"]["entries"]
    with disabled():
        assert body_text({"tools": [item]}) == json.dumps({"tools": [item]}, ensure_ascii=False)
    assert footprint()["item texts"]["entries"] == before


@shares
def test_a_texts_memo_entry_goes_with_its_item() -> None:
    reset()
    item = freeze({"name": "x"})
    item_text(item)
    assert footprint()["item texts"]["entries"] == 1
    del item
    assert footprint()["item texts"]["entries"] == 0


@given(names=st.lists(st.text(max_size=4), min_size=1, max_size=6), at=st.integers(0, 5))
def test_a_run_of_frozen_items_is_joined_once_and_a_changed_run_afresh(
    names: list[str], at: int
) -> None:
    items = [freeze({"name": name, "n": i}) for i, name in enumerate(names)]
    body = {"tools": [{"type": "plain"}, *items]}
    assert body_text(body) == json.dumps(body, ensure_ascii=False)
    assert body_text(body) == json.dumps(body, ensure_ascii=False)  # the joined run again
    changed = list(items)
    changed[at % len(items)] = freeze({"name": "changed"})
    again = {"tools": [{"type": "plain"}, *changed]}
    assert body_text(again) == json.dumps(again, ensure_ascii=False)
