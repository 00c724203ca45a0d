"""Which active tools belong in the top-level prefix and which enter at a load point."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dtl_notebook._reuse.prefix import GrowingSet
from dtl_notebook._reuse.walks import copied
from dtl_notebook.agent.checks import type_error
from dtl_notebook.agent.messages import AssistantMessage, ToolResultMessage
from dtl_notebook.agent.tools import ToolSpec


@dataclass(frozen=True)
class DeferredSplit:
    """`immediate` tools go in the prefix; `deferred` ones enter at their marker."""

    immediate: list[ToolSpec] = field(default_factory=list)
    deferred: dict[str, ToolSpec] = field(default_factory=dict)


@dataclass
class SplitFold:
    """The split's walk over a transcript, resumable from where it stopped (`seen`).

    A name marked in `added_tool_names` and not used in any earlier assistant message is
    deferred, and stays deferred. A call counts as a use only if the tool could receive it: a
    call answered by an `is_error` result does not, so every failed call id must be known
    (`failed`) before the calls are walked; a resumed walk is exact only while no new error
    result names a call already `counted`.
    """

    failed: set[str] = field(default_factory=set)  # call ids answered by an error result
    counted: GrowingSet = field(default_factory=GrowingSet)  # call ids counted as a use
    used: set[str] = field(default_factory=set)
    deferred: set[str] = field(default_factory=set)
    marked: dict[str, None] = field(default_factory=dict)  # marked names, in order
    seen: int = 0

    def copy(self) -> SplitFold:
        return copied(
            self,
            failed=set(self.failed),
            counted=copy.deepcopy(self.counted),  # shares all but its newest ids
            used=set(self.used),
            deferred=set(self.deferred),
            marked=dict(self.marked),
        )

    def __deepcopy__(self, memo: dict[int, object]) -> SplitFold:
        return self.copy()  # what a walk state's copy calls: its fields, not a generic walk

    def walk(self, messages: Sequence[object]) -> None:
        """Fold `messages[seen:]` in (their failed call ids must be in `failed` already)."""
        for message in messages[self.seen :]:
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    if call.id not in self.failed:
                        self.used.add(call.name)
                        self.counted.add(call.id)
            elif isinstance(message, ToolResultMessage) and message.added_tool_names:
                names = message.added_tool_names
                self.deferred.update(n for n in names if n not in self.used)
                self.marked.update(dict.fromkeys(names))
        self.seen = len(messages)

    def split(self, tools: Iterable[ToolSpec]) -> DeferredSplit:
        """The current tools split by the markers folded so far. Marked names no longer in
        `tools` are dropped. Both outputs keep the order of `tools`; a duplicate name keeps
        its first position and its last value."""
        current: dict[str, ToolSpec] = {}
        for tool in tools:
            current[tool.name] = tool
        deferred = self.deferred
        return DeferredSplit(
            immediate=[t for n, t in current.items() if n not in deferred],
            deferred={n: t for n, t in current.items() if n in deferred},
        )


def failed_calls(messages: Sequence[object], start: int = 0) -> set[str]:
    """The call ids answered by an error result in `messages[start:]`."""
    return {m.call_id for m in messages[start:] if isinstance(m, ToolResultMessage) and m.is_error}


def split_deferred_tools(tools: Iterable[ToolSpec], messages: Sequence[object]) -> DeferredSplit:
    """Split the current tools by the transcript's markers (see `SplitFold`): deferred tools
    enter at their marker, the others go in the prefix."""
    if isinstance(tools, str | bytes) or not isinstance(tools, Iterable):
        raise type_error("tools", "a list of Tool or ToolSpec", tools)
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise type_error("messages", "a list of messages", messages)
    tools = list(tools)
    strays = [i for i, t in enumerate(tools) if not isinstance(t, ToolSpec)]
    if strays:
        raise type_error(f"tools[{strays[0]}]", "a Tool or ToolSpec", tools[strays[0]])
    fold = SplitFold(failed=failed_calls(messages))
    fold.walk(messages)
    return fold.split(tools)
