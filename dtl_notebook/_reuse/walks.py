"""Serialized history kept between requests: a builder resumes where the last one stopped.

A builder walks the transcript and appends payload messages. When the transcript is the same
list with the same `rewrites` (every message seen is still in place) and only grew, and
everything else the walk reads is the same (the state's `key()`: provider, profile, options;
and the load points of the messages seen), the payload messages made from the messages seen
are the same too. A builder is a `ResumableWalk`: it finds the checkpoint of the last walk
(`Checkpoint`, with the builder's own `WalkState`, one dataclass), restores its messages,
state and notes, steps over the new messages only and keeps a new checkpoint; the next build
starts from a copy of it (`Carried`: made from the dataclass fields). Payload messages kept
here go into later bodies as they are, so nothing may edit one after the walk: kept messages are
frozen (`frozen`; the one a builder may still extend is kept as a private copy instead), and
the breakpoint code copies a message and block before marking it. Checks find a frozen
message unchanged by identity (`prefix.PrefixScan`).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar, cast

from dtl_notebook._reuse.frozen import FrozenDict, freeze
from dtl_notebook._reuse.registry import Memo, active

JSON = dict[str, Any]
State = TypeVar("State")

_WALKS = Memo("builder walks")  # (store, id(transcript), key) -> (ref, _Entry)
_FOLDS = Memo("history scans")  # (scan, id(transcript)) -> (ref, _Fold)
_numbers = itertools.count()


class WalkState(Protocol):
    """A builder's own state after a walk: `key()` names the settings the walk read (a
    checkpoint is found only for the same key), `copy()` gives a copy to go on from."""

    def key(self) -> tuple[Any, ...]: ...

    def copy(self) -> Self: ...


T = TypeVar("T")


def copied(obj: T, /, **changes: Any) -> T:
    """A shallow copy of a dataclass instance with `changes`: `dataclasses.replace` without
    its per-field checks and `__init__` (walk states and checkpoints are copied every turn;
    none has a `__post_init__` or slots)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__, **changes)
    return new


# values a copy shares (immutable) and containers it copies shallowly
_SHARED = frozenset({int, float, bool, str, bytes, tuple, frozenset, type(None)})
_SHALLOW = frozenset({list, dict, set})


class Carried:
    """A `WalkState` base for a dataclass. The fields named in `KEY` are the settings the walk
    read (`key()`, in order), shared by copies; every other field is what the walk carries
    into the next messages, and `copy()` copies each of them: a list, dict or set shallowly,
    any other mutable value with `copy.deepcopy` (its own `__deepcopy__` where it shares a
    bulk), an immutable one not at all. The copy is made from the fields, so a field added
    is carried without a line more."""

    KEY: ClassVar[tuple[str, ...]] = ()

    def key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.KEY)

    def copy(self) -> Self:
        kind = type(self)
        carried = _CARRIED.get(kind)
        if carried is None:  # all fields but the key, listed once per class
            names = (f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]
            carried = _CARRIED[kind] = tuple(n for n in names if n not in self.KEY)
        changes: dict[str, Any] = {}
        for name in carried:
            value = getattr(self, name)
            if type(value) in _SHALLOW:
                changes[name] = value.copy()
            elif type(value) not in _SHARED:
                changes[name] = copy.deepcopy(value)
        return copied(self, **changes)


_CARRIED: dict[type, tuple[str, ...]] = {}  # a Carried dataclass -> the fields a copy copies


class Planned(Protocol):
    """What a walk reads of a plan: the transcript planned, its messages and load points."""

    @property
    def history(self) -> tuple[list[Any], int] | None: ...

    @property
    def first(self) -> int: ...

    @property
    def messages(self) -> Sequence[Any]: ...

    @property
    def loads(self) -> Mapping[int, list[Any]]: ...


S = TypeVar("S", bound=WalkState)


@dataclass
class Checkpoint(Generic[S]):
    """A builder's state after walking `plan.messages[:seen]` (before the final flushes)."""

    seen: int
    messages: list[JSON]  # with `open_last`, the last one is a private copy
    state: S
    notes: list[str] = field(default_factory=list)  # notes the walk added
    frozen: int = 0  # leading messages known to be frozen already


@dataclass
class _Entry:
    rewrites: int
    loads: list[tuple[int, list[Any]]]  # the load points seen, compared by identity
    checkpoint: Checkpoint[Any]


class Walks(Generic[S]):
    """The checkpoints of one builder, one per transcript and key (bounded, over every builder,
    and each gone with its transcript). `open_last`: the builder extends its last payload
    message's `content` (merging turns), so that message is kept as a private copy."""

    def __init__(self, open_last: bool = False) -> None:
        self._number = next(_numbers)
        self._open_last = open_last

    def find(self, plan: Planned, key: tuple[Any, ...]) -> Checkpoint[S] | None:
        """The checkpoint to resume `plan` from, if one is valid for it: the builder's own (taken
        out of the memo), or a copy where another build took it first."""
        if plan.history is None or not active():
            return None
        transcript, rewrites = plan.history
        key_of = (self._number, id(transcript), key)
        found = _WALKS.get(key_of)
        entry: _Entry | None = found[1] if found is not None and found[0]() is transcript else None
        if (
            entry is None
            or entry.rewrites != rewrites
            or entry.checkpoint.seen > len(plan.messages)
            or not _same_loads(entry.loads, _loads_before(plan, entry.checkpoint.seen))
        ):
            return None
        checkpoint = entry.checkpoint
        if _WALKS.take(key_of, found):
            # taken over, not copied: the builder extends this list into its payload and keeps
            # a new checkpoint after its walk (one that fails before then starts the next cold)
            messages, state, notes = checkpoint.messages, checkpoint.state, checkpoint.notes
        else:
            messages = list(checkpoint.messages)
            state, notes = cast(S, checkpoint.state.copy()), list(checkpoint.notes)
        if messages and self._open_last:
            last = messages[-1]
            messages[-1] = {**last, "content": list(last["content"])}
        closed = len(messages) - 1 if messages and self._open_last else len(messages)
        return Checkpoint(checkpoint.seen, messages, state, notes, closed)

    def keep(self, plan: Planned, checkpoint: Checkpoint[S]) -> None:
        """Remember `checkpoint` for the next build of this transcript with its state's key.

        `checkpoint.messages` is the builder's own list, which becomes its payload: its messages
        are frozen in place (but for an open last one), so this body already holds the objects
        the next one repeats; the checkpoint keeps a copy of the list and of the state."""
        if plan.history is None or not active():
            return
        transcript, rewrites = plan.history
        live = checkpoint.messages
        closed = len(live) - 1 if live and self._open_last else len(live)
        for row in range(checkpoint.frozen, closed):  # read-only from now on
            if type(live[row]) is not FrozenDict:
                live[row] = freeze(live[row])
        kept = live[:closed]
        if closed < len(live):
            last = live[-1]
            kept.append({**last, "content": list(last["content"])})
        checkpoint = copied(checkpoint, messages=kept, state=checkpoint.state.copy(), frozen=closed)
        entry = _Entry(rewrites, _loads_before(plan, checkpoint.seen), checkpoint)
        key = (self._number, id(transcript), checkpoint.state.key())
        _WALKS.put_owned(key, transcript, entry)


P = TypeVar("P", bound=Planned)


class ResumableWalk(Generic[S, P]):
    """A builder's walk over a plan's messages from `plan.first`, resumed where the last walk
    of the same transcript and key stopped. `walk()` does it all: find the checkpoint, restore
    its payload messages (`out`), state and notes, `step` over the new messages only, `settle`,
    and keep the new checkpoint. A subclass writes `step` (one transcript message), and
    `settle` and `resumes` where it needs them; `open_last` as for `Walks`."""

    _walks: ClassVar[Walks[Any]]

    def __init_subclass__(cls, open_last: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._walks = Walks(open_last)  # one builder's checkpoints

    def __init__(self, plan: P, state: S, notes: list[str]) -> None:
        self.plan, self.state, self.notes = plan, state, notes
        self.out: list[JSON] = []  # the payload messages

    def step(self, index: int, message: Any) -> None:
        """Add the payload for transcript message `index`."""
        raise NotImplementedError

    def settle(self) -> None:
        """After the last message, before the state is kept (a count the next walk reuses)."""

    def resumes(self, state: S) -> bool:
        """Whether a checkpoint's state still holds for this build, beyond its key."""
        return True

    def walk(self) -> None:
        plan, notes = self.plan, self.notes
        found = self._walks.find(plan, self.state.key())
        if found is not None and self.resumes(found.state):
            self.out, self.state = found.messages, found.state
            notes.extend(found.notes)
            start, frozen, first_note = found.seen, found.frozen, len(notes) - len(found.notes)
        else:
            start, frozen, first_note = plan.first, 0, len(notes)
        messages = plan.messages
        for index in range(start, len(messages)):
            self.step(index, messages[index])
        self.settle()
        kept = Checkpoint(len(messages), self.out, self.state, notes[first_note:], frozen)
        self._walks.keep(plan, kept)  # keeps a copy of the state


def _loads_before(plan: Planned, seen: int) -> list[tuple[int, list[Any]]]:
    return sorted((i, specs) for i, specs in plan.loads.items() if i < seen)


def _same_loads(a: list[tuple[int, list[Any]]], b: list[tuple[int, list[Any]]]) -> bool:
    return len(a) == len(b) and all(i == j and x is y for (i, x), (j, y) in zip(a, b, strict=True))


@dataclass
class _Fold:
    rewrites: int
    seen: int
    state: Any


class HistoryScan(Generic[State]):
    """A fold of `step(state, message)` over a plan's transcript messages, resumed where the
    last fold of the same transcript stopped (the same list with the same `rewrites`, grown):
    the new messages only. Returns the state, which later folds may start from: read it, never
    change it (a state is copied before it is stepped on)."""

    def __init__(self, start: Callable[[], State], step: Callable[[State, Any], None]) -> None:
        self._start, self._step = start, step
        self._number = next(_numbers)

    def scan(self, plan: Planned) -> State:
        messages = plan.messages
        if plan.history is None or not active():
            return self._fold(self._start(), messages, 0)
        transcript, rewrites = plan.history
        key = (self._number, id(transcript))
        entry = _FOLDS.get(key)
        found: _Fold | None = entry[1] if entry is not None and entry[0]() is transcript else None
        if found is None or found.rewrites != rewrites or found.seen > len(messages):
            state = self._fold(self._start(), messages, 0)
        elif found.seen == len(messages):
            return cast(State, found.state)
        else:
            state = self._fold(copy.deepcopy(found.state), messages, found.seen)
        _FOLDS.put_owned(key, transcript, _Fold(rewrites, len(messages), state))
        return state

    def _fold(self, state: State, messages: Sequence[Any], start: int) -> State:
        for index in range(start, len(messages)):
            self._step(state, messages[index])
        return state
