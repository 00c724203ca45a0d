"""Chat Completions and Kimi: tools, then messages; Kimi's loaded definitions sit in system
messages, and the bridge carries definitions in a message's text (`wire.bridge`).
The hidden prompts and image counts are OpenAI's, as in `render_openai`.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from dtl_notebook.context.collector import Collector
from dtl_notebook.context.openai_functions import count_as_declaration, tool_call_tokens
from dtl_notebook.context.render_anthropic import withdrawn_marks
from dtl_notebook.context.render_openai import (
    add_output_header,
    content_tokens,
    hidden_prompts,
    structured_output,
)
from dtl_notebook.context.segments import content_text, dump
from dtl_notebook.wire.bridge import inner_call_names, read_carried


def render_chat(payload: dict[str, Any], out: Collector, openai: bool) -> None:
    """A Chat Completions body's segments; `openai`: rendered by OpenAI itself (its hidden
    prompts, declarations and per-call messages), not by another server of the protocol."""
    tools = payload.get("tools") or []
    if not out.unit({"tools": tools, "response_format": payload.get("response_format")}):
        if openai:
            hidden_prompts(tools, "messages", False, out)
            structured_output(payload, "response_format", out)
        for i, tool in enumerate(tools):
            out.add(
                "tool_schema",
                dump(tool.get("function", tool)),
                f"tools.{i}",
                label=str((tool.get("function") or {}).get("name", "")),
            )
            if openai:
                count_as_declaration(out, tool.get("function", tool))
    messages = payload.get("messages") or []
    m = out.replay(messages)
    while m < len(messages):
        message = messages[m]
        if not out.unit(message):
            _chat_message(m, message, messages, out, openai)
        m += 1
        m += out.replay(messages, m)


def _chat_message(
    m: int, message: dict[str, Any], messages: list[Any], out: Collector, openai: bool
) -> None:
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
        text = content_text(message.get("content"))
        path = f"messages.{m}"
        out.add("tool_result", text, path, label=f"result {message.get('tool_call_id')}", role=role)
        if openai:
            add_output_header(messages, m, message.get("tool_call_id"), out)
        _carried(text, path, out)
    else:
        text, tokens = content_tokens(message.get("content"), out.model, out)
        calls = message.get("tool_calls")
        if calls:
            functions = [call.get("function", call) for call in calls]
            text += dump(functions)
            if openai:  # each call its own addressed message
                words = out.counter.count(content_text(message.get("content")) or "")
                tokens = (words if tokens is None else tokens) + sum(
                    tool_call_tokens(f, lambda t: int(out.counter.count(t))) for f in functions
                )
                tokens += out.framing * (len(functions) - 1)
            elif tokens is not None:
                tokens += out.counter.count(dump(functions))
        label = str(role)
        inner = inner_call_names(calls or [])
        if inner:  # the bridge: show the call the dispatcher makes
            label += " → " + ", ".join(inner) + " (through call_tool)"
        out.add("message", text, f"messages.{m}", label=label, role=role, tokens=tokens)


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
        text = content_text(message.get("content"))
        out.add(kind, text, path, label=role, role=role)
        withdrawn_marks(text, path, out)
        _carried(text, path, out)


def _carried(text: str, path: str, out: Collector) -> None:
    """The definitions a bridge message carries (a search result, the initial tools, a tool
    change), each shown as loaded at that message; their tokens are the message's own."""
    carried = read_carried(text)
    for t, tool in enumerate(carried[0] if carried else []):
        out.add(
            "loaded_schema",
            dump(tool),
            f"{path}.content.tools.{t}",
            label=str(tool.get("name")),
            load_point=path,
            new_block=False,
            tokens=0,
        )
