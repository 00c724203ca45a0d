"""The tools the model may call at each point of a transcript, folded from its tool changes.

Three kinds of message change the set, each from the message after it on:
- a `SystemUpdate` with `tools_removed` / `tools_added` (removals first: a name in both is a
  redefinition);
- a `ToolResultMessage` marker (`added_tool_names`, with `added_tools` snapshots);
- a `ToolResultMessage.non_append_change` (a swap made inside a tool run).

A `SystemUpdate.tools_registered` changes no visibility: it records where a tool entered the
registry after the start (`registered`).

A tool with no change recorded anywhere is visible from the start if it is active now (it
entered by an append outside a tool run, which records nothing: the request builders declare it
in the prefix). A tool whose first change is a removal was visible from the start.

The fold resumes from where it stopped while the transcript only grew (`Transcript.rewrites`
unchanged), so each new message costs what it adds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dtl_notebook.agent.messages import Message, SystemUpdate, ToolResultMessage
from dtl_notebook.agent.tools import ToolSpec

START = -1
"""The position of a definition declared before the first message (the initial tools)."""


@dataclass(frozen=True)
class ToolEvent:
    """One tool entering (`added`) or leaving the model's view after message `position`."""

    position: int
    name: str
    added: bool
    definition: ToolSpec | None = None  # the snapshot of an addition, where one was recorded


def message_events(message: Message, position: int) -> list[ToolEvent]:
    """The tool changes one message records, removals before additions."""
    if isinstance(message, SystemUpdate):
        return [ToolEvent(position, n, False) for n in message.tools_removed] + [
            ToolEvent(position, t.name, True, t) for t in message.tools_added
        ]
    if not isinstance(message, ToolResultMessage):
        return []
    events = [
        ToolEvent(position, n, True, message.snapshot(n)) for n in message.added_tool_names or []
    ]
    change = message.non_append_change
    if change is not None:
        events += [ToolEvent(position, n, False) for n in change.removed]
        events += [ToolEvent(position, n, True) for n in change.added]
    return events


class ToolTimeline:
    """Every tool change of one transcript, by tool name, folded forward."""

    def __init__(self) -> None:
        self._source: object = None
        self._rewrites = 0
        self._seen = 0
        self._events: dict[str, list[ToolEvent]] = {}
        self._positions: dict[str, list[int]] = {}
        self._log: list[ToolEvent] = []  # every event, in transcript order
        self._registered: dict[str, int] = {}  # name -> where it entered the registry
        self._entered: dict[str, int] = {}  # name -> the result whose marker first loaded it
        self.version = 0  # bumped whenever the fold changes
        # what layers above derived from this fold, each stamped with the version it read
        self.derived: dict[str, tuple[object, object]] = {}

    def update(self, messages: Sequence[Message]) -> ToolTimeline:
        """Fold the messages not seen yet (all of them if the transcript was rewritten)."""
        rewrites = getattr(messages, "rewrites", 0)
        grown = self._source is messages and self._rewrites == rewrites
        if not grown or self._seen > len(messages):
            if self._log:
                self.version += 1
            if self._registered:
                self.version += 1
            self._events, self._positions, self._log, self._seen = {}, {}, [], 0
            self._registered, self._entered = {}, {}
        for position in range(self._seen, len(messages)):
            message = messages[position]
            if isinstance(message, SystemUpdate) and message.tools_registered:
                for name in message.tools_registered:
                    self._registered.setdefault(name, position)
                self.version += 1
            if isinstance(message, ToolResultMessage):
                for name in message.added_tool_names or ():
                    self._entered.setdefault(name, position)
            for event in message_events(message, position):
                self._events.setdefault(event.name, []).append(event)
                self._positions.setdefault(event.name, []).append(event.position)
                self._log.append(event)
                self.version += 1
        self._source, self._rewrites, self._seen = messages, rewrites, len(messages)
        return self

    @property
    def registered(self) -> Mapping[str, int]:
        """The names that entered the registry after the start -> the message recording it
        (shared: read, never edit)."""
        return self._registered

    @property
    def entered(self) -> Mapping[str, int]:
        """Each tool loaded at a marker -> the index of the tool result after which it entered
        (its first marker; shared: read, never edit)."""
        return self._entered

    def names(self) -> list[str]:
        """Every name some message changed, in order of its first change."""
        return list(self._events)

    def events(self, name: str) -> list[ToolEvent]:
        return list(self._events.get(name, ()))

    def log(self) -> list[ToolEvent]:
        """Every change, in transcript order (removals before additions within a message)."""
        return list(self._log)

    def last_change(self, name: str, position: int) -> ToolEvent | None:
        """The latest change of `name` recorded before message `position`."""
        count = bisect_left(self._positions.get(name, []), position)
        return self._events[name][count - 1] if count else None

    def visible(self, name: str, position: int, current: Collection[str]) -> bool:
        """Whether the model may call `name` in message `position`; `current` is the active set
        now (it decides tools no message mentions)."""
        last = self.last_change(name, position)
        if last is not None:
            return last.added
        events = self._events.get(name)
        return not events[0].added if events else name in current

    def visible_at(self, position: int, current: Iterable[str]) -> frozenset[str]:
        """The names the model may call in message `position` (after everything before it)."""
        current = set(current)
        names = current | set(self._events)
        return frozenset(n for n in names if self.visible(n, position, current))

    def declared(
        self,
        current: Iterable[str],
        definition: Callable[[str], ToolSpec | None],
        initial: Callable[[str], ToolSpec | None] | None = None,
    ) -> dict[str, list[tuple[int, ToolSpec]]]:
        """Every definition ever declared: name -> [(position, definition)], in order.

        `definition(name)` supplies what a change recorded without a snapshot meant (the
        registry's definition); `initial(name)` an initial tool's first definition where it
        differs from that. Position START stands for the initial tools.
        """
        current = list(current)
        out: dict[str, list[tuple[int, ToolSpec]]] = {}
        for name in [*current, *(n for n in self._events if n not in current)]:
            entries: list[tuple[int, ToolSpec]] = []
            if self.visible(name, 0, current):  # no change precedes message 0: the initial state
                spec = (initial(name) if initial else None) or definition(name)
                if spec is not None:
                    entries.append((START, spec))
            for event in self._events.get(name, ()):
                spec = (event.definition or definition(name)) if event.added else None
                if spec is not None:
                    entries.append((event.position, spec))
            if entries:
                out[name] = entries
        return out
