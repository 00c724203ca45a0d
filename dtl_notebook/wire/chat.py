"""OpenAI Chat Completions: request JSON from a session, and responses back.

Chat Completions has no deferred-loading protocol: every request carries the full active list,
newly active tools at the end (activation order) so the longest prefix survives. System prompt
patches go in as appended system messages, or (`system_updates="rerender"`) re-render the first
system message, which rewrites the prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtl_notebook.agent.messages import (
    AssistantMessage,
    ImagePart,
    NativePart,
    SystemUpdate,
    TextPart,
    ToolCallPart,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.agent.sections import render_sections, replay_sections
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.wire.common import JSON, Plan, WireRequest, arguments_json, render_patch
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.reply import Reply, ResponseFormatError, as_dict, call_from_json, require

PROVIDER = "openai-chat"
SYSTEM_UPDATES = ("append", "rerender")
BatchHook = Callable[[list[int], list[JSON]], None]


def function_json(tool: ToolSpec) -> JSON:
    function: JSON = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = tool.parameters
    return {"type": "function", "function": function}


def _user_content(parts: list[TextPart | ImagePart]) -> str | list[JSON]:
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    out: list[JSON] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        else:
            url = part.url or f"data:{part.media_type or 'image/png'};base64,{part.data or ''}"
            out.append({"type": "image_url", "image_url": {"url": url}})
    return out


def chat_messages(
    plan: Plan, provider: str, system_updates: str, notes: list[str], after_batch: BatchHook
) -> list[JSON]:
    """The messages array; `after_batch(indexes, out)` runs after each run of tool messages."""
    if system_updates not in SYSTEM_UPDATES:
        raise ValueError(f"system_updates must be one of {SYSTEM_UPDATES}, got {system_updates!r}")
    later = any(isinstance(m, SystemUpdate) for m in plan.messages[plan.first :])
    sections = plan.system
    if later and system_updates == "rerender":
        sections = replay_sections(plan.messages)
        notes.append("system prompt re-rendered with the current sections (prefix changes)")
    out: list[JSON] = []
    if render_sections(sections):
        out.append({"role": "system", "content": render_sections(sections)})
    batch: list[int] = []
    for index in range(plan.first, len(plan.messages)):
        message = plan.messages[index]
        if batch and not isinstance(message, ToolResultMessage):
            after_batch(batch, out)
            batch = []
        if isinstance(message, SystemUpdate):
            if system_updates == "append":
                out.append({"role": "system", "content": render_patch(dict(message.sections))})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(index, message, provider, notes))
        elif isinstance(message, ToolResultMessage):
            if any(isinstance(p, ImagePart) for p in message.content):
                notes.append(f"tool result {message.call_id!r}: images dropped (text only here)")
            text = message.text
            if message.is_error and not text.startswith("Error"):
                text = f"Error: {text}"
            out.append({"role": "tool", "tool_call_id": message.call_id, "content": text})
            batch.append(index)
    if batch:
        after_batch(batch, out)
    return out


def _assistant(index: int, message: AssistantMessage, provider: str, notes: list[str]) -> JSON:
    item: JSON = {"role": "assistant"}
    text = message.text
    if text:
        item["content"] = text
    calls = []
    for part in message.content:
        if isinstance(part, ToolCallPart):
            call = part.call
            arguments = call.invalid_arguments or arguments_json(call.arguments)
            calls.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                }
            )
        elif isinstance(part, NativePart):
            notes.append(
                f"dropped a {part.block.provider} {part.block.type!r} block from message {index}:"
                f" {provider} has no such block"
            )
    if calls:
        item["tool_calls"] = calls
    if "content" not in item and not calls:
        item["content"] = ""
    return item


def build(
    plan: Plan, profile: ModelProfile, *, system_updates: str = "append", **params: Any
) -> WireRequest:
    """The Chat Completions body: the full active tool list, newest last."""
    notes = list(plan.notes)
    messages = chat_messages(plan, PROVIDER, system_updates, notes, lambda batch, out: None)
    tools = plan.full_list()
    if plan.split.deferred:
        notes.append(
            "Chat Completions has no deferred-loading protocol: loaded tools are appended to the "
            "full list (tool prefix changes: cache miss)"
        )
    payload: JSON = {"model": profile.model, "messages": messages}
    if tools:
        payload["tools"] = [function_json(t) for t in tools]
    payload.update(params)
    return WireRequest(PROVIDER, profile.model, payload, "full_list", [], notes, profile)


def parse(response: Any, model: str | None = None, provider: str = PROVIDER) -> Reply:
    """A `ChatCompletion` (SDK object or dict) as a neutral assistant message."""
    data = as_dict(response, provider)
    choices = require(data, "choices", list, provider, "")
    if not choices:
        raise ResponseFormatError(provider, "choices", "empty")
    message = require(choices[0], "message", dict, provider, "choices.0")
    content: list[TextPart | ToolCallPart] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append(TextPart(text=text))
    for i, call in enumerate(message.get("tool_calls") or []):
        where = f"choices.0.message.tool_calls.{i}"
        function = require(call, "function", dict, provider, where)
        raw = require(function, "arguments", str, provider, f"{where}.function")
        call_id = require(call, "id", str, provider, where)
        name = require(function, "name", str, provider, f"{where}.function")
        content.append(ToolCallPart(call=call_from_json(call_id, name, raw)))
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ResponseFormatError(provider, "usage", "expected an object")
    reply = AssistantMessage(
        content=list(content), provider=provider, model=data.get("model", model)
    )
    return Reply(reply, usage, choices[0].get("finish_reason"), [], data)
