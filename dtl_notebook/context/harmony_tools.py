"""Tool definitions of an OpenAI-family payload added to a harmony `ToolGroup`: functions,
namespaces and the tool-search tool; deferred ones up front become summary lines, and what
harmony has no public rendering for is left out with a note.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.harmony_parts import (
    JSON,
    TOOL_SEARCH,
    ToolGroup,
    function_description,
    tool_description,
)


def add_tool(
    group: ToolGroup, tool: Any, where: str, notes: list[str], *, loaded: bool
) -> list[str]:
    """Add one tool definition to `group`; return deferred-summary lines (up front only)."""
    if not isinstance(tool, dict):
        notes.append(f"{where}: tool of type {type(tool).__name__} left out")
        return []
    kind = tool.get("type")
    if kind == "function":
        description = function_description(tool)
        if description is None:
            notes.append(f"{where}: function tool without a name left out")
            return []
        if tool.get("defer_loading") and not loaded:
            text = description.description
            return [f"- {description.name}: {text}" if text else f"- {description.name}"]
        namespace = tool.get("namespace")
        if loaded and isinstance(namespace, str) and namespace != description.name:
            group.namespace(namespace, None).append(description)
        else:
            group.functions.append(description)
        return []
    if kind == "namespace":
        return add_namespace(group, tool, where, notes, loaded=loaded)
    if kind == TOOL_SEARCH and not loaded:
        group.functions.append(
            tool_description(TOOL_SEARCH, tool.get("description"), tool.get("parameters"))
        )
        if tool.get("execution") != "client":
            notes.append(
                f"{where}: hosted tool_search rendered as a bare function {TOOL_SEARCH!r} "
                "(OpenAI's rendering of it is not public)"
            )
        return []
    notes.append(f"{where}: {kind!r} tool left out (no public harmony rendering)")
    return []


def add_namespace(
    group: ToolGroup, tool: JSON, where: str, notes: list[str], *, loaded: bool
) -> list[str]:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        notes.append(f"{where}: namespace without a name left out")
        return []
    members = group.namespace(name, tool.get("description"))
    deferred = False
    for j, member in enumerate(tool.get("tools") or []):
        spec = function_description(member) if isinstance(member, dict) else None
        if spec is None or member.get("type", "function") != "function":
            notes.append(f"{where}.tools.{j}: non-function namespace member left out")
        elif member.get("defer_loading") and not loaded:
            deferred = True
        else:
            members.append(spec)
    if not deferred:
        return []
    text = tool.get("description")
    line = f"- namespace {name}"
    return [f"{line}: {text}" if isinstance(text, str) and text else line]
