"""How a session's tool changes are recorded in its transcript, and the fold that reads them.

An append outside a tool run records nothing: the request builders declare the tool in the
prefix. Every other change is a neutral `SystemUpdate` (removals, additions, a redefinition as
both) anchored between turns: appended at once when no tool call is waiting for its result,
otherwise queued and appended right after the last result of the tool run, so it never sits
between a call and its result.

A tool that enters the registry after the first message (registered by hand, or by an MCP
server whose list changed) is recorded the same way, at the next turn boundary, as a
`SystemUpdate.tools_registered` (with the changes queued there, if any): a native search
declares it from that point on instead of among the tools registered at the start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from dtl_notebook.agent.messages import Message, SystemUpdate
from dtl_notebook.agent.sections import Patch
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from dtl_notebook._reuse.transcript import Transcript


class RecordsHost(Protocol):
    """What the records read of the session that owns them."""

    @property
    def messages(self) -> Transcript[Message]: ...

    @property
    def running(self) -> bool: ...  # inside a tool's own run (execute)

    def between_turns(self) -> bool: ...

    def section_patch(self) -> Patch | None: ...


class ToolRecords:
    """The tool changes of one session: queued ones, recorded ones (folded), and the initial
    definitions that no message records."""

    def __init__(self, registry: ToolRegistry, host: RecordsHost) -> None:
        self.registry, self._host = registry, host
        self._queued: list[SystemUpdate] = []  # changes waiting for the end of a tool run
        self._timeline = ToolTimeline()
        # initial definitions replaced since (no message records them)
        self._initial_specs: dict[str, ToolSpec] = {}
        self._registered_seen = 0  # registry arrivals recorded (all before the first message)

    def copy_for(self, host: RecordsHost) -> ToolRecords:
        """These records for a scratch copy of the session (`host`): a fold of its own."""
        twin = ToolRecords(self.registry, host)
        twin._queued, twin._initial_specs = list(self._queued), dict(self._initial_specs)
        twin._registered_seen = self._registered_seen
        return twin

    @property
    def initial_specs(self) -> Mapping[str, ToolSpec]:
        """Initial definitions replaced since (no message records them; read, never edit)."""
        return self._initial_specs

    def pin_initial(self, spec: ToolSpec, replace: bool = True) -> None:
        """Keep an initial definition that no message records (a saved session's; with
        replace=False, only the first one kept for that name)."""
        if replace or spec.name not in self._initial_specs:
            self._initial_specs[spec.name] = spec

    def restored(self) -> None:
        """A restored (loaded, rolled back) state: nothing queued, every arrival recorded."""
        self._queued = []
        self._registered_seen = len(self.registry.arrivals)

    def timeline(self) -> ToolTimeline:
        """The transcript's tool changes, folded up to its last message."""
        return self._timeline.update(self._host.messages)

    def declared(self, active: Iterable[str]) -> dict[str, list[tuple[int, ToolSpec]]]:
        """Every definition ever declared: name -> [(message index, definition)]; index -1
        stands for the initial tools."""

        def current(name: str) -> ToolSpec | None:
            return self.registry[name].spec() if name in self.registry else None

        return self.timeline().declared(active, current, self._initial_specs.get)

    def pin_withdrawn(self, names: list[str]) -> None:
        """Keep the definitions of withdrawn initial tools (a removal records none), so that
        requests keep declaring them once the registry drops them (an MCP server's list
        changed): a removal naming an undeclared tool is refused, and the prefix would change."""
        for name in names:
            if name in self.registry and not self.first_change_adds(name):
                self.pin_initial(self.registry[name].spec(), replace=False)

    def has_history(self, name: str) -> bool:
        """Whether a change of `name` is recorded or queued."""
        if self.timeline().events(name):
            return True
        return any(name in u.tools_removed or u.snapshot(name) for u in self._queued)

    def first_change_adds(self, name: str) -> bool:
        """Whether the first recorded change of `name` offers it (so it was not an initial
        tool, and every definition it had is in a recorded change)."""
        events = self.timeline().events(name)
        if events:
            return events[0].added
        for update in self._queued:
            if name in update.tools_removed:
                return False
            if update.snapshot(name) is not None:
                return True
        return False

    def offered(self, name: str) -> bool:
        """Whether the latest recorded change of `name` (queued ones included) offers it."""
        for update in reversed(self._queued):
            if update.snapshot(name) is not None:
                return True
            if name in update.tools_removed:
                return False
        last = self.timeline().last_change(name, len(self._host.messages))
        return last is not None and last.added

    def record(self, removed: list[str], added: list[ToolSpec]) -> None:
        """Queue a change and anchor it where it may go."""
        self._queued.append(SystemUpdate(tools_removed=removed, tools_added=added))
        self.anchor_queued()

    def record_registrations(self) -> None:
        """Record the tools registered since the last turn boundary now, if no tool call is
        waiting for its result (otherwise at the end of the tool run)."""
        self.anchor_queued()

    def mark_start(self) -> None:
        """Before the first message: every tool registered so far is an initial one."""
        if not self._host.messages:
            self._registered_seen = len(self.registry.arrivals)

    def _new_registrations(self) -> list[str]:
        """The tools that entered the registry since the last boundary and no message records
        yet (only the new arrivals are read, so a boundary costs what it adds)."""
        arrivals = self.registry.arrivals
        if self._registered_seen >= len(arrivals):
            return []
        new, self._registered_seen = arrivals[self._registered_seen :], len(arrivals)
        if not self._host.messages:
            return []
        timeline = self.timeline()
        return [
            n
            for n in new
            if n in self.registry
            and n != TOOL_SEARCH
            and n not in timeline.registered
            and n not in self._initial_specs
            and not timeline.events(n)
        ]

    def anchor_queued(self) -> None:
        """Append the queued updates, and a record of the tools registered since the last
        boundary, if no tool call is waiting for its result."""
        arrived = self._registered_seen < len(self.registry.arrivals)
        if not (self._queued or arrived) or not self._host.between_turns():
            return
        registered = self._new_registrations()
        queued, self._queued = self._queued, []
        if registered:  # recorded before the changes: one of them may offer the new tool
            first = queued[0] if queued else SystemUpdate()
            queued[:1] = [first.model_copy(update={"tools_registered": registered})]
        if not queued:
            return
        patch = self._host.section_patch()
        for i, update in enumerate(queued):
            if i == len(queued) - 1 and patch:
                update = update.model_copy(update={"sections": patch})
            self._host.messages.append(update)
