"""Which active tools belong in the top-level prefix and which enter at a load point."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dtl_notebook.agent.checks import type_error
from dtl_notebook.agent.messages import AssistantMessage, ToolResultMessage
from dtl_notebook.agent.tools import ToolSpec


@dataclass(frozen=True)
class DeferredSplit:
    """`immediate` tools go in the prefix; `deferred` ones enter at their marker."""

    immediate: list[ToolSpec] = field(default_factory=list)
    deferred: dict[str, ToolSpec] = field(default_factory=dict)


def split_deferred_tools(tools: Iterable[ToolSpec], messages: Sequence[object]) -> DeferredSplit:
    """Split the current tools by the transcript's markers.

    A name marked in `added_tool_names` and not used in any earlier assistant message is
    deferred, and stays deferred. A call counts as a use only if the tool could receive it:
    a call answered by an `is_error` result (an unknown or inactive tool, bad arguments) does
    not, so a tool that failed before it was loaded still enters at its load point. Marked
    names no longer in `tools` are dropped. Both outputs keep the order of `tools`; a
    duplicate name keeps its first position and its last value.
    """
    if isinstance(tools, str | bytes) or not isinstance(tools, Iterable):
        raise type_error("tools", "a list of Tool or ToolSpec", tools)
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise type_error("messages", "a list of messages", messages)
    tools = list(tools)
    strays = [i for i, t in enumerate(tools) if not isinstance(t, ToolSpec)]
    if strays:
        raise type_error(f"tools[{strays[0]}]", "a Tool or ToolSpec", tools[strays[0]])
    current: dict[str, ToolSpec] = {}
    for tool in tools:
        current[tool.name] = tool
    failed = {m.call_id for m in messages if isinstance(m, ToolResultMessage) and m.is_error}
    used: set[str] = set()
    deferred_names: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            used.update(call.name for call in message.tool_calls if call.id not in failed)
        elif isinstance(message, ToolResultMessage) and message.added_tool_names:
            deferred_names.update(n for n in message.added_tool_names if n not in used)
    return DeferredSplit(
        immediate=[t for n, t in current.items() if n not in deferred_names],
        deferred={n: t for n, t in current.items() if n in deferred_names},
    )
