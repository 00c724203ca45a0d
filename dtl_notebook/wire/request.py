"""What every adapter shares: the request object and the plan of prompt and load points.

`WireRequest.payload` is plain JSON at the top and wherever it is new, and read-only where it
is shared: the tool items a body declares and the history messages it repeats are the very
objects the previous request held (`_reuse.frozen`), which is what makes a new turn cost only
what it adds. A read-only part is read-only all the way down, reads and serializes as plain
JSON, and refuses an in-place edit with a TypeError saying how to edit a copy; `plain()` gives
the whole body as an editable plain copy. (Thawing every body instead would cost each request
a copy of its whole history, and freezing every body would make a freshly built part read-only
for no reason: shared means frozen, new means plain.)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dtl_notebook._reuse.body_text import body_text
from dtl_notebook._reuse.frozen import thaw
from dtl_notebook.agent.messages import (
    Message,
)
from dtl_notebook.agent.sections import render_section
from dtl_notebook.agent.split import DeferredSplit
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.validate import required_betas

if TYPE_CHECKING:
    from dtl_notebook.wire.tool_changes import ToolChanges

JSON = dict[str, Any]


LOAD_POINT_KINDS = ("load", "addition", "removal", "redefinition")


@dataclass(frozen=True)
class LoadPoint:
    """Where the tools the model sees change: after transcript message `message_index`, at
    `path`. `kind`: "load" (deferred tools enter at a marker or a search), or a change of its
    own: "addition", "removal" (`tools` withdrawn) or "redefinition" (`tools` redefined)."""

    message_index: int
    tools: list[str]
    path: str
    kind: str = "load"


@dataclass(repr=False)
class WireRequest:
    """One request body for one provider, and how it expressed the session's load points."""

    provider: str
    model: str
    payload: JSON
    mode: str
    load_points: list[LoadPoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    profile: ModelProfile | None = None
    betas: list[str] = field(default_factory=list)  # anthropic-beta names the body needs
    # versioned tool names the body declares -> the real names (calls are mapped back)
    aliases: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.betas:
            self.betas = required_betas(self.payload, self.provider)

    def __repr__(self) -> str:
        return (
            f"WireRequest(provider={self.provider}, model={self.model}, mode={self.mode}, "
            f"load_points={len(self.load_points)}, bytes={len(self.json())}"
            + (f", betas={self.betas}" if self.betas else "")
            + ")"
        )

    def plain(self) -> JSON:
        """An editable plain copy of the body (its shared parts are read-only)."""
        return thaw(self.payload)  # type: ignore[no-any-return]

    def json(self, indent: int | None = None) -> str:
        """The exact body text (stable across runs: key order is the build order)."""
        if indent is None:
            return body_text(self.payload)  # the same text, frozen items written once
        return json.dumps(self.payload, ensure_ascii=False, indent=indent)


@dataclass
class Plan:
    """The provider-neutral view every adapter serializes from."""

    messages: list[Message]
    split: DeferredSplit
    system: dict[str, str]
    first: int  # index of the first transcript message after the leading system updates
    loads: dict[int, list[ToolSpec]]  # message index -> definitions entering after it
    redefined: dict[str, ToolSpec]  # deferred tools whose current definition left the snapshot
    notes: list[str]
    order: list[str] = field(default_factory=list)  # active tool names, in activation order
    retired: dict[str, ToolSpec] = field(default_factory=dict)  # loaded, then deactivated
    held: dict[str, str] = field(default_factory=dict)  # every SystemUpdate applied, in order
    later_updates: int = 0  # SystemUpdates after `first`
    tool_changes: ToolChanges | None = None  # removals, additions, redefinitions (planning)
    # withdrawn and not re-added: no search may load them (Session.withdrawn)
    withdrawn: frozenset[str] = frozenset()
    _snapshots: dict[str, ToolSpec] | None = field(default=None, repr=False, compare=False)
    # the transcript planned and its `rewrites`, where builders may resume earlier work on it
    history: tuple[list[Message], int] | None = field(default=None, repr=False, compare=False)

    def loaded_snapshots(self) -> dict[str, ToolSpec]:
        """Each loaded tool's definition at its first load point (do not edit)."""
        if self._snapshots is None:
            self._snapshots = {}
            for specs in self.loads.values():
                for spec in specs:
                    self._snapshots.setdefault(spec.name, spec)
        return self._snapshots

    def loaded_snapshot(self, name: str) -> ToolSpec | None:
        """The definition `name` was loaded with (its first load point), if any."""
        return self.loaded_snapshots().get(name)

    def full_list(self) -> list[ToolSpec]:
        """Every active tool in activation order, so newly active tools come last."""
        tools = {t.name: t for t in [*self.split.immediate, *self.split.deferred.values()]}
        rank = {name: i for i, name in enumerate(self.order)}
        return sorted(tools.values(), key=lambda t: rank.get(t.name, len(rank)))


def render_patch(patch: dict[str, str | None]) -> str:
    """The text of a mid-conversation system update: changed sections, then removals."""
    parts = [
        f"<{name} removed/>"
        if text is None
        else render_section(name, text).strip()
        if name != "preamble"
        else f"<preamble>\n{text}\n</preamble>"
        for name, text in patch.items()
    ]
    return "<system_update>\n" + "\n\n".join(parts) + "\n</system_update>"


def stable_id(prefix: str, *parts: str) -> str:
    """A short deterministic id, so re-serialized history keeps the same bytes."""
    digest = hashlib.sha256(":".join(parts).encode()).hexdigest()[:16]
    return f"{prefix}{digest}"


def arguments_json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
