"""A listener factory for a proxy's recorder process: built in the child, so it must pickle."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dtl_notebook.proxy import Arrived, Event


@dataclass(frozen=True)
class LinesTo:
    """Listeners writing `arrived|finished <number> <conversation>` per event to `path`."""

    path: Path

    def __call__(self) -> tuple[list[Callable[[Event], None]], Callable[[], None]]:
        file = self.path.open("a", encoding="utf-8")

        def hear(event: Event) -> None:
            kind = "arrived" if isinstance(event, Arrived) else "finished"
            file.write(f"{kind} {event.number} {event.conversation}\n")

        return [hear], file.close


@dataclass(frozen=True)
class Failing:
    """A factory that fails in the child: its recorder process never starts."""

    reason: str

    def __call__(self) -> tuple[list[Callable[[Event], None]], Callable[[], None]]:
        raise RuntimeError(self.reason)
