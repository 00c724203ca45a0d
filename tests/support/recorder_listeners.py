"""Listeners for a proxy's events in tests: `Heard` in this process, and factories for a
recorder process (built in the child, so they must pickle)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dtl_notebook.proxy import Arrived, Event


class Heard:
    """A listener keeping every event, with a condition to wait on."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.changed = threading.Condition()

    def __call__(self, event: Event) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def wait_for(self, count: int, timeout: float = 20.0) -> list[Event]:
        """The events once `count` have arrived (readiness, not a fixed sleep)."""
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.events) >= count, timeout)
            return list(self.events)


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
