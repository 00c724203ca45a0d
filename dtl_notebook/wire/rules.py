"""Provider rules the request types cannot express, each written once.

A dangling or mixed
``tool_reference``, unpaired call ids, breakpoint limits and TTL order; the rules of the
``tools`` list are in `tool_rules`. The breakpoint scan (`cache_marks`) and its rules serve the
validator, the cache lint and the cache analyzer alike.

A rule over the message list is a step of a resumable scan (`_reuse.prefix.PrefixScan`): the
step records the first :class:`~.problems.Problem` (its JSON path and message) in the scan's
facts, and the error raised is that problem. A request that repeats the previous one's frozen
messages resumes after them, so a turn costs only the messages it adds, and the verdict is the
one a scan of the whole list gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook.wire.cache_limits import MAX_CACHE_BREAKPOINTS
from dtl_notebook.wire.problems import Problem, as_list, dict_items, raise_first
from dtl_notebook.wire.shape_errors import Path, fail, format_path, short
from dtl_notebook.wire.tool_rules import check_anthropic_tools, tool_marks

TOOL_REFERENCE = "tool_reference"
REFERENCES_ONLY_RULE = (
    "a tool_result whose content carries tool_reference blocks holds only tool_reference "
    "blocks; the ordinary result goes into sibling blocks after the tool_result"
)


def is_kimi_carrier(msg: Any) -> bool:
    """Kimi's ``{"role": "system", "tools": [...]}`` message (tools loaded mid-conversation; not
    on https://platform.moonshot.ai/docs/api/tool-use, which shows top-level tools only)."""
    return (
        isinstance(msg, dict)
        and msg.get("role") == "system"
        and "tools" in msg
        and "content" not in msg
    )


# -- the references-only rule ------------------------------------------------------------------
# Anthropic documents a tool search result as a tool_result holding only tool_reference blocks
# (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool, "Custom tool
# search implementation"); the builder, the validator and the emulator all go through here.


def tool_reference(name: str) -> dict[str, Any]:
    """The block that loads the deferred tool `name` where it stands."""
    return {"type": TOOL_REFERENCE, "tool_name": name}


def is_tool_reference(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == TOOL_REFERENCE


def split_references(blocks: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """A tool_result's content under the references-only rule: the ``tool_reference`` blocks
    (which the tool_result holds) and the others (which follow it as sibling blocks)."""
    references: list[Any] = []
    others: list[Any] = []
    for block in blocks:
        (references if is_tool_reference(block) else others).append(block)
    return references, others


def references_only_problem(content: Any, path: Path) -> Problem | None:
    """The first block breaking the references-only rule in the `content` of the
    ``tool_result`` at `path`, if any."""
    if not isinstance(content, list | tuple) or not any(map(is_tool_reference, content)):
        return None
    for k, item in enumerate(content):
        if not is_tool_reference(item):
            found = short(item.get("type") if isinstance(item, dict) else item)
            return Problem((*path, "content", k), f"{REFERENCES_ONLY_RULE} (found {found})")
    return None


def _unknown_reference(name: Any) -> str:
    return f"Tool reference '{name}' not found in available tools"


# -- Anthropic Messages ------------------------------------------------------------------------


def _nested_blocks(block: dict[str, Any], path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``block`` and the blocks nested in it (tool_result content, references, sources)."""
    yield path, block
    for key in ("content", "tool_references", "source"):
        child = block.get(key)
        if isinstance(child, dict):
            yield from _nested_blocks(child, (*path, key))
        for i, item in dict_items(child):
            yield from _nested_blocks(item, (*path, key, i))


def check_anthropic(payload: dict[str, Any], provider: str) -> None:
    tool_names, marked_tools = check_anthropic_tools(payload.get("tools"), provider)
    facts = _MESSAGE_FACTS.scan(as_list(payload.get("messages")))
    # references are recorded up to the first problem only, so a dangling one comes first
    for name, path in facts.references.items():
        if not tool_names(name):
            fail(provider, path, _unknown_reference(name))
    raise_first(provider, facts.problem)
    marks = _all_marks(payload, marked_tools, facts)
    raise_first(provider, too_many_breakpoints(marks) or ttl_order_problem(marks))


class _MessageFacts:
    """What the message rules need from the messages scanned so far, and the first problem."""

    __slots__ = ("breakpoints", "pending", "problem", "references")

    def __init__(self) -> None:
        self.pending: frozenset[Any] = frozenset()  # tool_use ids of the last message (assistant)
        self.references: dict[str, Path] = {}  # tool_reference name -> first path, in order
        self.breakpoints: list[tuple[Path, Any]] = []
        self.problem: Problem | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _MessageFacts:
        copied = _MessageFacts()  # paths, controls and the pending set are only read
        copied.pending, copied.references = self.pending, dict(self.references)
        copied.breakpoints, copied.problem = list(self.breakpoints), self.problem
        return copied


def _step(facts: _MessageFacts, m: int, msg: Any) -> None:
    if not isinstance(msg, dict):
        return
    for j, block in dict_items(msg.get("content")):
        here: Path = ("messages", m, "content", j)
        if facts.problem is None and block.get("type") == "tool_result":
            facts.problem = _tool_result_problem(block, here, facts.pending)
        for path, b in _nested_blocks(block, here):
            if facts.problem is None and b.get("type") == TOOL_REFERENCE:
                name = b.get("tool_name")
                if isinstance(name, str):
                    facts.references.setdefault(name, path)
                else:
                    facts.problem = Problem(path, _unknown_reference(name))
            # every marker counts, past a problem too: the lint and the analyzer read them
            if b.get("cache_control") is not None:
                facts.breakpoints.append(((*path, "cache_control"), b["cache_control"]))
    facts.pending = (
        frozenset(
            b.get("id") for _, b in dict_items(msg.get("content")) if b.get("type") == "tool_use"
        )
        if msg.get("role") == "assistant"
        else frozenset()
    )


def _tool_result_problem(
    block: dict[str, Any], path: Path, tool_use_ids: frozenset[Any]
) -> Problem | None:
    """Pairing with the preceding assistant ``tool_use``, the ``is_error`` text-only rule and
    the references-only rule."""
    # https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use: each
    # tool_result answers a tool_use of the immediately preceding assistant message
    if block.get("tool_use_id") not in tool_use_ids:
        return Problem(
            path,
            f"tool_result tool_use_id {short(block.get('tool_use_id'))} has no matching "
            "tool_use in the immediately preceding assistant message",
        )
    if block.get("is_error") is True:  # the API's own 400 text
        for k, item in dict_items(block.get("content")):
            if item.get("type") != "text":
                return Problem(
                    (*path, "content", k),
                    "all content must be type 'text' if 'is_error' is true "
                    f"(found {short(item.get('type'))})",
                )
    return references_only_problem(block.get("content"), path)


_MESSAGE_FACTS = PrefixScan(_MessageFacts, _step)


# -- cache breakpoints -------------------------------------------------------------------------


def cache_marks(payload: dict[str, Any]) -> list[tuple[Path, Any]]:
    """Every ``cache_control`` marker of an Anthropic body, in prefix order (tools, system,
    messages with nested blocks, then the top-level one): the JSON path and the control."""
    tools = tool_marks(payload.get("tools"))
    return _all_marks(payload, tools, _MESSAGE_FACTS.scan(as_list(payload.get("messages"))))


def _all_marks(
    payload: dict[str, Any], tools: list[tuple[Path, Any]], facts: _MessageFacts
) -> list[tuple[Path, Any]]:
    marks = list(tools)
    for j, block in dict_items(payload.get("system")):
        for path, b in _nested_blocks(block, ("system", j)):
            if b.get("cache_control") is not None:
                marks.append(((*path, "cache_control"), b["cache_control"]))
    marks += facts.breakpoints
    if payload.get("cache_control") is not None:
        marks.append((("cache_control",), payload["cache_control"]))
    return marks


def too_many_breakpoints(marks: list[tuple[Path, Any]]) -> Problem | None:
    """More than `MAX_CACHE_BREAKPOINTS` markers: the first one over the limit."""
    if len(marks) <= MAX_CACHE_BREAKPOINTS:
        return None
    return Problem(
        marks[MAX_CACHE_BREAKPOINTS][0],
        f"too many cache_control breakpoints: {len(marks)} "
        f"(at most {MAX_CACHE_BREAKPOINTS}; a top-level cache_control counts as one)",
    )


def ttl_order_problem(marks: list[tuple[Path, Any]]) -> Problem | None:
    """A 1h TTL after a 5m one: 1h breakpoints must come first in prefix order
    (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "Mixing different
    TTLs")."""
    first_5m: Path | None = None
    for path, control in marks:
        ttl = control.get("ttl") if isinstance(control, dict) else None
        if ttl == "1h" and first_5m is not None:
            return Problem(
                path,
                f"cache_control ttl '1h' after a 5m breakpoint at {format_path(first_5m)}; "
                "1h breakpoints must come before 5m ones",
            )
        if ttl != "1h" and first_5m is None:
            first_5m = path
    return None
