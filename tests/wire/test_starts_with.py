"""`starts_with` (no copy of the list) answers as `items[:len(head)] == head` does."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse.frozen import freeze, starts_with

# JSON values an edited history may hold in place of a message: objects, and the odd value
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=6,
)
MESSAGES = st.lists(st.dictionaries(st.sampled_from("ab"), JSON, max_size=2), max_size=8)


@settings(max_examples=300, deadline=None)
@given(MESSAGES, st.integers(0, 8), st.lists(st.tuples(st.integers(0, 9), JSON), max_size=3))
def test_starts_with_is_a_prefix_comparison(
    messages: list[dict[str, Any]], cut: int, edits: list[tuple[int, Any]]
) -> None:
    head = [freeze(m) for m in messages[:cut]]
    items: list[Any] = [*head, *(freeze(m) for m in messages[cut:])]
    for where, value in edits:  # an edit anywhere: an equal copy, another value, anything
        if where < len(items):
            items[where] = value if where % 2 else dict(items[where]) | {"edited": where}
    assert starts_with(items, head) is (items[: len(head)] == head)


def test_an_equal_copy_counts_and_an_edit_anywhere_does_not() -> None:
    head = [freeze({"role": "user", "content": f"m{i}"}) for i in range(50)]
    items = [*head, freeze({"role": "user", "content": "new"})]
    assert starts_with(items, head)
    items[10] = {"role": "user", "content": "m10"}  # another object, the same facts
    assert starts_with(items, head)
    items[0] = {"role": "user", "content": "m0 edited"}
    assert not starts_with(items, head)
    items[0], items[49] = head[0], "not a message"
    assert not starts_with(items, head)
    assert not starts_with(head[:3], head) and starts_with(head, head)
