"""OpenAI Responses: a response back to a neutral assistant message (`parse`).

Output items the neutral message has no field for (hosted search items, reasoning) are kept
as native blocks and replayed verbatim; a client-executed `tool_search_call` is a call of the
session's own tool_search.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.agent.messages import (
    AssistantMessage,
    NativeBlock,
    NativePart,
    TextPart,
    ToolCall,
    ToolCallPart,
)
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.wire.reply import Reply, ResponseFormatError, as_dict, call_from_json, require
from dtl_notebook.wire.request import JSON
from dtl_notebook.wire.responses_tools import PROVIDER


def parse(response: Any, model: str | None = None) -> Reply:
    """A Responses `Response` (SDK object or dict) as a neutral assistant message. A `failed`
    response raises ProviderError (its error's code and message); an `incomplete` one keeps
    `incomplete_details` on the Reply; a refusal is kept as text and on `Reply.refusal`."""
    data = as_dict(response, PROVIDER)
    items = require(data, "output", list, PROVIDER, "")
    content: list[TextPart | ToolCallPart | NativePart] = []
    loaded: list[str] = []
    refusals: list[str] = []
    for i, item in enumerate(items):
        where = f"output.{i}"
        kind = require(item, "type", str, PROVIDER, where)
        if kind == "message":
            for j, part in enumerate(require(item, "content", list, PROVIDER, where)):
                ptype = require(part, "type", str, PROVIDER, f"{where}.content.{j}")
                if ptype == "output_text":
                    text = require(part, "text", str, PROVIDER, f"{where}.content.{j}")
                    content.append(TextPart(text=text))
                elif ptype == "refusal":
                    refusal = require(part, "refusal", str, PROVIDER, f"{where}.content.{j}")
                    content.append(TextPart(text=refusal))
                    refusals.append(refusal)
        elif kind == "function_call":
            content.append(ToolCallPart(call=_function_call(item, where)))
        elif kind == "tool_search_call" and item.get("execution") == "client":
            content.append(ToolCallPart(call=_search_call(item, where)))
        else:
            if kind == "tool_search_output":
                tools = item.get("tools")
                if tools is not None:
                    require(item, "tools", list, PROVIDER, where)  # else replayed as it came
                loaded.extend(tool_names(tools or []))
            content.append(NativePart(block=NativeBlock(provider=PROVIDER, data=item)))
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ResponseFormatError(PROVIDER, "usage", "expected an object")
    message = AssistantMessage(content=content, provider=PROVIDER, model=data.get("model", model))
    details = data.get("incomplete_details")
    if details is not None and not isinstance(details, dict):
        raise ResponseFormatError(PROVIDER, "incomplete_details", "expected an object")
    return Reply(
        message,
        usage,
        data.get("status"),
        loaded,
        data,
        refusal="".join(refusals) or None,
        incomplete_details=details if data.get("status") == "incomplete" else None,
    )


def _search_call(item: JSON, where: str) -> ToolCall:
    """A client `tool_search_call` as a call of the session's tool_search: its arguments an
    object, or JSON text read as the function calls' are (text that is no object is kept as
    `invalid_arguments`); anything else is a malformed response."""
    call_id = require(item, "call_id", str, PROVIDER, where)
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        return call_from_json(call_id, TOOL_SEARCH, arguments)
    if arguments is not None:
        require(item, "arguments", dict, PROVIDER, where)
    return ToolCall(id=call_id, name=TOOL_SEARCH, arguments=arguments or {})


def _function_call(item: JSON, where: str) -> ToolCall:
    call_id = require(item, "call_id", str, PROVIDER, where)
    name = require(item, "name", str, PROVIDER, where)
    raw = require(item, "arguments", str, PROVIDER, where)
    namespace = item.get("namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else None  # kept as sent
    return call_from_json(call_id, name, raw, namespace)


def tool_names(tools: list[Any]) -> list[str]:
    """The tool names in a search output's `tools` (a namespace counts as its members)."""
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names.extend(tool_names(tool.get("tools") or []))
        elif isinstance(tool.get("name"), str):
            names.append(tool["name"])
    return names
