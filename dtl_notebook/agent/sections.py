"""System prompt sections: ordered, named, rendered, diffed and replayed from the transcript."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence

from dtl_notebook.agent.catalog_groups import GROUPED_TITLE, grouped_tool_catalog
from dtl_notebook.agent.checks import surrogate_problem, type_error
from dtl_notebook.agent.errors import InvalidArgumentError, SectionNameError
from dtl_notebook.agent.messages import SystemUpdate
from dtl_notebook.agent.tools import ToolSpec

CATALOG_TITLE = "Deferred tools (search before use):"

SECTION_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
Patch = dict[str, str | None]


def check_section_name(name: str) -> str:
    if not isinstance(name, str) or not SECTION_NAME.match(name):
        raise SectionNameError(
            f"invalid system prompt section name {name!r}: must match ^[a-z][a-z0-9_-]*$"
        )
    return name


class Sections(MutableMapping[str, str]):
    """Ordered named sections; `preamble` renders untagged, the others as <name>…</name>."""

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        self._data: dict[str, str] = {}
        pairs = items.items() if isinstance(items, Mapping) else items
        for name, text in pairs:
            self[name] = text

    def __setitem__(self, name: str, text: str) -> None:
        if not isinstance(text, str):
            raise type_error(f"section {name!r}", "a string", text)
        problem = surrogate_problem(text)
        if problem:
            raise InvalidArgumentError(f"section {name!r} {problem}")
        self._data[check_section_name(name)] = text

    def __getitem__(self, name: str) -> str:
        return self._data[name]

    def __delitem__(self, name: str) -> None:
        del self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Sections({self._data!r})"

    def copy(self) -> dict[str, str]:
        return dict(self._data)

    def render(self) -> str:
        return render_sections(self._data)


def render_section(name: str, text: str) -> str:
    return text if name == "preamble" else f"<{name}>\n{text}\n</{name}>"


def render_sections(sections: Mapping[str, str]) -> str:
    """The whole system prompt text; empty sections are skipped."""
    return "\n\n".join(render_section(n, t) for n, t in sections.items() if t)


def diff_sections(previous: Mapping[str, str], current: Mapping[str, str]) -> Patch | None:
    """Changed or new sections in current order, then removed ones as None; None when equal."""
    patch: Patch = {n: t for n, t in current.items() if previous.get(n) != t}
    patch.update({n: None for n in previous if n not in current})
    return patch or None


def apply_patch(sections: Mapping[str, str], patch: Mapping[str, str | None]) -> dict[str, str]:
    """Sections after a patch: changed text in place, new sections appended, None deletes."""
    result = dict(sections)
    for name, text in patch.items():
        if text is None:
            result.pop(name, None)
        else:
            result[name] = text
    return result


def replay_sections(messages: Sequence[object]) -> dict[str, str]:
    """What the model currently holds: every SystemUpdate in the transcript applied in order."""
    held: dict[str, str] = {}
    for message in messages:
        if isinstance(message, SystemUpdate):
            held = apply_patch(held, message.sections)
    return held


def tools_section(tools: Iterable[ToolSpec]) -> str:
    """The `tools` section: each active tool's prompt snippet and guidelines."""
    lines: list[str] = []
    for tool in tools:
        if tool.prompt_snippet:
            lines.append(f"- {tool.name}: {tool.prompt_snippet}")
        if tool.prompt_guidelines:
            lines.append(tool.prompt_guidelines)
    return "\n".join(lines)


def tool_catalog(
    tools: Iterable[ToolSpec],
    title: str | None = None,
    *,
    grouped: bool = False,
    summaries: Mapping[str, str] | None = None,
) -> str:
    """A stable list of searchable tools, sorted: one line per tool, or with `grouped=True`
    one line per group (see `grouped_tool_catalog`), which stays small on large registries."""
    if grouped:
        return grouped_tool_catalog(tools, title or GROUPED_TITLE, summaries)
    lines = [f"- {t.name}: {t.summary}" if t.summary else f"- {t.name}" for t in tools]
    return "\n".join([title or CATALOG_TITLE, *sorted(lines)])
