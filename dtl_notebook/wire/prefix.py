"""Scans of a request's message list that resume over the part the last request shared.

A new request body repeats the previous one's messages (the same frozen objects, see
`wire.resume`) and adds a few. A per-message scan (rules, beta features) keeps its state after
the longest run of leading frozen messages it saw; a later list that starts with those very
objects (compared by identity, at C speed) resumes from a copy of that state. Only frozen
messages are covered: they cannot change, so the same object means the same facts.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from dtl_notebook.agent.frozen import FrozenDict
from dtl_notebook.wire.shared import sharing

State = TypeVar("State")
REMEMBERED_LISTS = 4  # per scan: recent message lists whose state is kept


class PrefixScan(Generic[State]):
    """`scan(items)`: `step(state, index, item)` over every item, from a fresh `start()` state
    or resumed after a frozen prefix shared with a recent list. Returns the final state (a
    private copy: the caller may change it)."""

    def __init__(self, start: Callable[[], State], step: Callable[[State, int, Any], None]) -> None:
        self._start, self._step = start, step
        self._kept: list[tuple[list[Any], tuple[int, ...], State]] = []
        self._lock = threading.Lock()

    def scan(self, items: list[Any]) -> State:
        """The state after stepping over `items` (resumed where it can be)."""
        if not sharing():
            state = self._start()
            for index, item in enumerate(items):
                self._step(state, index, item)
            return state
        done, state = self._resume(items)
        frozen = done  # items[:frozen] are all frozen
        while frozen < len(items) and type(items[frozen]) is FrozenDict:
            frozen += 1
        for index in range(done, frozen):
            self._step(state, index, items[index])
        if frozen > done:
            self._keep(items[:frozen], copy.deepcopy(state))
        for index in range(frozen, len(items)):
            self._step(state, index, items[index])
        return state

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()

    def _resume(self, items: list[Any]) -> tuple[int, State]:
        with self._lock:
            kept = list(self._kept)
        best: tuple[int, State] | None = None
        for _prefix, ids, state in kept:
            n = len(ids)
            if (
                n <= len(items)
                and (best is None or n > best[0])
                and ids == tuple(map(id, items[:n]))
            ):
                best = (n, state)
        if best is None:
            return 0, self._start()
        return best[0], copy.deepcopy(best[1])

    def _keep(self, prefix: list[Any], state: State) -> None:
        entry = (prefix, tuple(map(id, prefix)), state)  # the prefix keeps its ids unique
        with self._lock:
            self._kept = [entry, *self._kept[: REMEMBERED_LISTS - 1]]
