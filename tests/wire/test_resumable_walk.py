"""A builder's walk state is one dataclass whose copies are made from its fields, and a
`ResumableWalk` finds, restores, resumes and keeps it in one place.

A field added to a walk state is carried into the next walk without a line more: the copy a
checkpoint keeps holds it, independent of the builder's own, and a walk resumed over a grown
transcript goes on from its value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook._reuse import reset
from dtl_notebook._reuse.prefix import GrowingSet
from dtl_notebook._reuse.walks import Carried, ResumableWalk
from dtl_notebook.wire import anthropic, chat, planning, responses


class Transcript(list[str]):
    """A transcript the checkpoints can be kept for (weakly referenced, as a session's)."""


@dataclass
class FakePlan:
    """What a walk reads of a plan."""

    transcript: Transcript
    rewrites: int = 0
    first: int = 0
    loads: dict[int, list[Any]] = field(default_factory=dict)

    @property
    def history(self) -> tuple[list[Any], int]:
        return self.transcript, self.rewrites

    @property
    def messages(self) -> list[str]:
        return self.transcript


@dataclass
class Counts(Carried):
    KEY = ("style",)

    style: str
    seen: list[str] = field(default_factory=list)
    lengths: dict[str, int] = field(default_factory=dict)
    words: set[str] = field(default_factory=set)
    steps: int = 0


@dataclass
class MoreCounts(Counts):
    """The same state with a field added."""

    calls: GrowingSet = field(default_factory=GrowingSet)


class CountingWalk(ResumableWalk[Counts, FakePlan]):
    def __init__(self, plan: FakePlan, state: Counts, notes: list[str]) -> None:
        super().__init__(plan, state, notes)
        self.stepped: list[int] = []

    def step(self, index: int, message: str) -> None:
        self.stepped.append(index)
        state = self.state
        state.seen.append(message)
        state.lengths[message] = len(message)
        state.words.add(message)
        state.steps += 1
        if isinstance(state, MoreCounts):
            state.calls.add(message)
        self.out.append({"role": self.state.style, "content": [message]})
        if message.startswith("!"):
            self.notes.append(f"loud message {index}")


class PickyWalk(CountingWalk):
    """Resumes only from a state that saw no "stale" message."""

    def resumes(self, state: Counts) -> bool:
        return "stale" not in state.words


def _view(state: Counts) -> tuple[Any, ...]:
    """The state's fields as values (a GrowingSet compares by identity: its length here)."""
    calls = len(state.calls) if isinstance(state, MoreCounts) else None
    return (state.key(), state.seen, state.lengths, state.words, state.steps, calls)


def _walk(kind: type[CountingWalk], plan: FakePlan, state: Counts) -> CountingWalk:
    walk = kind(plan, state, [])
    walk.walk()
    return walk


def test_a_copy_copies_every_carried_field_and_shares_the_key() -> None:
    state = MoreCounts("user", ["a"], {"a": 1}, {"a"}, 1)
    state.calls.add("x")
    twin = state.copy()
    assert _view(twin) == _view(state) and twin.key() == ("user",)
    for name in ("seen", "lengths", "words", "calls"):
        assert getattr(twin, name) is not getattr(state, name)
    twin.seen.append("b")
    twin.lengths["b"] = 1
    twin.words.add("b")
    twin.calls.add("y")
    assert state.seen == ["a"] and state.lengths == {"a": 1} and state.words == {"a"}
    assert "y" not in state.calls and "y" in twin.calls and "x" in twin.calls


@given(st.lists(st.text(max_size=3), max_size=8), st.lists(st.text(max_size=3), max_size=8))
def test_a_walk_resumed_over_a_grown_transcript_equals_a_whole_walk(
    before: list[str], after: list[str]
) -> None:
    reset()
    transcript = Transcript(before)
    first = _walk(CountingWalk, FakePlan(transcript), MoreCounts("user"))
    assert first.stepped == list(range(len(before)))
    transcript.extend(after)
    resumed = _walk(CountingWalk, FakePlan(transcript), MoreCounts("user"))
    whole = _walk(CountingWalk, FakePlan(Transcript(transcript)), MoreCounts("user"))
    assert resumed.stepped == list(range(len(before), len(transcript)))  # the new ones only
    assert whole.stepped == list(range(len(transcript)))
    assert resumed.out == whole.out and resumed.notes == whole.notes
    assert _view(resumed.state) == _view(whole.state)  # every field carried, the added one too
    assert isinstance(resumed.state, MoreCounts) and isinstance(whole.state, MoreCounts)
    assert all(message in resumed.state.calls for message in transcript)


def test_a_walk_of_another_key_or_a_rewritten_transcript_starts_cold() -> None:
    reset()
    transcript = Transcript(["a", "b"])
    _walk(CountingWalk, FakePlan(transcript), Counts("user"))
    transcript.append("c")
    other = _walk(CountingWalk, FakePlan(transcript), Counts("system"))
    assert other.stepped == [0, 1, 2]
    rewritten = _walk(CountingWalk, FakePlan(transcript, rewrites=1), Counts("user"))
    assert rewritten.stepped == [0, 1, 2]


def test_a_state_the_walk_refuses_is_not_resumed() -> None:
    reset()
    transcript = Transcript(["stale"])
    _walk(PickyWalk, FakePlan(transcript), Counts("user"))
    transcript.append("fresh")
    assert _walk(PickyWalk, FakePlan(transcript), Counts("user")).stepped == [0, 1]
    transcript.append("newer")  # the last walk saw "stale" too
    assert _walk(PickyWalk, FakePlan(transcript), Counts("user")).stepped == [0, 1, 2]


def test_the_kept_state_is_not_the_one_the_builder_goes_on_with() -> None:
    reset()
    transcript = Transcript(["a"])
    first = _walk(CountingWalk, FakePlan(transcript), Counts("user"))
    first.state.seen.append("after the walk")  # e.g. a flush after the checkpoint is kept
    transcript.append("b")
    resumed = _walk(CountingWalk, FakePlan(transcript), Counts("user"))
    assert resumed.stepped == [1] and resumed.state.seen == ["a", "b"]


@pytest.mark.parametrize(
    "kind", [anthropic._Walked, responses._Walked, chat._Walked, planning._PlanWalk]
)
def test_every_builder_state_copies_each_field_it_carries(kind: type[Carried]) -> None:
    """The adapters' own walk states: every field but the key is copied, none shared."""
    names = [f.name for f in dataclasses.fields(kind)]
    key = {name: None for name in kind.KEY}
    state = kind(**key)
    twin = state.copy()
    carried = [name for name in names if name not in kind.KEY]
    assert carried and twin.key() == state.key()
    for name in carried:
        value = getattr(state, name)
        if isinstance(value, (list, dict, set)):
            assert getattr(twin, name) is not value and getattr(twin, name) == value, name
