"""Serialized history kept between requests: a builder resumes where the last one stopped.

A builder walks the transcript and appends payload messages. When the transcript is the same
list with the same `rewrites` (every message seen is still in place) and only grew, and
everything else the walk reads is the same (`key`: provider, profile, options, the load points
of the messages seen), the payload messages made from the messages seen are the same too. The
builder stores its state after the walk (`Checkpoint`) and the next build starts from a copy of
it. Payload messages kept here go into later bodies as they are, so nothing may edit one after
the walk: kept messages are frozen (`agent.frozen`; the one a builder may still extend is kept
as a private copy instead), and the breakpoint code copies a message and block before marking it.
Checks find a frozen message unchanged by identity (`wire.prefix.PrefixScan`).
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, cast

from dtl_notebook.agent.frozen import FrozenDict, freeze
from dtl_notebook.agent.messages import Message
from dtl_notebook.wire.common import Plan
from dtl_notebook.wire.shared import sharing

JSON = dict[str, Any]
State = TypeVar("State")
REMEMBERED_WALKS = 16  # per builder: transcripts x settings kept


@dataclass
class Checkpoint:
    """A builder's state after walking `plan.messages[:seen]` (before the final flushes)."""

    seen: int
    messages: list[JSON]  # with `open_last`, the last one is a private copy
    state: dict[str, Any] = field(default_factory=dict)  # builder-specific, copied on restore
    notes: list[str] = field(default_factory=list)  # notes the walk added
    frozen: int = 0  # leading messages known to be frozen already


@dataclass
class _Entry:
    transcript: weakref.ref[list[Message]]
    rewrites: int
    key: tuple[Any, ...]
    loads: list[tuple[int, list[Any]]]  # the load points seen, compared by identity
    checkpoint: Checkpoint


class Walks:
    """The checkpoints of one builder, one per transcript and key, bounded. `open_last`: the
    builder extends its last payload message's `content` (merging turns), so that message is
    kept and handed out as a private copy."""

    def __init__(self, open_last: bool = False) -> None:
        self._entries: dict[tuple[int, tuple[Any, ...]], _Entry] = {}
        self._lock = threading.Lock()
        self._open_last = open_last

    def find(self, plan: Plan, key: tuple[Any, ...]) -> Checkpoint | None:
        """The checkpoint to resume `plan` from, if one is valid for it."""
        if plan.history is None or not sharing():
            return None
        transcript, rewrites = plan.history
        entry = self._entries.get((id(transcript), key))
        if (
            entry is None
            or entry.transcript() is not transcript
            or entry.rewrites != rewrites
            or entry.checkpoint.seen > len(plan.messages)
            or not _same_loads(entry.loads, _loads_before(plan, entry.checkpoint.seen))
        ):
            return None
        checkpoint = entry.checkpoint
        messages = list(checkpoint.messages)
        if messages and self._open_last:
            last = messages[-1]
            messages[-1] = {**last, "content": list(last["content"])}
        state = {k: type(v)(v) for k, v in checkpoint.state.items()}
        closed = len(messages) - 1 if messages and self._open_last else len(messages)
        return Checkpoint(checkpoint.seen, messages, state, list(checkpoint.notes), closed)

    def keep(self, plan: Plan, key: tuple[Any, ...], checkpoint: Checkpoint) -> None:
        """Remember `checkpoint` for the next build of this transcript with this key.

        `checkpoint.messages` is the builder's own list, which becomes its payload: its messages
        are frozen in place (but for an open last one), so this body already holds the objects
        the next one repeats; the checkpoint keeps a copy of the list."""
        if plan.history is None or not sharing():
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
        checkpoint = replace(checkpoint, messages=kept, frozen=closed)
        entry = _Entry(
            weakref.ref(transcript), rewrites, key, _loads_before(plan, checkpoint.seen), checkpoint
        )
        with self._lock:
            if (
                len(self._entries) >= REMEMBERED_WALKS
                and (id(transcript), key) not in self._entries
            ):
                self._entries.clear()
            self._entries[(id(transcript), key)] = entry

    def forget(self) -> None:
        with self._lock:
            self._entries.clear()


def _loads_before(plan: Plan, seen: int) -> list[tuple[int, list[Any]]]:
    return sorted((i, specs) for i, specs in plan.loads.items() if i < seen)


def _same_loads(a: list[tuple[int, list[Any]]], b: list[tuple[int, list[Any]]]) -> bool:
    return len(a) == len(b) and all(i == j and x is y for (i, x), (j, y) in zip(a, b, strict=True))


@dataclass
class _Fold:
    transcript: weakref.ref[list[Message]]
    rewrites: int
    seen: int
    state: Any


class HistoryScan(Generic[State]):
    """A fold of `step(state, message)` over a plan's transcript messages, resumed where the
    last fold of the same transcript stopped (the same list with the same `rewrites`, grown):
    the new messages only. Returns the state, which later folds may start from: read it, never
    change it (a state is copied before it is stepped on)."""

    def __init__(self, start: Callable[[], State], step: Callable[[State, Message], None]) -> None:
        self._start, self._step = start, step
        self._folds: dict[int, _Fold] = {}
        self._lock = threading.Lock()

    def scan(self, plan: Plan) -> State:
        messages = plan.messages
        if plan.history is None or not sharing():
            return self._fold(self._start(), messages, 0)
        transcript, rewrites = plan.history
        found = self._folds.get(id(transcript))
        if (
            found is None
            or found.transcript() is not transcript
            or found.rewrites != rewrites
            or found.seen > len(messages)
        ):
            state = self._fold(self._start(), messages, 0)
        elif found.seen == len(messages):
            return cast(State, found.state)
        else:
            state = self._fold(copy.deepcopy(found.state), messages, found.seen)
        with self._lock:
            if len(self._folds) >= REMEMBERED_WALKS and id(transcript) not in self._folds:
                self._folds.clear()
            self._folds[id(transcript)] = _Fold(
                weakref.ref(transcript), rewrites, len(messages), state
            )
        return state

    def _fold(self, state: State, messages: list[Message], start: int) -> State:
        for index in range(start, len(messages)):
            self._step(state, messages[index])
        return state
