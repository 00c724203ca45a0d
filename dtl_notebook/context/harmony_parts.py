"""Pieces of an OpenAI-family payload as harmony sees them: message texts, tool
descriptions, call recipients, and tool definitions grouped into harmony namespaces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from openai_harmony import (  # type: ignore[import-untyped]
    DeveloperContent,
    ReasoningEffort,
    ToolDescription,
    ToolNamespaceConfig,
)

FUNCTIONS: Final = "functions"
TOOL_SEARCH: Final = "tool_search"
EFFORTS: Final = {
    "low": ReasoningEffort.LOW,
    "medium": ReasoningEffort.MEDIUM,
    "high": ReasoningEffort.HIGH,
}
TEXT_PARTS: Final = frozenset({"input_text", "output_text", "text", "summary_text"})
DEFERRED_HEADER: Final = (
    "# Deferred tools\n\n"
    "Only the name and description of these tools are shown here; a tool's definition is "
    "loaded into the conversation when it is needed."
)


JSON = dict[str, Any]


def texts_of(content: Any, where: str, notes: list[str]) -> list[str]:
    """The text parts of a message `content` (a string or a list of parts), in order."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        notes.append(f"{where}: content of type {type(content).__name__} left out")
        return []
    out: list[str] = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            out.append(part)
        elif not isinstance(part, dict):
            notes.append(f"{where}.{i}: part of type {type(part).__name__} left out")
        elif part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        else:
            notes.append(f"{where}.{i}: {part.get('type')!r} part left out (harmony is text only)")
    return out


def tool_description(name: str, description: Any, parameters: Any) -> Any:
    params = parameters if isinstance(parameters, dict) else None
    return ToolDescription.new(name, description if isinstance(description, str) else "", params)


def function_description(tool: Mapping[str, Any]) -> Any | None:
    """A `ToolDescription` from a Responses function tool or a Chat `{"function": ...}` tool."""
    nested = tool.get("function")
    spec: Mapping[str, Any] = nested if isinstance(nested, dict) else tool
    name = spec.get("name")
    if not isinstance(name, str):
        return None
    return tool_description(name, spec.get("description"), spec.get("parameters"))


def arguments_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def call_recipient(name: str, namespace: Any = None) -> str:
    if isinstance(namespace, str) and namespace and namespace != name:
        return f"{namespace}.{name}"
    return f"{FUNCTIONS}.{name}"


class ToolGroup:
    """Tool definitions grouped into harmony namespaces, `functions` first."""

    def __init__(self) -> None:
        self.functions: list[Any] = []
        self.namespaces: dict[str, tuple[str | None, list[Any]]] = {}

    def __bool__(self) -> bool:
        return bool(self.functions) or any(tools for _, tools in self.namespaces.values())

    def namespace(self, name: str, description: Any) -> list[Any]:
        if name not in self.namespaces:
            text = description if isinstance(description, str) and description else None
            self.namespaces[name] = (text, [])
        return self.namespaces[name][1]

    def content(self, instructions: str | None = None) -> Any:
        content = DeveloperContent.new()
        if instructions:
            content = content.with_instructions(instructions)
        if self.functions:
            content = content.with_function_tools(self.functions)
        for name, (description, tools) in self.namespaces.items():
            if tools and name != FUNCTIONS:
                config = ToolNamespaceConfig(name=name, description=description, tools=tools)
                content = content.with_tools(config)
        return content


def is_system(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") in ("system", "developer")
        and item.get("type", "message") == "message"
    )


def tool_list(tools: Any) -> list[Any]:
    return tools if isinstance(tools, list) else []
