"""OpenAI Responses, Chat Completions and Kimi.

Order and loaded tools: https://platform.openai.com/docs/guides/prompt-caching and
https://platform.openai.com/docs/guides/tools-tool-search.

OpenAI renders hidden system content → tools → instructions/developer → history. Deferred
functions and namespaces show only their name and description up front; loaded definitions
join at the `additional_tools` or `tool_search_output` item, at the end of the context.
Chat Completions: tools, then messages. Kimi: the same, with definitions in system messages.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from dtl_notebook.context.calibration import calibration
from dtl_notebook.context.openai_functions import count_as_declaration
from dtl_notebook.context.segments import Collector, content_text, dump, strip

HIDDEN_NOTE = "OpenAI adds hidden system content ahead of the tools; it is not counted here"


def _function_text(tool: dict[str, Any]) -> str:
    return dump(strip(tool, "defer_loading", "strict"))


def _responses_tool(tool: dict[str, Any], source: str, out: Collector) -> None:
    kind = tool.get("type")
    if kind == "namespace":
        summary = {"namespace": tool.get("name"), "description": tool.get("description")}
        out.add("tool_summary", dump(summary), source, label=str(tool.get("name")))
        for i, member in enumerate(tool.get("tools") or []):
            if not member.get("defer_loading"):
                out.add(
                    "tool_schema",
                    _function_text(member),
                    f"{source}.tools.{i}",
                    label=f"{tool.get('name')}.{member.get('name')}",
                )
                count_as_declaration(out, member)
    elif kind == "function" and tool.get("defer_loading"):
        summary = {"name": tool.get("name"), "description": tool.get("description")}
        out.add("tool_summary", dump(summary), source, label=str(tool.get("name")))
        count_as_declaration(out, summary)
    else:
        out.add("tool_schema", _function_text(tool), source, label=str(tool.get("name", kind)))
        count_as_declaration(out, tool)


def _hidden(tools: list[Any], history: str, out: Collector) -> None:
    """The fitted framing (`calibration.json` "openai") and the tool-search prompts."""
    data = calibration()["openai"]
    out.hidden("reply priming", int(data["reply_priming"]), history, "fitted")
    if tools:
        out.hidden("function definitions framing", int(data["functions_end"]), "tools", "fitted")
    for i, tool in enumerate(tools):
        if isinstance(tool, dict) and tool.get("type") == "tool_search":
            if tool.get("execution") == "client":
                tokens = int(data["client_tool_search_prompt"])
                out.hidden("client tool-search prompt", tokens, f"tools.{i}", "fitted")
                continue
            out.hidden("hosted tool-search prompt", 0, f"tools.{i}", "size not published")
            out.notes.append(
                "OpenAI's hosted tool search adds a prompt of unpublished size; counted as 0"
            )


def _loaded_tools(item: dict[str, Any], path: str, out: Collector) -> None:
    """Definitions an `additional_tools` / `tool_search_output` item loads; namespaces by member."""
    for t, tool in enumerate(item.get("tools") or []):
        source = f"{path}.tools.{t}"
        members = tool.get("tools") if tool.get("type") == "namespace" else None
        text = (
            dump({"namespace": tool.get("name"), "description": tool.get("description")})
            if isinstance(members, list)
            else _function_text(tool)
        )
        out.add(
            "loaded_schema",
            text,
            source,
            label=str(tool.get("name")),
            load_point=path,
            new_block=False,
        )
        if not isinstance(members, list):
            count_as_declaration(out, tool)
            continue
        for m, member in enumerate(members):
            out.add(
                "loaded_schema",
                _function_text(member),
                f"{source}.tools.{m}",
                label=f"{tool.get('name')}.{member.get('name')}",
                load_point=path,
                new_block=False,
            )
            count_as_declaration(out, member)


def render_responses(payload: dict[str, Any], out: Collector) -> None:
    tools = payload.get("tools") or []
    if not out.unit({"tools": tools, "instructions": payload.get("instructions")}):
        out.notes.append(HIDDEN_NOTE)
        _hidden(tools, "input", out)
        for i, tool in enumerate(tools):
            _responses_tool(tool, f"tools.{i}", out)
        if payload.get("instructions"):
            out.add("system", str(payload["instructions"]), "instructions", label="instructions")
    items = payload.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = items or []
    i = out.replay(items)
    while i < len(items):
        item = items[i]
        if not out.unit(item):
            kind, role = item.get("type", "message"), item.get("role")
            # read only for a developer or system message; any() stops at the first
            # conversation message: in practice at once
            seen_message = any(
                earlier.get("type", "message") == "message"
                and earlier.get("role") not in ("developer", "system")
                for earlier in islice(items, i)
            )
            _responses_item(i, item, kind, role, seen_message, out)
        i += 1
        i += out.replay(items, i)


def _responses_item(
    i: int, item: dict[str, Any], kind: str, role: Any, seen_message: bool, out: Collector
) -> None:
    path = f"input.{i}"
    if kind == "additional_tools" or kind == "tool_search_output":
        out.add(
            "tool_result" if kind == "tool_search_output" else "system_patch",
            "",
            path,
            label=kind,
            role="developer",
        )
        _loaded_tools(item, path, out)
    elif kind == "function_call_output":
        output = item.get("output")
        text = output if isinstance(output, str) else dump(output)
        out.add("tool_result", text, path, label=f"result {item.get('call_id')}", role="tool")
    elif kind == "message" and role in ("developer", "system"):
        text = content_text(item.get("content"))
        out.add("system_patch" if seen_message else "system", text, path, label=role, role=role)
    elif kind == "message":
        out.add("message", content_text(item.get("content")), path, label=str(role), role=role)
    else:
        # Item ids, call ids and statuses are bookkeeping: fitting real usage shows the model
        # does not see them (benchmarks/calibrate.py).
        shown = strip(item, "id", "call_id", "status", "type", "execution")
        out.add("message", dump(shown), path, label=kind, role="assistant")


def render_chat(payload: dict[str, Any], out: Collector, provider: str) -> None:
    tools = payload.get("tools") or []
    if not out.unit(tools):
        if provider == "openai-chat":
            _hidden(tools, "messages", out)
        for i, tool in enumerate(tools):
            out.add(
                "tool_schema",
                dump(tool.get("function", tool)),
                f"tools.{i}",
                label=str((tool.get("function") or {}).get("name", "")),
            )
            if provider == "openai-chat":
                count_as_declaration(out, tool.get("function", tool))
    messages = payload.get("messages") or []
    m = out.replay(messages)
    while m < len(messages):
        message = messages[m]
        if not out.unit(message):
            _chat_message(m, message, messages, out)
        m += 1
        m += out.replay(messages, m)


def _chat_message(m: int, message: dict[str, Any], messages: list[Any], out: Collector) -> None:
    role = message.get("role")
    if role in ("system", "developer"):
        # a first-turn system message has only system messages and tool results before it
        # (all() stops at the first conversation message: in practice at once)
        first = all(
            earlier.get("role") in ("system", "developer", "tool")
            for earlier in islice(messages, m)
        )
        _chat_system(m, message, role, first, out)
    elif role == "tool":
        out.add(
            "tool_result",
            content_text(message.get("content")),
            f"messages.{m}",
            label=f"result {message.get('tool_call_id')}",
            role=role,
        )
    else:
        text = content_text(message.get("content"))
        calls = message.get("tool_calls")
        if calls:
            text += dump([call.get("function", call) for call in calls])
        out.add("message", text, f"messages.{m}", label=str(role), role=role)


def _chat_system(m: int, message: dict[str, Any], role: Any, first: bool, out: Collector) -> None:
    path = f"messages.{m}"
    if "tools" in message:
        out.add("system_patch", "", path, label="tools", role=role)
        for t, tool in enumerate(message["tools"]):
            function = tool.get("function", tool)
            out.add(
                "loaded_schema",
                dump(function),
                f"{path}.tools.{t}",
                label=str(function.get("name")),
                load_point=f"{path}.tools",
                new_block=False,
            )
    else:
        kind = "system" if first else "system_patch"
        out.add(kind, content_text(message.get("content")), path, label=role, role=role)
