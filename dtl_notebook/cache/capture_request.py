"""A captured request body: the provider it was written for, and the shape it must have
before it is analyzed.

A capture is read from a file nobody checked, so every list the context renderers walk
(tools, system blocks, messages or input items, their content blocks, tool calls, tool
references) must hold objects, and nesting must stay within what the readers can walk. The
first problem is named by its JSON path and the value found there.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.agent.checks import bad_text
from dtl_notebook.agent.secrets import redact
from dtl_notebook.wire.body_signs import provider_of_body
from dtl_notebook.wire.providers import provider_at
from dtl_notebook.wire.reply import body_preview

MAX_DEPTH = 200  # far beyond any provider body; deeper JSON would exhaust Python's stack


def detect_provider(payload: dict[str, Any], url: str | None = None) -> str:
    """The provider a request was written for: from the URL it went to when there is one
    (a host word names a provider on a shared endpoint), else from the body's shape (the
    table's body signs). The one detection every reader of captures (the audit and the view)
    uses."""
    found = provider_at(url) if url else None
    if found is not None:
        return found
    return provider_of_body(payload)


def request_problem(body: dict[str, Any]) -> str | None:
    """What is wrong with a request body's shape ("messages[2]: expected an object, got
    'hi'"), or None."""
    try:
        _objects(body, "tools", "tools")
        _objects(body, "messages", "messages", each=_item)
        _objects(body, "input", "input", each=_item, text=True)
        _objects(body, "system", "system", text=True)
        choice = body.get("tool_choice")
        if choice is not None and not isinstance(choice, (str, dict)):
            raise _Problem(f"tool_choice: expected an object or a string, got {_show(choice)}")
        for i, tool in enumerate(body.get("tools") or []):
            _tool(tool, f"tools[{i}]")
    except _Problem as problem:
        return str(problem)
    deep = _too_deep(body)
    if deep is not None:
        return deep
    found = bad_text(body)  # the API could never have taken it: JSON text is UTF-8
    return None if found is None else f"{found[0]}: {found[1]}"


class _Problem(Exception):
    pass


def _objects(
    parent: dict[str, Any], key: str, where: str, *, each: Any = None, text: bool = False
) -> None:
    """parent[key], when present, is a list of objects (or, with `text`, a string)."""
    value = parent.get(key)
    if value is None or (text and isinstance(value, str)):
        return
    if not isinstance(value, list):
        raise _Problem(f"{where}: expected a list, got {_show(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise _Problem(f"{where}[{i}]: expected an object, got {_show(item)}")
        if each is not None:
            each(item, f"{where}[{i}]")


def _tool(tool: dict[str, Any], where: str) -> None:
    function = tool.get("function")
    if function is not None and not isinstance(function, dict):
        raise _Problem(f"{where}.function: expected an object, got {_show(function)}")
    _objects(tool, "tools", f"{where}.tools", each=_tool)  # a namespace's members


def _item(item: dict[str, Any], where: str) -> None:
    """A message or input item: its content blocks, tool calls and carried tools."""
    _objects(item, "content", f"{where}.content", each=_block, text=True)
    _objects(item, "tool_calls", f"{where}.tool_calls", each=_tool)
    _objects(item, "tools", f"{where}.tools", each=_tool)  # Kimi's carrier, tool_search_output


def _block(block: dict[str, Any], where: str) -> None:
    content = block.get("content")
    if block.get("type") == "tool_search_tool_result":  # its content is a result (or error) object
        if not isinstance(content, dict):
            raise _Problem(f"{where}.content: expected an object, got {_show(content)}")
        _objects(content, "tool_references", f"{where}.content.tool_references", each=_block)
    elif not isinstance(content, dict):  # a server tool's result object is read as it comes
        _objects(block, "content", f"{where}.content", each=_block, text=True)
    name = block.get("tool_name")
    if block.get("type") == "tool_reference" and not isinstance(name, str):
        raise _Problem(f"{where}.tool_name: expected a string, got {_show(name)}")


def _too_deep(body: Any) -> str | None:
    """Nesting past MAX_DEPTH, walked level by level over the containers alone (a body's
    strings and numbers, most of its values, are never visited)."""
    level = [body] if isinstance(body, (dict, list)) else []
    for _ in range(MAX_DEPTH):
        if not level:
            return None
        below: list[Any] = []
        for value in level:
            children = value.values() if isinstance(value, dict) else value
            below += [c for c in children if isinstance(c, (dict, list))]
        level = below
    # a value at depth MAX_DEPTH + 1: a container at MAX_DEPTH that holds anything
    return f"nested more than {MAX_DEPTH} levels deep" if any(level) else None


def _show(value: Any) -> str:
    if isinstance(value, str):
        return body_preview(value, 40)
    text = redact(repr(value))
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:40] + '…'}"
