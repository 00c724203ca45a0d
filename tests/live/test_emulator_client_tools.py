"""The emulated model with the tools real coding agents declare: Claude Code's own client-side
`ToolSearch` (answered with tool_reference blocks) and strict tools' nullable parameters."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.emulator.policies import fill_arguments
from dtl_notebook.live.emulator.request_view import VisibleTool

SEARCH = {  # as Claude Code declares its search: a client tool, the deferred tools its catalog
    "name": "ToolSearch",
    "description": "Fetches full schema definitions for deferred tools so they can be called.",
    "input_schema": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "max_results": {"type": "number"}},
        "required": ["query"],
    },
}
ADD = {
    "name": "mcp__demo__add",
    "description": "Add two numbers.",
    "input_schema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    "defer_loading": True,
}


def answer(emulator: Emulator, body: dict[str, Any]) -> dict[str, Any]:
    request = httpx2.Request("POST", "http://emulator.invalid/v1/messages", json=body)
    reply = emulator.handle(request)
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = json.loads(reply.content)
    return result


def test_claude_codes_tool_search_is_a_search_then_the_found_tool_is_called() -> None:
    emulator = Emulator("anthropic")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Add 2 and 3"}]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "tools": [SEARCH, ADD]}
    first = answer(emulator, {**body, "messages": messages})["content"][0]
    assert first["type"] == "tool_use" and first["name"] == "ToolSearch"
    assert first["input"] == {"query": "add"}  # the task's words
    found = [{"type": "tool_reference", "tool_name": "mcp__demo__add"}]
    messages += [
        {"role": "assistant", "content": [first]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": first["id"], "content": found}],
        },
    ]
    second = answer(emulator, {**body, "messages": messages})["content"][0]
    assert second["type"] == "tool_use" and second["name"] == "mcp__demo__add"
    assert second["input"] == {"a": 2, "b": 3}


def test_a_strict_tools_nullable_parameters_are_sent_as_null() -> None:
    number_or_null = {"anyOf": [{"type": "number"}, {"type": "null"}]}
    schema = {  # as Pi declares its read tool: every parameter required, optional ones nullable
        "type": "object",
        "required": ["path", "offset", "limit"],
        "properties": {
            "path": {"type": "string"},
            "offset": number_or_null,
            "limit": number_or_null,
        },
    }
    tool = VisibleTool("read", "Read the contents of a file.", schema)
    assert fill_arguments(tool, "Read the file notes.txt") == {
        "path": "notes.txt",
        "offset": None,
        "limit": None,
    }
    del schema["required"][1:]  # a nullable parameter that is not required is left out
    assert fill_arguments(tool, "Read the file notes.txt") == {"path": "notes.txt"}
