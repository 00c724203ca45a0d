"""The kind of a request, for the error band its token estimate carries.

The estimate's error differs by what a request holds: tool runs are what the framing was
fitted on, images and documents depend on published size rules, server and hosted tools on
prompts whose size is not published. Each kind's band is the error measured on real recorded
requests of that kind (`data/calibration.json` "bands", written by `benchmarks/calibrate.py`);
a kind without recordings has no measured band.
"""

from __future__ import annotations

from typing import Any, Final

from dtl_notebook._reuse.prefix import PrefixScan, plain_head
from dtl_notebook.context.content_rules import output_schema, server_tool_prompt
from dtl_notebook.wire.providers import spec

__all__ = ["KINDS", "item_types", "request_kind", "tool_kinds"]

#: kind id -> what the band's table calls it, in table order
KINDS: Final[dict[str, str]] = {
    "anthropic_tools": "Anthropic tool runs",
    "anthropic_structured": "Anthropic structured output",
    "anthropic_thinking": "Anthropic thinking",
    "anthropic_media": "Anthropic images and documents",
    "anthropic_server_tools": "Anthropic server tools",
    "anthropic_plain": "Anthropic requests without tools",
    "openai_tools": "OpenAI tool runs and plain requests",
    "openai_tool_search": "OpenAI tool search, deferred functions, namespaces, additional_tools",
    "openai_hosted": "OpenAI hosted tools",
    "openai_reasoning": "OpenAI reasoning items",
    "openai_media": "OpenAI images and documents",
}

_MEDIA = frozenset({"image", "document", "input_image", "input_file", "image_url", "file"})
_OPENAI_OWN = frozenset({"function", "namespace", "custom"})


def _types_step(kinds: set[str], _index: int, item: Any) -> None:
    if not isinstance(item, dict):
        return
    kinds.add(str(item.get("type", "")))
    content = item.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            kinds.add(str(block.get("type", "")))


class _Types(set[str]):
    """The scan's state: copied at C speed when a scan resumes from it."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Types:
        return _Types(self)


# resumed over the messages a request shares with the last one: a turn costs what it adds
_TYPES: PrefixScan[set[str]] = PrefixScan(_Types, _types_step)


ToolKind = tuple[str | None, str | None]
_FEW_TOOLS = 64  # a list this short is read through faster than a scan resumes


def _tool_kinds_step(kinds: dict[ToolKind, None], _index: int, tool: Any) -> None:
    if isinstance(tool, dict):
        kinds.setdefault((_text(tool.get("type")), _text(tool.get("execution"))), None)


# resumed over the tools a request shares with the last one: a native or hosted search body
# declares every registered tool, all of one or two kinds
_TOOL_KINDS: PrefixScan[dict[ToolKind, None]] = PrefixScan(dict, _tool_kinds_step)


def tool_kinds(tools: Any) -> list[ToolKind]:
    """Each distinct (type, execution) of a body's tools, in order of first appearance."""
    if not isinstance(tools, list):
        return []
    if len(tools) <= _FEW_TOOLS or plain_head(tools) == len(tools):
        return _read_kinds(tools)  # short, or all made anew (a parsed body): one quick pass
    _, own, shared = _TOOL_KINDS.scan_split(tools)  # a shared catalog after a few made anew
    return list(dict.fromkeys([*own, *shared]))


def _read_kinds(tools: list[Any]) -> list[ToolKind]:
    """`tool_kinds` in one pass at comprehension speed over the raw values, each distinct pair
    turned into text once."""
    try:
        raw = {(t.get("type"), t.get("execution")): None for t in tools if isinstance(t, dict)}
    except TypeError:  # an unhashable type or execution: text first, as the scan does
        raw = {
            (_text(t.get("type")), _text(t.get("execution"))): None
            for t in tools
            if isinstance(t, dict)
        }
    return list(dict.fromkeys((_text(kind), _text(execution)) for kind, execution in raw))


def item_types(payload: dict[str, Any]) -> set[str]:
    """The `type` of every message, input item and content block (resumed over the items a
    body shares with the last one)."""
    items = payload.get("messages") or payload.get("input") or []
    return _TYPES.scan(items) if isinstance(items, list) else set()


def _anthropic(payload: dict[str, Any], tools: list[Any]) -> str:
    # each distinct type once: a native-search body declares the whole registry
    types = {kind or "" for kind, _ in tool_kinds(tools)}
    blocks = item_types(payload)
    if any(server_tool_prompt(t)[1] for t in types) or blocks & {"server_tool_use"}:
        return "anthropic_server_tools"
    if output_schema(payload) is not None:
        return "anthropic_structured"
    if payload.get("thinking") or blocks & {"thinking", "redacted_thinking"}:
        return "anthropic_thinking"
    if blocks & _MEDIA:
        return "anthropic_media"
    return "anthropic_tools" if tools else "anthropic_plain"


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _hosted(kind: str | None) -> bool:
    """A hosted tool other than tool search (its own kind, sized per model family)."""
    return kind not in _OPENAI_OWN and kind is not None and kind != "tool_search"


def _searches(tools: list[Any], blocks: set[str]) -> bool:
    """Client tool search, a deferred function or a namespace declared, or tools loaded."""
    kinds = {kind for kind, _ in tool_kinds(tools)}
    deferred = any(isinstance(t, dict) and t.get("defer_loading") for t in tools)
    loaded = blocks & {"additional_tools", "tool_search_output", "tool_search_call"}
    return bool(kinds & {"tool_search", "namespace"} or deferred or loaded)


def request_kind(provider: str, payload: dict[str, Any]) -> str | None:
    """The kind id (a key of `KINDS`) of a request, or None for a provider with no bands."""
    listed = payload.get("tools")
    tools: list[Any] = listed if isinstance(listed, list) else []
    fit = spec(provider).fit  # the table says whose bands its requests are measured in
    if fit == "claude":
        return _anthropic(payload, tools)
    if fit != "openai":
        return None
    blocks = item_types(payload)
    kinds = tool_kinds(tools)
    if any(_hosted(kind) for kind, _ in kinds):  # unpublished size
        return "openai_hosted"
    if _searches(tools, blocks):  # tool search's own prompts, per model family
        return "openai_tool_search"
    if "reasoning" in blocks:
        return "openai_reasoning"
    if blocks & _MEDIA:  # what an image bills dwarfs the framing
        return "openai_media"
    return "openai_tools"
