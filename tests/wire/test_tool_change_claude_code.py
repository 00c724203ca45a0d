"""Claude Code's real request template (system prompt and its 34 tools) through tool changes.

The templates (../shared/fixtures/real/claude-code, read through `real_recordings`) hold what
Claude Code sends on every request but no messages, so the mid-conversation system messages
are built here from the session, on Claude Code's real tool list, and validated strictly
against the SDK's beta types.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.wire import build_request, validate_payload

TEMPLATES = ["template-2.1.175.json", "template-2.1.216.json", "template-2.1.240.json"]


@pytest.mark.parametrize("name", TEMPLATES)
def test_tool_changes_on_claude_codes_tools_validate_and_keep_tools_fixed(
    real_recordings: Path, name: str
) -> None:
    template = json.loads((real_recordings / "claude-code" / name).read_text(encoding="utf-8"))
    tools = [
        Tool(t["name"], description=t.get("description", ""), parameters=t["input_schema"])
        for t in template["tools"]
    ]
    names = [t.name for t in tools]
    s = Session(system=template["system_prompt"], tools=tools, active=names, search=None)
    s.user("Fix the failing test.")
    first = build_request(s, "anthropic", "claude-opus-4-8")
    s.assistant(tool_calls=[ToolCall(id="t1", name=names[0], arguments={})])
    s.tool_result("t1", "ok")
    s.remove_tools([names[1]])
    changed = tools[2].model_copy(update={"description": "Changed for this session."})
    s.redefine_tool(changed)
    for flags in ({}, {"tool_changes_by_value": False}):
        request = build_request(s, "anthropic", "claude-opus-4-8", profile=flags)
        validate_payload(request.payload, "anthropic")
        before = [t["name"] for t in first.payload["tools"]]
        assert [t["name"] for t in request.payload["tools"]][: len(before)] == before
        kinds = [b["type"] for m in request.payload["messages"][-2:] for b in m["content"]]
        assert kinds == ["tool_removal", "tool_removal", "tool_addition"]
        assert request.payload["messages"][-1]["role"] == "system"
