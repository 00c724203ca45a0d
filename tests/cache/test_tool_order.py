"""`tool_order_unstable` only where the order really changes within a conversation (Codex's
fixed, unsorted registration order never is), and the search-tool check knows Claude Code's
`ToolSearch`."""

from __future__ import annotations

from typing import Any

from dtl_notebook.cache.analyze import analyze_conversations
from dtl_notebook.cache.conversation import conversation_findings
from dtl_notebook.cache.lint import lint
from tests.cache.test_cache_findings import _tool, anthropic

JSON = dict[str, Any]


def codex_tools() -> list[JSON]:
    """The tools Codex 0.169 sends on every request, in its own (unsorted) order."""
    names = ["exec_command", "write_stdin", "request_user_input"]
    tools: list[JSON] = [{"type": "function", "name": n, "parameters": {}} for n in names]
    tools.append({"type": "custom", "name": "apply_patch", "description": "Apply a patch."})
    more = ["view_image", "get_goal", "create_goal", "update_goal"]
    tools += [{"type": "function", "name": n, "parameters": {}} for n in more]
    return [*tools, {"type": "tool_search"}, {"type": "web_search"}]


def codex_request(turn: int, tools: list[JSON]) -> JSON:
    text = [{"type": "input_text", "text": f"step {i}"} for i in range(turn + 1)]
    return {
        "model": "gpt-5.5",
        "instructions": "You are Codex, a coding agent. " * 200,
        "input": [{"type": "message", "role": "user", "content": text}],
        "tools": tools,
        "prompt_cache_key": "codex-session",
    }


def findings(bodies: list[JSON]) -> set[str]:
    report = analyze_conversations(bodies, "openai-responses", [None] * len(bodies))
    return conversation_findings(report, bodies).codes()


def test_codexs_fixed_order_is_no_finding() -> None:
    bodies = [codex_request(turn, codex_tools()) for turn in range(3)]
    assert "tool_order_unstable" not in {f.code for f in lint(bodies[0], "openai-responses")}
    assert "tool_order_unstable" not in findings(bodies)


def test_the_same_tools_in_another_order_are_said_once() -> None:
    tools = codex_tools()
    swapped = [tools[1], tools[0], *tools[2:]]
    bodies = [codex_request(0, tools), codex_request(1, swapped), codex_request(2, tools)]
    report = analyze_conversations(bodies, "openai-responses", [None] * 3)
    found = conversation_findings(report, bodies).findings
    unstable = [f for f in found if f.code == "tool_order_unstable"]
    assert [(f.index, f.involved) for f in unstable] == [(1, ["write_stdin", "exec_command"])]
    # a different tool set is another change (tool_set_changed), not a reordering
    grown = [codex_request(0, tools), codex_request(1, [*tools, _tool("z")])]
    assert "tool_order_unstable" not in findings(grown)


def test_claude_codes_tool_search_is_a_search_tool() -> None:
    body = anthropic()
    body["tools"].insert(
        0, {"name": "ToolSearch", "description": "Find tools.", "input_schema": {}}
    )
    assert "deferred_without_placeholder" in {f.code for f in lint(body, "anthropic")}
    plain = anthropic()
    assert "deferred_without_placeholder" not in {f.code for f in lint(plain, "anthropic")}
