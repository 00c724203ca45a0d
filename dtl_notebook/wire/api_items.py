"""Responses input items as the API takes them back, where the SDK's request types are stricter.

An agent that keeps its history itself (Codex with `store: false`) sends the items the API
returned earlier, as it returned them: an assistant `message` with its `msg_…` id and
`output_text` parts without `annotations` or `status`, a user or developer `message` with an
id, a `reasoning` item with `content: null` beside its `encrypted_content`. The API takes all
of these (https://platform.openai.com/docs/api-reference/responses/create, `input`; encrypted
reasoning: https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items). Here
each such item is given the form of the SDK type that describes it, for validation only; the
body sent is never changed. Each kind of difference is returned as a note.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
_OUTPUT_PARTS = {"output_text", "refusal"}
_VALIDATION_ID = "msg_as_returned"  # stands in for an id the API does not need on this item

# the kinds of difference, each written once as its note's wording
ID_ON_INPUT = "`id` on an input message (the API takes the ids it returned)"
OUTPUT_TEXT_BACK = (
    "an assistant message's `output_text` parts sent back without `annotations` or `status`"
)
NULL_REASONING_CONTENT = "`content: null` on a reasoning item"
SEARCH_CONTENT_TYPES = "`search_content_types` on a web_search tool (Codex sends it)"


def as_typed(items: list[Any], differences: dict[str, list[str]]) -> list[Any]:
    """`items` with each item the API takes given its SDK type's form; the paths of each kind
    of difference are added to `differences` (its note wording as key)."""
    typed = []
    for index, item in enumerate(items):
        where = f"input.{index}"
        if isinstance(item, dict) and item.get("type", "message") == "message":
            item = _message(item, where, differences)
        elif isinstance(item, dict) and item.get("type") == "reasoning" and _null_content(item):
            differences.setdefault(NULL_REASONING_CONTENT, []).append(where)
            item = {k: v for k, v in item.items() if k != "content"}
        typed.append(item)
    return typed


def typed_tool(tool: Any, where: str, differences: dict[str, list[str]]) -> Any:
    """A hosted tool with the fields Codex adds and the API takes, in its SDK type's form."""
    if (
        isinstance(tool, dict)
        and tool.get("type") == "web_search"
        and "search_content_types" in tool
    ):
        differences.setdefault(SEARCH_CONTENT_TYPES, []).append(where)
        return {k: v for k, v in tool.items() if k != "search_content_types"}
    return tool


def _null_content(item: JSON) -> bool:
    return "content" in item and item["content"] is None


def _message(item: JSON, where: str, differences: dict[str, list[str]]) -> JSON:
    content = item.get("content")
    returned = (
        item.get("role") == "assistant"
        and isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") in _OUTPUT_PARTS for p in content)
    )
    if returned and isinstance(content, list):
        parts = [_output_part(p) for p in content]
        if parts != content or "status" not in item or "id" not in item:
            differences.setdefault(OUTPUT_TEXT_BACK, []).append(where)
        return {
            "id": _VALIDATION_ID,
            "status": "completed",
            **item,
            "type": "message",
            "content": parts,
        }
    if "id" in item:
        differences.setdefault(ID_ON_INPUT, []).append(where)
        return {k: v for k, v in item.items() if k != "id"}
    return item


def _output_part(part: JSON) -> JSON:
    if part.get("type") == "output_text" and "annotations" not in part:
        return {**part, "annotations": []}
    return part


def note(kind: str, paths: list[str]) -> str:
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"{kind} ({shown}): not in the SDK types, the API takes it"
