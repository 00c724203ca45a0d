"""The transcript list: append-only by contract, with a version that says when it was not.

Its items (a session's messages) are immutable once built. The list itself stays a plain list
to its users, but every mutation goes through here: an append, extend or `+=` keeps `rewrites`
as it is, anything else (replacing, removing, inserting, reordering) bumps it. A memo of
per-message work can therefore trust every message it saw while `rewrites` is unchanged and
the list is at least as long as when it looked.
"""

from __future__ import annotations

from typing import Any, SupportsIndex, TypeVar

Item = TypeVar("Item")


class Transcript(list[Item]):
    """A list of messages that counts its non-append changes in `rewrites`."""

    rewrites: int = 0

    def _rewritten(self) -> None:
        self.rewrites += 1

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._rewritten()

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        super().__delitem__(index)
        self._rewritten()

    def __imul__(self, times: SupportsIndex) -> Transcript[Item]:
        super().__imul__(times)
        self._rewritten()
        return self

    def insert(self, index: SupportsIndex, value: Item) -> None:
        super().insert(index, value)
        self._rewritten()

    def pop(self, index: SupportsIndex = -1) -> Item:
        value = super().pop(index)
        self._rewritten()
        return value

    def remove(self, value: Item) -> None:
        super().remove(value)
        self._rewritten()

    def clear(self) -> None:
        super().clear()
        self._rewritten()

    def reverse(self) -> None:
        super().reverse()
        self._rewritten()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._rewritten()
