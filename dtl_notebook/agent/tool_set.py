"""The session's active tool set and how its changes are recorded in the transcript.

An append outside a tool run records nothing, as before: the request builders declare the tool
in the prefix. Every other change is a neutral `SystemUpdate` (removals, additions, a
redefinition as both) anchored between turns: appended at once when no tool call is waiting
for its result, otherwise queued and appended right after the last result of the tool run, so
it never sits between a call and its result. Inside a tool's own run (`execute`) a change is
recorded on that tool's result instead (a marker, or `non_append_change`).

A tool that enters the registry after the first message (registered by hand, or by an MCP
server whose list changed) is recorded the same way, at the next turn boundary, as a
`SystemUpdate.tools_registered` (with the changes queued there, if any): a native search
declares it from that point on instead of among the tools registered at the start.

A withdrawn tool stays withdrawn until it is re-added: no search finds it (the local
`tool_search`, whatever its engine) and no load activates it (a search's hits, a provider's own
search, a marker), and a call to it is refused. It is re-added by `redefine_tool`, by
registering it again, or by naming it in `set_active_tools`.

`tool_search` cannot be removed with `remove_tools`: it is how the model reaches every deferred
tool (a session without it is built with `search=None`). `set_active_tools` still replaces the
whole set, tool_search included, and records the removal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import InvalidArgumentError, UnknownToolError
from dtl_notebook.agent.messages import Message, SystemUpdate, ToolCall
from dtl_notebook.agent.sections import diff_sections
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from dtl_notebook._reuse.transcript import Transcript


class ToolSetChanges:
    """The active-set half of `Session` (mixed in; the session supplies the transcript)."""

    registry: ToolRegistry
    _active: list[str]
    _running: bool
    _queued: list[SystemUpdate]
    _timeline: ToolTimeline
    _initial_specs: dict[str, ToolSpec]  # initial definitions replaced since (none recorded)
    # the declaration order frozen at the first removal (empty before): a withdrawn tool keeps
    # its place in the declared list, so request builders never reorder what was declared
    _declared_order: list[str]
    _registered_seen: int  # how many of the registry's arrivals are recorded (or initial)
    _withdrawn: dict[str, int | None]  # name -> its registry stamp when it was withdrawn

    if TYPE_CHECKING:

        @property
        def messages(self) -> Transcript[Message]: ...

        def pending_calls(self) -> list[ToolCall]: ...

        def held_sections(self) -> dict[str, str]: ...

        def desired_sections(self) -> dict[str, str]: ...

    @property
    def active_tools(self) -> list[str]:
        """Active tool names in activation order (unregistered ones drop out)."""
        return [t.name for t in self.registry.registered(self._active)]

    def tools(self) -> list[Tool]:
        """The active tools' current definitions, in activation order."""
        return self.registry.registered(self._active)

    def set_active_tools(self, names: Iterable[str]) -> None:
        """Replace the active set (order kept, duplicates dropped).

        Before the first message this only sets the initial tools. Later, a pure append records
        nothing (a reorder alone neither: the model may call the same tools). A removal is
        recorded as a `SystemUpdate`, together with every addition made in
        the same call; re-adding a tool removed earlier is recorded as an addition.
        """
        wanted = list(dict.fromkeys(checks.name_list(names, "names")))
        unknown = [n for n in wanted if n not in self.registry]
        if unknown:
            raise UnknownToolError(", ".join(unknown))
        if not self.messages:  # still the initial set
            self._active = wanted
            return
        for name in wanted:  # named by the host: re-added
            self._withdrawn.pop(name, None)
        for name in self._active:
            if name not in wanted:
                self._withdrawn[name] = self.registry.stamp(name)
        if any(n not in wanted for n in self._active):
            self._declared_order = self.declared_order  # a removal: freeze the places first
            self._pin_withdrawn([n for n in self._active if n not in wanted])
        if self._running:  # recorded on the tool's result
            self._active = wanted
            return
        before = self.active_tools
        removed = [n for n in before if n not in wanted]
        # a name the transcript already offers (a marker just loaded it) is no addition
        added = [n for n in wanted if n not in before and not self._offered(n)]
        if not removed:  # an append: only names the transcript has seen change need recording
            added = [n for n in added if self._has_history(n)]
        self._active = wanted
        if removed or added:
            self._record(removed, [self.registry[n].spec() for n in added])

    def activate(self, names: Iterable[str]) -> list[str]:
        """Append tools to the active set; returns the names that were newly added. A withdrawn
        tool is refused (re-add it first: `redefine_tool`, or `set_active_tools` naming it)."""
        wanted = list(dict.fromkeys(checks.name_list(names, "names")))
        self.check_loadable(wanted, "names")
        new = [n for n in wanted if n not in self._active]
        self.set_active_tools([*self._active, *new])
        return new

    def activate_found(self, names: Iterable[str]) -> list[str]:
        """Activate what a search found (the local `tool_search`, or a provider's own search):
        the registered tools that are not withdrawn; returns the names newly added."""
        withdrawn = self.withdrawn()
        found = checks.name_list(names, "names")
        return self.activate([n for n in found if n in self.registry and n not in withdrawn])

    def withdrawn(self) -> frozenset[str]:
        """The tools withdrawn from the conversation and not re-added since: out of every
        search and load, and a call to one is refused."""
        registry = self.registry
        return frozenset(
            n for n, at in self._withdrawn.items() if at is not None and registry.stamp(n) == at
        )

    def check_loadable(self, names: Iterable[str], field: str) -> None:
        """Refuse withdrawn tools among `names` (a load point, an activation)."""
        withdrawn = self.withdrawn()
        refused = [n for n in names if n in withdrawn]
        if refused:
            raise InvalidArgumentError(
                f"{field}: tool(s) {', '.join(map(repr, refused))} were withdrawn from this "
                "conversation and cannot be loaded; re-add them first (redefine_tool, "
                "registering them again, or set_active_tools naming them)"
            )

    def restore_active_tools(
        self, names: Iterable[str], declared_order: Iterable[str] = ()
    ) -> None:
        """Set the active set (and the frozen declaration order) as a saved (or rolled back)
        session had it, recording nothing; changes queued for the end of a tool run are
        dropped with the run."""
        wanted = list(dict.fromkeys(checks.name_list(names, "names")))
        order = list(dict.fromkeys(checks.name_list(declared_order, "declared_order")))
        for name in wanted:
            self.registry.get(name)
        self._active = wanted
        self._declared_order = order
        self._queued = []
        self._registered_seen = len(self.registry.arrivals)  # the restored state records them
        timeline, end = self.timeline(), len(self.messages)
        self._withdrawn = {}
        for name in timeline.names():  # withdrawn: its latest recorded change is a removal
            last = timeline.last_change(name, end)
            if last is not None and not last.added and name not in wanted:
                self._withdrawn[name] = self.registry.stamp(name)

    @property
    def declared_order(self) -> list[str]:
        """Every tool name in the order a request declares it: the active order until the
        first removal, then that order with later activations after it (a withdrawn tool
        keeps its place)."""
        frozen = self._declared_order
        if not frozen:
            return list(self._active)
        seen = set(frozen)
        return [*frozen, *(n for n in self._active if n not in seen)]

    def declared_order_at(self, count: int) -> list[str]:
        """The frozen declaration order as it stood after `count` messages: empty before the
        first removal, else the names of `declared_order` declared by then (shown from the
        start, or offered by a change before that point)."""
        timeline = self.timeline()
        removals = [e.position for e in timeline.log() if not e.added]
        if not removals or removals[0] >= count:
            return []
        active = self._active
        return [
            n
            for n in self._declared_order
            if timeline.visible(n, 0, active) or any(e.position < count for e in timeline.events(n))
        ]

    def remove_tools(self, names: Iterable[str]) -> list[str]:
        """Withdraw active tools from the model (they stay registered); returns their names.

        Recorded as a `SystemUpdate`. Until re-added (`redefine_tool`, registering it again, or
        `set_active_tools` naming it) no search finds a withdrawn tool, no load activates it, and
        a call to it gets an `is_error` result.
        """
        wanted = list(dict.fromkeys(checks.name_list(names, "names")))
        active = self.active_tools
        for i, name in enumerate(wanted):
            if name not in self.registry:
                raise UnknownToolError(name)
            if name == TOOL_SEARCH:
                raise InvalidArgumentError(
                    f"names[{i}]: {TOOL_SEARCH!r} cannot be removed: it is how the model finds "
                    "the deferred tools (build the session with search=None to go without it)"
                )
            if name not in active:
                raise InvalidArgumentError(
                    f"names[{i}]: tool {name!r} is not active, so there is nothing to remove "
                    f"(active: {', '.join(active) or 'none'})"
                )
        self.set_active_tools([n for n in self._active if n not in wanted])
        return wanted

    def redefine_tool(self, tool: Tool) -> Tool:
        """Replace a registered tool's definition (and implementation).

        For an active tool whose definition changed, records a removal plus an addition of the
        same name in one `SystemUpdate`; an identical definition only re-binds the
        implementation. A tool that is not active changes in the registry alone.
        """
        if not isinstance(tool, Tool):
            raise checks.type_error("tool", "a Tool", tool)
        if tool.name not in self.registry:
            raise UnknownToolError(tool.name, "registered (register it before redefining it)")
        old = self.registry[tool.name]
        changed = old.spec() != tool.spec()
        if changed and not self._first_change_adds(tool.name):
            # the initial definition is pinned by nothing else (a removal records no
            # definition): requests keep declaring it as it was
            self._initial_specs.setdefault(tool.name, old.spec())
        self.registry.register(tool, replace=True)
        if changed and tool.name in self._active:
            self._record([tool.name], [tool.spec()])
        return tool

    # -- the fold --------------------------------------------------------------------------
    def timeline(self) -> ToolTimeline:
        """The transcript's tool changes, folded up to its last message."""
        return self._timeline.update(self.messages)

    def visible_tools(self, position: int | None = None) -> frozenset[str]:
        """The tools the model may call in message `position` (default: the next message)."""
        end = len(self.messages)
        position = end if position is None else position
        if isinstance(position, bool) or not isinstance(position, int):
            raise checks.type_error("position", "a message index", position)
        if not 0 <= position <= end:
            raise InvalidArgumentError(f"position: {position} is not a message index (0..{end})")
        return self.timeline().visible_at(position, self.active_tools)

    def declared_tools(self) -> dict[str, list[tuple[int, ToolSpec]]]:
        """Every definition ever declared: name -> [(message index, definition)]; index -1
        stands for the initial tools."""

        def current(name: str) -> ToolSpec | None:
            return self.registry[name].spec() if name in self.registry else None

        return self.timeline().declared(self.active_tools, current, self._initial_specs.get)

    def prompt_tools(self) -> dict[str, ToolSpec]:
        """What the prompt holds now: the visible tools with their current definitions."""
        return {t.name: t.spec() for t in self.tools()}

    # -- recording -------------------------------------------------------------------------
    def _pin_withdrawn(self, names: list[str]) -> None:
        """Keep the definitions of withdrawn initial tools (a removal records none), so that
        requests keep declaring them once the registry drops them (an MCP server's list
        changed): a removal naming an undeclared tool is refused, and the prefix would change."""
        for name in names:
            if name in self.registry and not self._first_change_adds(name):
                self._initial_specs.setdefault(name, self.registry[name].spec())

    def _has_history(self, name: str) -> bool:
        if self.timeline().events(name):
            return True
        return any(name in u.tools_removed or u.snapshot(name) for u in self._queued)

    def _first_change_adds(self, name: str) -> bool:
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

    def _offered(self, name: str) -> bool:
        """Whether the latest recorded change of `name` (queued ones included) offers it."""
        for update in reversed(self._queued):
            if update.snapshot(name) is not None:
                return True
            if name in update.tools_removed:
                return False
        last = self.timeline().last_change(name, len(self.messages))
        return last is not None and last.added

    def _record(self, removed: list[str], added: list[ToolSpec]) -> None:
        self._queued.append(SystemUpdate(tools_removed=removed, tools_added=added))
        self._anchor_queued()

    def record_registrations(self) -> None:
        """Record the tools registered since the last turn boundary now, if no tool call is
        waiting for its result (otherwise at the end of the tool run)."""
        self._anchor_queued()

    def _mark_start(self) -> None:
        """Before the first message: every tool registered so far is an initial one."""
        if not self.messages:
            self._registered_seen = len(self.registry.arrivals)

    def _new_registrations(self) -> list[str]:
        """The tools that entered the registry since the last boundary and no message records
        yet (only the new arrivals are read, so a boundary costs what it adds)."""
        arrivals = self.registry.arrivals
        if self._registered_seen >= len(arrivals):
            return []
        new, self._registered_seen = arrivals[self._registered_seen :], len(arrivals)
        if not self.messages:
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

    def _anchor_queued(self) -> None:
        """Append the queued updates, and a record of the tools registered since the last
        boundary, if no tool call is waiting for its result."""
        arrived = self._registered_seen < len(self.registry.arrivals)
        if not (self._queued or arrived) or self._running or self.pending_calls():
            return
        registered = self._new_registrations()
        queued, self._queued = self._queued, []
        if registered:  # recorded before the changes: one of them may offer the new tool
            first = queued[0] if queued else SystemUpdate()
            queued[:1] = [first.model_copy(update={"tools_registered": registered})]
        if not queued:
            return
        patch = diff_sections(self.held_sections(), self.desired_sections())
        for i, update in enumerate(queued):
            if i == len(queued) - 1 and patch:
                update = update.model_copy(update={"sections": patch})
            self.messages.append(update)
