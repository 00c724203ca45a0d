"""The plan of a session, resumed from the previous one when the transcript only grew.

`plan` splits the tools and places every deferred definition at its first marker (see
`common.Plan`). Both passes walk the whole transcript, and the split is a decision over the
whole history: a later error result un-counts an earlier call. The memo keeps each pass's state
at the end of the transcript it saw. A transcript that is the same list, with the same
`rewrites` (so every message seen is still in place), the same active tools and at least as
many messages resumes both passes over the new messages only, unless a new message could
change an earlier decision: an error result for a call already counted as a use. (A new marker
defers a tool only if no earlier marker named it, or that marker would have deferred it
already, so earlier load points stand.) Then, and while the system prompt is still being set
up, it plans from scratch. Either way the plan is the one a cold pass gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dtl_notebook._reuse.registry import Memo, active
from dtl_notebook._reuse.walks import Carried
from dtl_notebook.agent.messages import AssistantMessage, Message, SystemUpdate, ToolResultMessage
from dtl_notebook.agent.sections import apply_patch
from dtl_notebook.agent.split import DeferredSplit, SplitFold, failed_calls
from dtl_notebook.agent.tools import ToolSpec, same_definition
from dtl_notebook.wire.request import Plan
from dtl_notebook.wire.tool_changes import ToolChanges, fold

if TYPE_CHECKING:
    from dtl_notebook.agent.session import Session


@dataclass
class _PlanWalk(Carried):
    """Both passes' state at the end of the messages walked so far: the split's own fold
    (agent/split.py) and the placing of deferred definitions (`copy()`: each field copied,
    the fold's `counted` sharing all but its newest ids)."""

    split: SplitFold = field(default_factory=SplitFold)
    seen: int = 0
    used: set[str] = field(default_factory=set)  # names called and not refused, for loads
    loaded: set[str] = field(default_factory=set)
    loads: dict[int, list[ToolSpec]] = field(default_factory=dict)
    retired: dict[str, ToolSpec] = field(default_factory=dict)
    updates: int = 0  # SystemUpdates seen

    def load_pass(self, messages: list[Message], split: DeferredSplit, active: set[str]) -> None:
        """Place deferred definitions at their first marker in `messages[seen:]`."""
        for index in range(self.seen, len(messages)):
            message = messages[index]
            if isinstance(message, AssistantMessage):
                # a refused call is no use, as in the split: the marker after it still loads
                failed = self.split.failed
                self.used.update(c.name for c in message.tool_calls if c.id not in failed)
            elif isinstance(message, SystemUpdate) and message.sections:
                self.updates += 1  # a tool-only update is not rendered yet: no text to count
            if not isinstance(message, ToolResultMessage) or not message.added_tool_names:
                continue
            specs = []
            for name in message.added_tool_names:
                if name in self.loaded:
                    continue
                snapshot = message.snapshot(name)
                if name in split.deferred:
                    spec = snapshot or split.deferred[name].spec()
                elif name not in active and name not in self.used and snapshot is not None:
                    spec = self.retired[name] = snapshot  # deactivated later: history keeps it
                else:
                    continue
                self.loaded.add(name)
                specs.append(spec)
            if specs:
                self.loads[index] = specs
        self.seen = len(messages)


@dataclass
class _Memo:
    rewrites: int
    tool_ids: tuple[int, ...]
    first: int
    system: dict[str, str]
    walk: _PlanWalk


# id(transcript) -> (refs to it and its tools, its last _Memo): gone with any of them, and
# holding none of them (a tool's implementation may hold the session, and so the transcript)
_PLANS = Memo("plans")


def plan(session: Session) -> Plan:
    """Split the tools and place every deferred definition at its first marker.

    Definitions come from the marker's snapshot. A tool deactivated after its load point keeps
    that load point (`Plan.retired`), so history never changes when the active set shrinks.
    """
    transcript = session.messages
    # a plain list's slice: one copy at C speed (list() of the Transcript subclass would step
    # an iterator over every message)
    messages = transcript[:]
    tools: list[ToolSpec] = list(session.tools())
    tool_ids = tuple(map(id, tools))
    rewrites: int | None = getattr(transcript, "rewrites", None) if active() else None
    entry: tuple[tuple[Any, ...], _Memo] | None = (
        _PLANS.get(id(transcript)) if rewrites is not None else None
    )
    refs = entry[0] if entry is not None and entry[0][0]() is transcript else None
    memo = entry[1] if entry is not None and refs is not None else None
    resumed = None
    if (
        memo is not None
        and memo.rewrites == rewrites
        and memo.tool_ids == tool_ids
        and memo.first < memo.walk.seen <= len(messages)
    ):
        resumed = _resume(memo, messages, tools)
    if resumed is None:
        first, system = _leading_system(messages)
        if not messages:
            system = session.desired_sections()
        walk = _PlanWalk(SplitFold(failed=failed_calls(messages)))
        walk.split.walk(messages)
        split = walk.split.split(tools)
        walk.load_pass(messages, split, {t.name for t in split.immediate} | set(split.deferred))
    else:
        split, walk = resumed
        first, system = memo.first, memo.system  # type: ignore[union-attr]
    if rewrites is not None:
        kept = _Memo(rewrites, tool_ids, first, system, walk)
        if refs is not None and memo is not None and memo.tool_ids == tool_ids:
            _PLANS.put_refs(id(transcript), refs, kept)  # the same objects: their refs again
        else:
            _PLANS.put_held(id(transcript), [transcript, *tools], kept)
    the_plan = _plan(messages, tools, split, dict(system), first, walk)
    the_plan.held = session.held_sections()  # resumed from its own last replay
    the_plan.tool_changes = _tool_changes(session, messages, [t.name for t in tools])
    the_plan.withdrawn = session.withdrawn()
    if rewrites is not None:
        the_plan.history = (transcript, rewrites)
    return the_plan


def _tool_changes(session: Session, messages: list[Message], active: list[str]) -> ToolChanges:
    registry = session.registry

    def definition(name: str) -> ToolSpec | None:
        if name not in registry:  # (the registry's get raises for an unknown name)
            return None
        return registry[name]  # a Tool is its own definition

    return fold(
        messages,
        session.timeline(),
        session.declared_order,
        active,  # the active tools' names, in activation order
        definition,
        session.tool_set.records.initial_specs.get,
        registry.__contains__,
        (registry.version, tuple(map(id, session.tool_set.records.initial_specs.values()))),
    )


def _resume(
    memo: _Memo, messages: list[Message], tools: list[ToolSpec]
) -> tuple[DeferredSplit, _PlanWalk] | None:
    """The split and walk over `messages` continued from `memo`, or None where a new message
    could change a decision about an earlier one."""
    walk = memo.walk.copy()
    new_failed = failed_calls(messages, walk.seen)
    if any(call_id in walk.split.counted for call_id in new_failed):
        return None  # an error result un-counts a call already counted as a use
    walk.split.failed |= new_failed
    walk.split.walk(messages)
    # a name deferred only now was named by no earlier marker (that marker would have deferred
    # it, as the error check above keeps every earlier use counted): earlier loads stand
    split = walk.split.split(tools)
    walk.load_pass(messages, split, {t.name for t in tools})
    return split, walk


def _leading_system(messages: list[Message]) -> tuple[int, dict[str, str]]:
    system: dict[str, str] = {}
    first = 0
    while first < len(messages) and isinstance(messages[first], SystemUpdate):
        system = apply_patch(system, messages[first].sections)  # type: ignore[union-attr]
        first += 1
    return first, system


def _plan(
    messages: list[Message],
    tools: list[ToolSpec],
    split: DeferredSplit,
    system: dict[str, str],
    first: int,
    walk: _PlanWalk,
) -> Plan:
    """The plan from the finished walk: redefinitions and the notes about them."""
    loads = dict(walk.loads)
    notes: list[str] = []
    snapshots: dict[str, ToolSpec] = {}
    for specs in loads.values():
        for spec in specs:
            snapshots.setdefault(spec.name, spec)
    redefined: dict[str, ToolSpec] = {}
    for name, tool in split.deferred.items():
        snapshot = snapshots.get(name)
        if snapshot is not None and not same_definition(snapshot, tool):
            redefined[name] = tool.spec()
            notes.append(
                f"tool {name!r} was redefined after its load point: history keeps the definition "
                "the model was given there (register the new one under a new name to load it)"
            )
    retired = dict(walk.retired)
    if retired:
        notes.append(
            f"tool(s) {list(retired)} were loaded earlier but are no longer active: history keeps "
            "their load points with the recorded definitions (a later call to one gets an error)"
        )
    current = {t.name for t in split.immediate} | set(split.deferred)
    removed = [n for n in walk.split.marked if n not in current and n not in retired]
    if removed:
        notes.append(
            f"tool(s) {removed} were loaded earlier but are no longer active: their load points "
            "are dropped, which rewrites history from there (cache miss)"
        )
    order = [t.name for t in tools]
    return Plan(
        messages,
        split,
        system,
        first,
        loads,
        redefined,
        notes,
        order,
        retired,
        later_updates=walk.updates - first,
    )
