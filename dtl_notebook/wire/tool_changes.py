"""The tool changes of a transcript, as the request builders serialize them.

A change is a `SystemUpdate` with `tools_removed` / `tools_added`, or a swap made inside a tool
run (`ToolResultMessage.non_append_change`); markers stay load points of their own. Whatever the
provider, what was declared stays declared: the initial tools keep their first definitions in
the prefix, in the order they were declared (a withdrawn tool keeps its place), and every change
is expressed where it happened. Each builder picks how (`tool_changes` option and the model's
profile):

- `"keep"` (the default): the longest prefix the provider can keep. A redefinition that cannot
  be expressed in place gets a versioned name (`name__v2`), mapped back to the real name when
  the model calls it (`WireRequest.aliases`);
- `"rewrite"`: today's full current list, for a definition the model must no longer see (a
  miss; refused where the provider answers a tools[] edit with an error).

A call to a withdrawn tool is refused locally by the session on every provider.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import cast

from dtl_notebook._reuse.registry import active
from dtl_notebook.agent.messages import Message, SystemUpdate, ToolResultMessage
from dtl_notebook.agent.tool_timeline import ToolTimeline
from dtl_notebook.agent.tools import ToolSpec, same_definition

TOOL_CHANGES = ("keep", "rewrite")
VERSION_MARK = "__v"
MAX_NAME = 64  # the shortest provider limit on a tool name (Anthropic, OpenAI)


@dataclass(frozen=True)
class Added:
    """A tool offered from a change on: its definition and the names it goes by."""

    name: str  # the real name
    spec: ToolSpec
    version: int  # 1 for the first definition ever declared under the name
    new: bool  # this definition was never declared before: it must be defined, not named
    redefinition: bool  # the same change withdrew another definition of the name
    alias: str  # the versioned name where a redefinition cannot be expressed in place
    latest: bool  # the latest definition declared under the name: a reference to it holds


@dataclass(frozen=True)
class Change:
    """One change after message `index`."""

    index: int
    removed: tuple[str, ...]  # withdrawn names (not the redefined ones)
    added: tuple[Added, ...]
    # the wire names withdrawn with versioned names: the removed tools' and the redefined
    # tools' previous versions
    withdrawn_aliased: tuple[str, ...]

    @property
    def kind(self) -> str:
        """The load point kind: "redefinition", "removal" or "addition"."""
        if any(a.redefinition for a in self.added):
            return "redefinition"
        return "removal" if self.removed else "addition"

    @property
    def names(self) -> list[str]:
        return [*self.removed, *(a.name for a in self.added)]


@dataclass
class ToolChanges:
    """Every change of one transcript, and what a request declares from the start."""

    changes: dict[int, Change] = field(default_factory=dict)
    initial: list[ToolSpec] = field(default_factory=list)  # declared order, first definitions
    visible: frozenset[str] = frozenset()  # what the model may call after the last message
    withdrawn: list[str] = field(default_factory=list)  # declared once, not visible now
    aliases: dict[str, str] = field(default_factory=dict)  # versioned name -> real name
    first: dict[str, ToolSpec] = field(default_factory=dict)  # each name's first definition
    order: list[str] = field(default_factory=list)  # the declaration order
    # every declaration after the start, in transcript order: the name it is declared under
    # (versioned for a redefinition) and its definition; markers' loads included
    later: list[tuple[str, ToolSpec]] = field(default_factory=list)
    # the names that entered the registry after the start (`SystemUpdate.tools_registered`)
    registered: frozenset[str] = frozenset()
    # real name -> [(message index from which on, the versioned name in force)]
    _versions_at: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def fresh(self) -> list[Added]:
        """Every definition a change declares for the first time, in order."""
        return [a for c in self.changes.values() for a in c.added if a.new]

    def declared_list(self) -> list[ToolSpec]:
        """Every definition ever declared, for a provider without deferral: the initial tools
        in declaration order, then each later one where the transcript first declared it (a
        redefinition under its versioned name), so the list only grows at its end."""
        specs = list(self.initial)
        seen = {s.name for s in specs}
        for name, spec in self.later:
            if name not in seen:
                seen.add(name)
                specs.append(spec if spec.name == name else spec.model_copy(update={"name": name}))
        return specs

    def wire_name(self, name: str, position: int) -> str:
        """The versioned name `name` goes by in message `position` (itself before any)."""
        wire = name
        for start, alias in self._versions_at.get(name, ()):
            if start > position:
                break
            wire = alias
        return wire


def versioned(name: str, version: int, taken: Callable[[str], bool]) -> str:
    """`name__v<version>`, shortened to the name limit, and not a registered name."""
    while True:
        suffix = f"{VERSION_MARK}{version}"
        alias = name[: MAX_NAME - len(suffix)] + suffix
        if not taken(alias):
            return alias
        version += 1


def fold(
    messages: list[Message],
    timeline: ToolTimeline,
    order: Iterable[str],
    current: list[str],
    definition: Callable[[str], ToolSpec | None],
    initial: Callable[[str], ToolSpec | None],
    taken: Callable[[str], bool],
    stamp: Hashable = None,
) -> ToolChanges:
    """The transcript's changes. `timeline` is the fold of the transcript `messages` is a
    copy of, already up to date (the session's, resumed over what grew); `order` is the
    declaration order, `current` the active names, `definition(name)` a registered definition,
    `initial(name)` an initial tool's first definition where it was replaced since, `taken(name)`
    whether a name is registered. `stamp` changes whenever what those three answer may have
    changed (a registry version): with it, a turn that changed no tool reuses the last answer
    for this timeline (a turn costs what it adds). The result is shared: read it, never edit."""
    if stamp is None or not active():
        return _fold(messages, timeline, order, current, definition, initial, taken)
    order = tuple(order)
    key = (timeline.version, order, tuple(current), stamp)
    kept = timeline.derived.get(DERIVED)
    if kept is not None and kept[0] == key:
        return cast(ToolChanges, kept[1])
    out = _fold(messages, timeline, order, current, definition, initial, taken)
    # kept by the timeline, not in a process-wide memo: the definitions may be tools whose
    # implementations hold the session, and so the timeline (a memo would keep both alive)
    timeline.derived[DERIVED] = (key, out)
    return out


DERIVED = "tool changes"


def _fold(
    messages: list[Message],
    timeline: ToolTimeline,
    order: Iterable[str],
    current: list[str],
    definition: Callable[[str], ToolSpec | None],
    initial: Callable[[str], ToolSpec | None],
    taken: Callable[[str], bool],
) -> ToolChanges:
    out = ToolChanges(order=list(dict.fromkeys(order)))
    current_set = set(current)
    versions: dict[str, list[ToolSpec]] = {}
    for name in out.order:
        if name in versions or not timeline.visible(name, 0, current_set):
            continue
        spec = initial(name) or definition(name)
        if spec is not None:
            versions[name] = [spec]
            out.initial.append(spec)
    events = timeline.log()
    wire: dict[str, str] = {n: n for n in versions}  # the versioned name in force
    last: dict[str, int] = dict.fromkeys(versions, 1)  # the version declared last, by name
    for event in events:  # message order
        message = messages[event.position]
        change_event = isinstance(message, SystemUpdate) or (
            isinstance(message, ToolResultMessage)
            and message.non_append_change is not None
            and event.name not in (message.added_tool_names or [])
        )
        spec = (event.definition or definition(event.name)) if event.added else None
        if not change_event:  # a marker: the definition it loaded is a declared version
            if spec is not None and event.name not in versions:
                versions[event.name] = [spec]
                wire[event.name] = event.name
                last[event.name] = 1
                out.later.append((event.name, spec))
            continue
        entry = out.changes.get(event.position)
        if entry is None:
            entry = out.changes[event.position] = Change(event.position, (), (), ())
        if not event.added:
            redefined = isinstance(message, SystemUpdate) and event.name in message.redefined
            entry = Change(
                entry.index,
                entry.removed if redefined else (*entry.removed, event.name),
                entry.added,
                (*entry.withdrawn_aliased, wire.get(event.name, event.name)),
            )
        elif spec is not None:
            known = versions.setdefault(event.name, [])
            number = next(
                (i + 1 for i, v in enumerate(known) if same_definition(v, spec)), len(known) + 1
            )
            new = number > len(known)
            if new:
                known.append(spec)
                named = event.name if number == 1 else versioned(event.name, number, taken)
                out.later.append((named, spec))
            latest = last.get(event.name) == number
            last[event.name] = number
            alias = event.name if number == 1 else versioned(event.name, number, taken)
            if number > 1:
                out.aliases[alias] = event.name
            wire[event.name] = alias
            out._versions_at.setdefault(event.name, []).append((event.position, alias))
            redefinition = event.name in entry.removed or any(
                event.name == w or out.aliases.get(w) == event.name for w in entry.withdrawn_aliased
            )
            added = Added(event.name, spec, number, new, redefinition, alias, latest)
            entry = Change(
                entry.index, entry.removed, (*entry.added, added), entry.withdrawn_aliased
            )
        out.changes[event.position] = entry
    out.changes = {i: c for i, c in out.changes.items() if c.removed or c.added}
    out.first = {n: v[0] for n, v in versions.items() if v}
    out.registered = frozenset(timeline.registered)
    out.visible = timeline.visible_at(len(messages), current_set)
    out.withdrawn = [n for n in versions if n not in out.visible]
    return out


WITHDRAWN_LINE = "Tools no longer available from here on (calls to them will be rejected): "


OFFERED_LINE = "Tools available from here on: "


def withdrawn_in(text: str, line_start: str = WITHDRAWN_LINE) -> list[str]:
    """The tool names a notice written by `notice` withdraws (with `OFFERED_LINE`: offers
    again); none in any other text."""
    if "<tool_changes>" not in text:
        return []
    names: list[str] = []
    for line in text.splitlines():
        if line.startswith(line_start):
            names += [n.strip() for n in line.removeprefix(line_start).split(",")]
    return [n for n in names if n]


def notice(change: Change, aliased: bool) -> list[str]:
    """The lines that tell the model about a change in text (soft removal): what was
    withdrawn, what is offered again, and under which name a redefinition is called."""
    lines = []
    if change.removed:
        lines.append(WITHDRAWN_LINE + ", ".join(change.removed))
    again = [a.name for a in change.added if not a.redefinition]
    if again:
        lines.append(OFFERED_LINE + ", ".join(again))
    redefined = [a for a in change.added if a.redefinition]
    for added in redefined:
        if aliased and added.alias != added.name:
            lines.append(
                f"Tool {added.name} is redefined: call it as {added.alias} from here on "
                f"(the definition of {added.alias} replaces that of {added.name})"
            )
        else:
            lines.append(f"Tool {added.name} is redefined from here on")
    return lines


def update_text(patch: str | None, lines: list[str]) -> str:
    """One `<system_update>` text: the sections patch, then the tool lines."""
    if not lines:
        return patch or ""
    tools = "<tool_changes>\n" + "\n".join(lines) + "\n</tool_changes>"
    if not patch:
        return "<system_update>\n" + tools + "\n</system_update>"
    return patch.removesuffix("\n</system_update>") + "\n\n" + tools + "\n</system_update>"
