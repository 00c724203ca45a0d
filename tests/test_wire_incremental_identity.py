"""Incremental validation remembers a frozen item itself once it equals a remembered copy, so
the next list that repeats it is matched by identity (in one step) instead of compared."""

from __future__ import annotations

from dtl_notebook.agent.frozen import freeze
from dtl_notebook.wire import incremental


def test_an_equal_frozen_item_is_remembered_itself() -> None:
    incremental.forget()
    plain = [{"role": "user", "content": f"turn {n}"} for n in range(3)]
    assert incremental.accepts("responses", {"model": "gpt-5.4", "input": plain})
    frozen = [freeze(item) for item in plain]
    grown = [*frozen, freeze({"role": "user", "content": "turn 3"})]
    assert incremental.accepts("responses", {"model": "gpt-5.4", "input": grown})
    remembered = incremental._recent("responses", "input", grown).items
    assert all(a is b for a, b in zip(remembered, grown, strict=True))
    bad = [*frozen, {"role": "user", "content": 3}]  # a new item is still validated
    assert not incremental.accepts("responses", {"model": "gpt-5.4", "input": bad})
    incremental.forget()
