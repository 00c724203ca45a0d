"""The Anthropic rules of a ``tools`` list the request types cannot express: unique names, not
all deferred, no breakpoint on a deferred tool (reported in that order).

A native-search body declares every registered tool: a few tools made anew each request (the
search tool, the shown ones), then the registry's shared read-only items. The rules are steps
of a scan that resumes over that shared catalog (`PrefixScan.scan_split`), so a turn reads only
the tools made for it; the facts of the two parts are then joined at the place each has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook.wire.problems import as_list
from dtl_notebook.wire.shape_errors import Path, fail, format_path

# https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool
ALL_DEFERRED_MESSAGE = (
    "At least one tool must have defer_loading=false. All tools cannot be deferred."
)


class _ToolFacts:
    """What the tool rules need from the tools scanned so far (indices within the list scanned)."""

    __slots__ = ("breakpoints", "counted", "deferred", "duplicate", "names")

    def __init__(self) -> None:
        self.names: dict[str, int] = {}  # name -> index of its first tool
        self.duplicate: tuple[int, str] | None = None  # the first tool named as an earlier one
        self.counted = self.deferred = 0  # tools (objects), deferred tools
        self.breakpoints: list[tuple[int, Any]] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> _ToolFacts:
        copied = _ToolFacts()  # made where a resumed scan steps on: the catalog grew
        copied.names, copied.breakpoints = dict(self.names), list(self.breakpoints)
        copied.duplicate, copied.counted, copied.deferred = (
            self.duplicate,
            self.counted,
            self.deferred,
        )
        return copied


def _tool_step(facts: _ToolFacts, i: int, tool: Any) -> None:
    if not isinstance(tool, dict):
        return
    facts.counted += 1
    name = tool.get("name")
    if isinstance(name, str):
        if name in facts.names:
            facts.duplicate = facts.duplicate or (i, name)
        else:
            facts.names[name] = i
    deferred = tool.get("defer_loading") is True
    facts.deferred += deferred
    if tool.get("cache_control") is not None:
        facts.breakpoints.append((i, tool["cache_control"]))


# resumed over the shared tool items (a native-search body declares every registered tool)
_TOOL_FACTS = PrefixScan(_ToolFacts, _tool_step, remembered=2)


def check_anthropic_tools(
    tools: Any, provider: str
) -> tuple[Callable[[str], bool], list[tuple[Path, Any]]]:
    """Unique names, not all deferred, no breakpoint on a deferred tool (in that order of
    report). Returns whether a name is a tool's, and the tools' breakpoints."""
    listed = as_list(tools)
    at, head, tail = _TOOL_FACTS.scan_split(listed)
    duplicates = [head.duplicate] if head.duplicate else []
    if tail.duplicate is not None:
        duplicates.append((at + tail.duplicate[0], tail.duplicate[1]))
    for name in head.names:  # a shared tool named as one before the shared ones
        later = tail.names.get(name)
        if later is not None:
            duplicates.append((at + later, name))
    if duplicates:
        i, name = min(duplicates)
        first = head.names[name] if name in head.names else at + tail.names[name]
        fail(
            provider,
            ("tools", i),
            f"duplicate tool name {name!r} (first at {format_path(('tools', first))})",
        )
    counted = head.counted + tail.counted
    if counted and head.deferred + tail.deferred == counted:  # an all-deferred request is rejected
        fail(provider, ("tools",), ALL_DEFERRED_MESSAGE)
    marks = _marks(at, head, tail)
    deferred = _deferred_marks(marks, listed)
    if deferred:  # a deferred tool is outside the cached prefix
        fail(
            provider,
            ("tools", deferred[0], "cache_control"),
            "a tool with defer_loading=true cannot have cache_control; "
            "put the breakpoint on a non-deferred tool",
        )
    return (lambda name: name in head.names or name in tail.names), marks


def tool_marks(tools: Any) -> list[tuple[Path, Any]]:
    """The tools' ``cache_control`` markers (path, control), from the scan the rules share."""
    return _marks(*_TOOL_FACTS.scan_split(as_list(tools)))


def deferred_marks(tools: Any) -> list[int]:
    """The indices of deferred tools carrying a marker, which the API refuses."""
    listed = as_list(tools)
    return _deferred_marks(tool_marks(listed), listed)


def _deferred_marks(marks: list[tuple[Path, Any]], tools: list[Any]) -> list[int]:
    indices = [path[1] for path, _ in marks if isinstance(path[1], int)]
    return [i for i in indices if tools[i].get("defer_loading") is True]


def _marks(at: int, head: _ToolFacts, tail: _ToolFacts) -> list[tuple[Path, Any]]:
    marks: list[tuple[Path, Any]] = [
        (("tools", i, "cache_control"), c) for i, c in head.breakpoints
    ]
    marks += [(("tools", at + i, "cache_control"), c) for i, c in tail.breakpoints]
    return marks
