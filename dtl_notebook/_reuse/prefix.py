"""Scans of a request's message list that resume over the part the last request shared.

A new request body repeats the previous one's messages (the same frozen objects, see
`_reuse.walks`) and adds a few. A per-message scan (rules, beta features) keeps its state after
the longest run of leading frozen messages it saw; a later list that starts with those very
objects resumes from a copy of that state. Only frozen messages are kept: they cannot change.
The comparison is a list comparison (`frozen.starts_with`, no copy of the list): by identity
at C speed, and exact JSON equality for an equal message that is another object (the same
facts).
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from dtl_notebook._reuse.frozen import FrozenDict, starts_with
from dtl_notebook._reuse.registry import Memo, active

State = TypeVar("State")
REMEMBERED_LISTS = 4  # per scan: recent message lists whose state is kept
# (scan number, its own count) -> (a list, n, the state after its first n items), every scan's
_KEPT = Memo("prefix scans")
_GROWING = threading.Lock()  # a kept list grows by one scan at a time
_numbers = itertools.count()


class PrefixScan(Generic[State]):
    """`scan(items)`: `step(state, index, item)` over every item, from a fresh `start()` state
    or resumed after a frozen prefix shared with a recent list. Returns the final state, which
    may be the one kept for later scans: read it, never change it."""

    def __init__(
        self,
        start: Callable[[], State],
        step: Callable[[State, int, Any], None],
        remembered: int = REMEMBERED_LISTS,
    ) -> None:
        self._start, self._step, self._remembered = start, step, remembered
        self._number = next(_numbers)
        self._kept: list[Any] = []  # keys of this scan's entries in the memo, newest first
        self._count = 0

    def scan(self, items: list[Any]) -> State:
        """The state after stepping over `items` (resumed where it can be)."""
        if not active():
            state = self._start()
            for index, item in enumerate(items):
                self._step(state, index, item)
            return state
        own, done, state = self._resume(items)
        frozen = done  # the kept prefix is all frozen, and so are items[done:frozen]
        if done == len(items):
            return state
        state = _copied(state) if done else state  # a kept state is never stepped on
        while frozen < len(items) and type(items[frozen]) is FrozenDict:
            frozen += 1
        for index in range(done, frozen):
            self._step(state, index, items[index])
        if frozen > done:
            with _GROWING:
                if own is not None and len(own) == done:
                    # the scan's own copy, which only grows: the entries kept on it read their
                    # first n items, which stay as they were
                    own.extend(items[done:frozen])
                else:
                    own = items[:frozen]
            self._keep(own, frozen, state)
            if frozen < len(items):
                state = _copied(state)
        for index in range(frozen, len(items)):
            self._step(state, index, items[index])
        return state

    def scan_split(self, items: list[Any]) -> tuple[int, State, State]:
        """For a list whose shared part follows a few plain items made anew each request (a
        `tools` list: the search tool and the shown tools, then the shared catalog): how many
        plain items lead (`at`), the state after them (stepped afresh), and the state after
        `items[at:]` (indices from 0 there), resumed where it can be."""
        at = plain_head(items)
        head = self._start()
        for index in range(at):
            self._step(head, index, items[index])
        return at, head, self.scan(items[at:] if at else items)

    def _resume(self, items: list[Any]) -> tuple[list[Any] | None, int, State]:
        """The longest kept prefix `items` starts with: (the list it is the start of, its
        length, its kept state)."""
        best: tuple[list[Any], int, State] | None = None
        for key in self._kept:
            found = _KEPT.get(key)
            if found is None:
                continue
            own, n, _ = found
            if (
                0 < n <= len(items)
                and (best is None or n > best[1])
                and items[n - 1] is own[n - 1]  # the same lineage: compared by identity
                and starts_with(items, own if n == len(own) else own[:n])
            ):
                best = found
        return best if best is not None else (None, 0, self._start())

    def _keep(self, own: list[Any], n: int, state: State) -> None:
        self._count += 1
        key = (self._number, self._count)
        _KEPT.put(key, (own, n, state))
        kept = self._kept  # newest first; a key the memo evicted is skipped when read
        kept.insert(0, key)
        while len(kept) > self._remembered:
            _KEPT.discard(kept.pop())


def plain_head(items: list[Any]) -> int:
    """How many items come before the first read-only one: a few made anew each request, or,
    for a parsed body, all of them (looked through at C speed past the first few)."""
    for index in range(min(len(items), _FEW)):
        if type(items[index]) is FrozenDict:
            return index
    if len(items) <= _FEW:
        return len(items)
    kinds = list(map(type, items))
    return kinds.index(FrozenDict) if FrozenDict in kinds else len(items)


_FEW = 16  # plain items looked at one by one before the rest is looked through at once


def _copied(state: State) -> State:
    """A deep copy of a scan state: its own `__deepcopy__` called directly where it has one
    (the states of the scans that run every turn), else `copy.deepcopy`."""
    own = getattr(type(state), "__deepcopy__", None)
    return own(state, {}) if own is not None else copy.deepcopy(state)


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


class GrowingMap:
    """`GrowingSet`'s mapping twin: each key keeps the first value it was given."""

    MERGE_AFTER = 64
    __slots__ = ("_base", "_new")

    def __init__(self, base: dict[Any, Any] | None = None, new: dict[Any, Any] | None = None):
        self._base: dict[Any, Any] = {} if base is None else base  # never changed once shared
        self._new: dict[Any, Any] = {} if new is None else new

    def add(self, key: Any, value: Any) -> None:
        if key in self._base:
            return
        self._new.setdefault(key, value)
        if len(self._new) > self.MERGE_AFTER:
            self._base, self._new = {**self._base, **self._new}, {}

    def get(self, key: Any) -> Any:
        found = self._new.get(key)
        return self._base.get(key) if found is None else found

    def __contains__(self, key: object) -> bool:
        return key in self._new or key in self._base

    def __len__(self) -> int:
        return len(self._base) + len(self._new)

    def __deepcopy__(self, memo: dict[int, Any]) -> GrowingMap:
        return GrowingMap(self._base, dict(self._new))
