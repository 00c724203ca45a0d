"""A tool catalog that stays small: one line per group of tools instead of one per tool.

A group is the tool's namespace, or where it has none, its category: the first word of its name
that is not a common verb (`get_current_weather` → `current`, `weather_forecast_3` →
`weather`). Each line shows a rounded count and a summary, and both are chosen so that the text
stays byte-identical while tools are appended to groups that already exist:

- counts are rounded down to a fixed ladder ("10+ tools"), so the line changes only when a group
  crosses a step (5, 10, 25, 50, 100, ...), not on every added tool;
- the summary is the one-line text given for the group (if any), then the group's first tool
  in registration order as an example, which later additions never displace (a longer
  example list would grow while a group is small).

Adding a new group inserts one line (groups are sorted by name), so the prompt patch stays one
section either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dtl_notebook.agent.tools import ToolSpec

GROUPED_TITLE = "Deferred tools by group (search for a tool before you use it):"
COUNT_STEPS = (5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000)
_COMMON_VERBS = frozenset(
    "get list create update delete set add remove find search send read write check run convert "
    "calculate compute lookup look cancel book schedule fetch make do".split()
)


def tool_group(tool: ToolSpec) -> str:
    """The tool's group: its namespace, else the first non-verb word of its name."""
    if tool.namespace:
        return tool.namespace
    words = [w for w in tool.name.lower().replace("-", "_").split("_") if w]
    return next((w for w in words if w not in _COMMON_VERBS and not w.isdigit()), "other")


def rounded_count(count: int) -> str:
    """A tool count rounded down to the ladder: "a few tools", "5+ tools", "10+ tools", ..."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count!r}")
    step = max((s for s in COUNT_STEPS if s <= count), default=0)
    return f"{step:,}+ tools" if step else "a few tools"


def grouped_tool_catalog(
    tools: Iterable[ToolSpec],
    title: str = GROUPED_TITLE,
    summaries: Mapping[str, str] | None = None,
) -> str:
    """The catalog as one line per group, sorted by group name:
    `- weather (10+ tools): <summary>; e.g. get_current_weather`."""
    if summaries is not None and not isinstance(summaries, Mapping):
        raise TypeError(f"summaries must be a mapping of group to text, got {summaries!r}")
    for group, text in (summaries or {}).items():
        if not isinstance(text, str):
            raise TypeError(f"summaries[{group!r}] must be a string, got {text!r}")
    groups: dict[str, list[str]] = {}
    for tool in tools:
        groups.setdefault(tool_group(tool), []).append(tool.name)
    lines = [title]
    for group in sorted(groups):
        names = groups[group]
        given = (summaries or {}).get(group, "").strip()
        example = f"e.g. {names[0]}"
        summary = f"{given.splitlines()[0]}; {example}" if given else example
        lines.append(f"- {group} ({rounded_count(len(names))}): {summary}")
    return "\n".join(lines)
