"""Scans of a request's message list that resume over the part the last request shared.

A new request body repeats the previous one's messages (the same frozen objects, see
`wire.resume`) and adds a few. A per-message scan (rules, beta features) keeps its state after
the longest run of leading frozen messages it saw; a later list that starts with those very
objects resumes from a copy of that state. Only frozen messages are kept: they cannot change.
The comparison is a list `==` (`agent.frozen.shared_prefix`): by identity at C speed, and
exact JSON equality for an equal message that is another object (the same facts).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from dtl_notebook.agent.frozen import FrozenDict
from dtl_notebook.wire.shared import sharing

State = TypeVar("State")
REMEMBERED_LISTS = 4  # per scan: recent message lists whose state is kept


class PrefixScan(Generic[State]):
    """`scan(items)`: `step(state, index, item)` over every item, from a fresh `start()` state
    or resumed after a frozen prefix shared with a recent list. Returns the final state, which
    may be the one kept for later scans: read it, never change it."""

    def __init__(self, start: Callable[[], State], step: Callable[[State, int, Any], None]) -> None:
        self._start, self._step = start, step
        self._kept: list[tuple[list[Any], State]] = []
        self._lock = threading.Lock()

    def scan(self, items: list[Any]) -> State:
        """The state after stepping over `items` (resumed where it can be)."""
        if not sharing():
            state = self._start()
            for index, item in enumerate(items):
                self._step(state, index, item)
            return state
        prefix, state = self._resume(items)
        done = frozen = len(prefix)  # the kept prefix is all frozen, and so are items[done:frozen]
        if done == len(items):
            return state
        state = copy.deepcopy(state) if done else state  # a kept state is never stepped on
        while frozen < len(items) and type(items[frozen]) is FrozenDict:
            frozen += 1
        for index in range(done, frozen):
            self._step(state, index, items[index])
        if frozen > done:
            self._keep(prefix + items[done:frozen], state)
            if frozen < len(items):
                state = copy.deepcopy(state)
        for index in range(frozen, len(items)):
            self._step(state, index, items[index])
        return state

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()

    def _resume(self, items: list[Any]) -> tuple[list[Any], State]:
        """The longest kept prefix `items` starts with, and its (kept) state."""
        with self._lock:
            kept = list(self._kept)
        best: tuple[list[Any], State] | None = None
        for prefix, state in kept:
            n = len(prefix)
            if (
                0 < n <= len(items)
                and (best is None or n > len(best[0]))
                and items[n - 1] is prefix[n - 1]  # the same lineage: compared by identity
                and items[:n] == prefix
            ):
                best = (prefix, state)
        return best if best is not None else ([], self._start())

    def _keep(self, prefix: list[Any], state: State) -> None:
        with self._lock:
            self._kept = [(prefix, state), *self._kept[: REMEMBERED_LISTS - 1]]


class GrowingSet:
    """A set that only grows, for scan states: copying it copies a small private part and
    shares the rest (a frozen set, rebuilt after every `MERGE_AFTER` additions)."""

    MERGE_AFTER = 64
    __slots__ = ("_base", "_new")

    def __init__(self, base: frozenset[Any] = frozenset(), new: set[Any] | None = None) -> None:
        self._base, self._new = base, set() if new is None else new

    def add(self, item: Any) -> None:
        if item in self._base:
            return
        self._new.add(item)
        if len(self._new) > self.MERGE_AFTER:
            self._base, self._new = self._base | self._new, set()

    def update(self, items: Iterable[Any]) -> None:
        for item in items:
            self.add(item)

    def __contains__(self, item: object) -> bool:
        return item in self._new or item in self._base

    def __len__(self) -> int:
        return len(self._base) + len(self._new)

    def __deepcopy__(self, memo: dict[int, Any]) -> GrowingSet:
        return GrowingSet(self._base, set(self._new))
