"""Incremental validation over lists that repeat frozen items: a list repeating remembered
items (equal copies first, then the frozen items themselves) is accepted as a cold validation
accepts it, and a new bad item is still caught."""

from __future__ import annotations

from dtl_notebook._reuse import disabled, reset
from dtl_notebook._reuse.frozen import freeze
from dtl_notebook.wire import incremental


def _cold(payload: dict[str, object]) -> bool:
    with disabled():
        return incremental.accepts("responses", payload)


def test_an_equal_frozen_item_is_accepted_like_a_cold_validation() -> None:
    reset()
    plain = [{"role": "user", "content": f"turn {n}"} for n in range(3)]
    assert incremental.accepts("responses", {"model": "gpt-5.4", "input": plain})
    frozen = [freeze(item) for item in plain]
    grown = [*frozen, freeze({"role": "user", "content": "turn 3"})]
    body = {"model": "gpt-5.4", "input": grown}
    assert incremental.accepts("responses", body) is _cold(body) is True
    assert incremental.accepts("responses", body)  # now matched by identity
    bad = {"model": "gpt-5.4", "input": [*frozen, {"role": "user", "content": 3}]}
    assert incremental.accepts("responses", bad) is _cold(bad) is False
    reset()
