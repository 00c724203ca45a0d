"""A session's active tool set: what the model may call, changed by the host, a tool's run
or a search, each change recorded in the transcript (tool_records.py). Inside a tool's own run
(`execute`) a change is recorded on that tool's result instead (a marker, or
`non_append_change`).

A withdrawn tool stays withdrawn until it is re-added: no search finds it (the local
`tool_search`, whatever its engine) and no load activates it (a search's hits, a provider's own
search, a marker), and a call to it is refused. It is re-added by `redefine_tool`, by
registering it again, or by naming it in `set_active_tools`.

`tool_search` cannot be removed with `remove_tools`: it is how the model reaches every deferred
tool (a session without it is built with `search=None`). `set_active_tools` still replaces the
whole set, tool_search included, and records the removal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import InvalidArgumentError, UnknownToolError
from dtl_notebook.agent.tool_records import RecordsHost, ToolRecords
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec


class ToolSet:
    """A session's active tools, and every change of them recorded in its transcript."""

    def __init__(self, registry: ToolRegistry, host: RecordsHost) -> None:
        self.registry, self._host = registry, host
        self.records = ToolRecords(registry, host)
        self._active: list[str] = []
        # the declaration order frozen at the first removal (empty before): a withdrawn tool
        # keeps its place in the declared list, so request builders never reorder it
        self._declared_order: list[str] = []
        self._withdrawn: dict[str, int | None] = {}  # name -> its registry stamp then

    def copy_for(self, host: RecordsHost) -> ToolSet:
        """This tool set for a scratch copy of its session (`host`): the same registry, its
        own lists, a fold of its own."""
        twin = ToolSet(self.registry, host)
        twin.records = self.records.copy_for(host)
        twin._active, twin._withdrawn = list(self._active), dict(self._withdrawn)
        twin._declared_order = list(self._declared_order)
        return twin

    @property
    def activated(self) -> Sequence[str]:
        """The active names in activation order, unregistered ones included (shared: read,
        never edit; a tool run's before and after come from `run_state`)."""
        return self._active

    @property
    def frozen_order(self) -> list[str]:
        """The declaration order frozen at the first removal (empty before it)."""
        return list(self._declared_order)

    def run_state(self) -> tuple[list[str], dict[str, int | None]]:
        """What a failed tool run puts back (`restore_run_state`)."""
        return list(self._active), dict(self._withdrawn)

    def restore_run_state(self, state: tuple[list[str], dict[str, int | None]]) -> None:
        self._active, self._withdrawn = list(state[0]), dict(state[1])

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
        if not self._host.messages:  # still the initial set
            self._active = wanted
            return
        for name in wanted:  # named by the host: re-added
            self._withdrawn.pop(name, None)
        for name in self._active:
            if name not in wanted:
                self._withdrawn[name] = self.registry.stamp(name)
        if any(n not in wanted for n in self._active):
            self._declared_order = self.declared_order  # a removal: freeze the places first
            self.records.pin_withdrawn([n for n in self._active if n not in wanted])
        if self._host.running:  # recorded on the tool's result
            self._active = wanted
            return
        before = self.active_tools
        removed = [n for n in before if n not in wanted]
        # a name the transcript already offers (a marker just loaded it) is no addition
        added = [n for n in wanted if n not in before and not self.records.offered(n)]
        if not removed:  # an append: only names the transcript has seen change need recording
            added = [n for n in added if self.records.has_history(n)]
        self._active = wanted
        if removed or added:
            self.records.record(removed, [self.registry[n].spec() for n in added])

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
        self.records.restored()
        timeline, end = self.timeline(), len(self._host.messages)
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
        if changed and not self.records.first_change_adds(tool.name):
            # the initial definition is pinned by nothing else (a removal records no
            # definition): requests keep declaring it as it was
            self.records.pin_initial(old.spec(), replace=False)
        self.registry.register(tool, replace=True)
        if changed and tool.name in self._active:
            self.records.record([tool.name], [tool.spec()])
        return tool

    # -- the fold --------------------------------------------------------------------------
    def timeline(self) -> ToolTimeline:
        """The transcript's tool changes, folded up to its last message."""
        return self.records.timeline()

    def visible_tools(self, position: int | None = None) -> frozenset[str]:
        """The tools the model may call in message `position` (default: the next message)."""
        end = len(self._host.messages)
        position = end if position is None else position
        if isinstance(position, bool) or not isinstance(position, int):
            raise checks.type_error("position", "a message index", position)
        if not 0 <= position <= end:
            raise InvalidArgumentError(f"position: {position} is not a message index (0..{end})")
        return self.timeline().visible_at(position, self.active_tools)

    def declared_tools(self) -> dict[str, list[tuple[int, ToolSpec]]]:
        """Every definition ever declared: name -> [(message index, definition)]; index -1
        stands for the initial tools."""
        return self.records.declared(self.active_tools)

    def prompt_tools(self) -> dict[str, ToolSpec]:
        """What the prompt holds now: the visible tools with their current definitions."""
        return {t.name: t.spec() for t in self.tools()}
