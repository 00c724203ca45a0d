"""Anthropic Messages: a response back to a neutral assistant message (`parse`).

Blocks a model produced with more than the neutral fields (a `tool_use` with `caller` from
programmatic tool calling, or `toolset_name`) are kept verbatim next to the neutral call and
replayed as they came; server tool blocks are kept as native blocks, and the tools a
`tool_search_tool_result` references are the reply's loaded tools.
"""

from __future__ import annotations

import json
from typing import Any

from dtl_notebook.agent.messages import (
    AssistantMessage,
    NativeBlock,
    NativePart,
    TextPart,
    ToolCall,
    ToolCallPart,
)
from dtl_notebook.wire.anthropic_tools import PROVIDER
from dtl_notebook.wire.reply import Reply, ResponseFormatError, as_dict, require
from dtl_notebook.wire.request import JSON

NEUTRAL_TOOL_USE = {"type", "id", "name", "input"}


def parse(response: Any, model: str | None = None) -> Reply:
    """A Messages response (SDK `Message` or dict) as a neutral assistant message."""
    data = as_dict(response, PROVIDER)
    blocks = require(data, "content", list, PROVIDER, "")
    content: list[TextPart | ToolCallPart | NativePart] = []
    loaded: list[str] = []
    for i, block in enumerate(blocks):
        where = f"content.{i}"
        kind = require(block, "type", str, PROVIDER, where)
        if kind == "text":
            content.append(TextPart(text=require(block, "text", str, PROVIDER, where)))
        elif kind == "tool_use":
            call_id = require(block, "id", str, PROVIDER, where)
            name = require(block, "name", str, PROVIDER, where)
            arguments = block.get("input")
            if isinstance(arguments, dict):
                call = ToolCall(id=call_id, name=name, arguments=arguments)
            else:
                call = ToolCall(id=call_id, name=name, invalid_arguments=json.dumps(arguments))
            if set(block) - NEUTRAL_TOOL_USE:  # e.g. `caller`: replayed exactly as produced
                content.append(NativePart(block=NativeBlock(provider=PROVIDER, data=block)))
            content.append(ToolCallPart(call=call))
        else:
            if kind == "tool_search_tool_result":
                loaded.extend(_referenced_names(block, where))
            content.append(NativePart(block=NativeBlock(provider=PROVIDER, data=block)))
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ResponseFormatError(PROVIDER, "usage", "expected an object")
    message = AssistantMessage(content=content, provider=PROVIDER, model=data.get("model", model))
    return Reply(message, usage, data.get("stop_reason"), loaded, data)


def _referenced_names(block: JSON, where: str) -> list[str]:
    """The tools a `tool_search_tool_result` loads: its content is a search result with
    `tool_references`, or an error (`tool_search_tool_result_error`, which loads none)."""
    result = require(block, "content", dict, PROVIDER, where)
    refs = result.get("tool_references", [])
    if not isinstance(refs, list):
        raise ResponseFormatError(
            PROVIDER,
            f"{where}.content.tool_references",
            f"expected list, got {type(refs).__name__}",
        )
    at = f"{where}.content.tool_references"
    return [require(ref, "tool_name", str, PROVIDER, f"{at}.{r}") for r, ref in enumerate(refs)]
