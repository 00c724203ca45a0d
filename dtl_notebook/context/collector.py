"""The collector that renders a payload into segments, replaying what the previous rendering did.

The collector reuses work across requests: a payload is rendered unit by unit (the tool list,
the system prompt, each message or input item), and while every unit so far equals the one at
the same place in the previous payload rendered for the same provider, model and framing, its
segments, token counts and notes are replayed instead of rendered again. "Equal" is an exact
comparison with a copy taken when the unit was rendered (`_reuse.frozen.exact_copy`: numbers
and booleans must match in type too; a read-only part is its own copy), so an in-place edit of
anything is seen. After the first unit that differs, everything is rendered from scratch, as the
order-dependent state (cache block numbers, the first-turn flags) then stays correct.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dtl_notebook._reuse.frozen import (
    FrozenDict,
    FrozenList,
    exact_copy,
    identical_run,
    shared_prefix,
)
from dtl_notebook._reuse.registry import Memo, active, memoized
from dtl_notebook.context.segments import FRAMED_KINDS, Rendered, Segment
from dtl_notebook.context.tokens import encoding_for


@dataclass(frozen=True)
class _Unit:
    copy: Any  # exact copy of the unit's payload value
    segments_end: int
    notes_end: int
    block_after: int


@dataclass(frozen=True)
class _Rendering:
    units: list[_Unit]
    copies: list[Any]  # units[i].copy, for comparisons at C speed
    segments: list[Segment]
    notes: list[str]
    ancestry: tuple[tuple[list[Segment], int], ...] = ()


ANCESTRY = 3  # earlier renderings a rendering remembers sharing segments with
# the previous rendering per provider, model, framing and lineage (built here or parsed)
_PREVIOUS = Memo("renderings")


class Collector:
    """Collects segments in order, replaying unchanged units of the previous rendering."""

    def __init__(
        self,
        provider: str,
        model: str,
        framing: int = 0,
        built: bool = False,
        conversation: int | None = None,
    ) -> None:
        """`built`: the payload holds a builder's frozen parts (`_reuse.frozen.built_here`);
        it is compared with the previous rendering of its own lineage. `conversation`: what
        tells the conversation apart (`conversation_of`), so that two conversations rendered in
        turn each resume from their own last rendering."""
        self.counter = encoding_for(provider, model)
        self.model = model
        self.segments: list[Segment] = []
        self.notes: list[str] = []
        self.block = -1
        self.framing = framing  # tokens the provider adds around each framed segment
        self._key = (provider, model, framing, built, conversation)
        self._remembers = active()
        self._before: _Rendering | None = _PREVIOUS.get(self._key) if self._remembers else None
        self._units: list[_Unit] = []
        self._copies: list[Any] = []
        self._open: _Pending | None = None  # the unit being rendered
        self._matching = self._before is not None
        self._replayed = 0  # leading segments taken from the previous rendering, in order
        self._pristine = 0  # leading units that are the previous rendering's very units

    def unit(self, value: Any) -> bool:
        """Start the next unit (`value`: its part of the payload). True when it equals the
        previous rendering's unit at this place and its segments were replayed: skip it."""
        self._close()
        before, n = self._before, len(self._units)
        if self._matching and before is not None and n < len(before.units):
            known = before.units[n]
            if value is known.copy or value == known.copy:
                start = before.units[n - 1] if n else None
                self.segments.extend(
                    before.segments[start.segments_end if start else 0 : known.segments_end]
                )
                self.notes.extend(before.notes[start.notes_end if start else 0 : known.notes_end])
                self.block = known.block_after
                self._replayed = len(self.segments)
                known = self._kept_as(value, known)
                self._pristine += self._pristine == n and known is before.units[n]
                self._units.append(known)
                self._copies.append(known.copy)
                return True
        self._matching = False
        self._open = _Pending(exact_copy(value))
        return False

    def replay(self, values: list[Any], start: int = 0) -> int:
        """Replay `values[start:]` as far as they are the previous rendering's next units (frozen
        payload parts, compared by identity at C speed, or exactly where they are other objects:
        equal parts render the same segments); returns how many. The caller renders the next
        one through `unit`."""
        self._close()
        before, n = self._before, len(self._units)
        if not (self._matching and before is not None and start < len(values)):
            return 0
        if n >= len(before.copies) or values[start] is not before.copies[n]:
            return 0
        most = min(len(values) - start, len(before.copies) - n)
        mine = values if start == 0 and most == len(values) else values[start : start + most]
        copies = before.copies[n : n + most]
        count = shared_prefix(mine, copies)
        last = before.units[n + count - 1]
        self.block = last.block_after
        same = identical_run(mine, copies, count)
        whole = self._pristine == n and n + count == len(before.units)
        if whole and _PREVIOUS.take(self._key, before):
            # everything so far is the previous rendering's and all of it is replayed: its own
            # unit lists are taken over (it is no longer kept), those of equal copies replaced
            self._units, self._copies = before.units, before.copies
            self._remember_equal(mine, n, same, count)
            self.segments = before.segments[: last.segments_end]
            self.notes = before.notes[: last.notes_end]
            self._pristine = n + same
        elif self._pristine == n and same == count:
            # everything so far is the previous rendering's: its lists, sliced once
            self._units, self._copies = before.units[: n + count], before.copies[: n + count]
            self.segments = before.segments[: last.segments_end]
            self.notes = before.notes[: last.notes_end]
            self._pristine = n + count
        else:
            prior = before.units[n - 1] if n else None
            self.segments += before.segments[prior.segments_end if prior else 0 : last.segments_end]
            self.notes += before.notes[prior.notes_end if prior else 0 : last.notes_end]
            self._units += before.units[n : n + count]
            del copies[count:]
            self._copies += copies
            self._remember_equal(mine, n, same, count)
        self._replayed = len(self.segments)
        return count

    def _remember_equal(self, values: list[Any], n: int, same: int, count: int) -> None:
        """Units `n + same` to `n + count` were replayed for equal values that are other
        objects (`values[same:count]`): each remembered where it is frozen."""
        for i in range(same, count):
            unit = self._units[n + i] = self._kept_as(values[i], self._units[n + i])
            self._copies[n + i] = unit.copy

    @staticmethod
    def _kept_as(value: Any, unit: _Unit) -> _Unit:
        """`unit`, remembering `value` (equal to its copy) where it is frozen: later requests
        find it by identity."""
        if value is not unit.copy and type(value) in (FrozenDict, FrozenList):
            return replace(unit, copy=value)
        return unit

    def _close(self) -> None:
        if self._open is not None:
            self._units.append(
                _Unit(self._open.copy, len(self.segments), len(self.notes), self.block)
            )
            self._copies.append(self._open.copy)
        self._open = None

    def rendered(self) -> Rendered:
        """The segments as rendered, with what they took from earlier renderings."""
        self._close()
        before = self._before
        if before is None or not self._replayed:
            return Rendered(self.segments)
        inherited = tuple((lst, min(n, self._replayed)) for lst, n in before.ancestry)
        ancestry = ((before.segments, self._replayed), *inherited)[:ANCESTRY]
        return Rendered(self.segments, ancestry)

    def remember(self) -> None:
        """Keep this rendering for the next request of the same provider, model and framing."""
        self._close()
        if not self._remembers:
            return
        ancestry = self.rendered().ancestry
        rendering = _Rendering(self._units, self._copies, self.segments, self.notes, ancestry)
        _PREVIOUS.put(self._key, rendering)

    def add(
        self,
        kind: str,
        text: str,
        source: str,
        *,
        label: str = "",
        role: str | None = None,
        load_point: str | None = None,
        new_block: bool = True,
        tokens: int | None = None,
    ) -> None:
        """Append a segment; `tokens`: what the provider bills for it where that is not its
        text's count (an image, a PDF, a part the model never sees)."""
        if new_block:
            self.block += 1
        if tokens is None:
            tokens = _count(self.counter, text) if text else 0
        if kind in FRAMED_KINDS:
            tokens += self.framing
        self.segments.append(
            Segment(kind, text, tokens, source, label, role, load_point, self.block)
        )

    def hidden(self, label: str, tokens: int, source: str, why: str) -> None:
        """A fixed addition the request does not spell out (kind `hidden`, no cache block)."""
        self.segments.append(
            Segment("hidden", f"[{label}: {tokens} tokens, {why}]", tokens, source, label)
        )


@dataclass(frozen=True)
class _Pending:
    copy: Any


@memoized("token counts")
def _count(counter: Any, text: str) -> int:
    return int(counter.count(text))


def conversation_of(history: Any) -> int | None:
    """The identity of a body's first history item where it is read-only: the requests of one
    conversation built here share that object (a hint only; every unit is compared anyway)."""
    if isinstance(history, list) and history and type(history[0]) is FrozenDict:
        return id(history[0])
    return None
