"""What an emulated model can see: the tools in its context and the turn so far.

Built from the model context (layer 3), so a tool that never reached the context cannot be
called, and from the request's conversation items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent.bridge import CALL_TOOL, read_carried
from dtl_notebook.context.model import ModelContext
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.search_tools import CLIENT_SEARCH_TOOLS, SEARCH_TOOL_NAMES
from dtl_notebook.wire.tool_changes import OFFERED_LINE, withdrawn_in

# the tools a model uses to reach others, never a task's tool itself
REACHING_TOOLS = {*SEARCH_TOOL_NAMES, CALL_TOOL}


@dataclass(frozen=True)
class VisibleTool:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class Event:
    """Something that happened in the current turn: a call and, once answered, its result."""

    name: str
    arguments: dict[str, Any]
    result: str | None = None


@dataclass
class View:
    task: str
    tools: dict[str, VisibleTool] = field(default_factory=dict)
    searchable: dict[str, str] = field(default_factory=dict)  # summaries of deferred tools
    search: str | None = None  # how the model can search: the search tool's name
    events: list[Event] = field(default_factory=list)

    def callable_tools(self) -> list[VisibleTool]:
        return [t for n, t in self.tools.items() if n not in REACHING_TOOLS]

    @property
    def dispatcher(self) -> bool:
        """Whether the tools found reach the model as definitions to call through `call_tool`
        (the bridge) rather than as tools of their own."""
        return CALL_TOOL in self.tools


def _tool_from(text: str) -> VisibleTool | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    name = data.get("name")
    if data.get("type") == "tool_search":
        name = "tool_search"
    if not isinstance(name, str):
        return None
    params = data.get("input_schema") or data.get("parameters") or {}
    return VisibleTool(name, str(data.get("description") or ""), params)


def build_view(payload: dict[str, Any], provider: str, ctx: ModelContext) -> View:
    """The emulated model's view of one request."""
    task, events = _conversation(payload, provider)
    view = View(task=task, events=events)
    withdrawn: dict[str, VisibleTool] = {}  # definitions still declared, no longer offered
    for seg in ctx.segments:
        if seg.kind in ("tool_schema", "loaded_schema"):
            tool = _tool_from(seg.text)
            if tool is not None:
                view.tools[tool.name] = tool
                withdrawn.pop(tool.name, None)
        elif seg.kind == "tool_withdrawn":
            gone = view.tools.pop(seg.label, None)
            if gone is not None:
                withdrawn[seg.label] = gone
        elif seg.kind in ("system_patch", "message"):  # offered again in text (soft removal)
            for name in withdrawn_in(seg.text, OFFERED_LINE):
                if name in withdrawn:
                    view.tools[name] = withdrawn.pop(name)
            carried = read_carried(seg.text) if seg.kind == "system_patch" else None
            for name in carried[1] if carried else []:  # the bridge withdraws tools in text
                view.tools.pop(name, None)
        elif seg.kind == "tool_summary":
            data = json.loads(seg.text)
            view.searchable[str(data.get("name") or data.get("namespace"))] = str(
                data.get("description") or ""
            )
    for name in (*sorted(SEARCH_TOOL_NAMES - set(CLIENT_SEARCH_TOOLS)), *CLIENT_SEARCH_TOOLS):
        if name in view.tools:
            view.search = name
    return view


def _conversation(payload: dict[str, Any], provider: str) -> tuple[str, list[Event]]:
    """The latest user text and the calls/results after it."""
    task = ""
    events: list[Event] = []
    by_id: dict[str, int] = {}

    def call(call_id: str, name: str, arguments: Any) -> None:
        by_id[call_id] = len(events)
        events.append(Event(name, arguments if isinstance(arguments, dict) else {}))

    def result(call_id: str, text: str) -> None:
        if call_id in by_id:
            i = by_id[call_id]
            events[i] = Event(events[i].name, events[i].arguments, text)

    def user(text: str) -> None:
        nonlocal task
        if text.strip():
            task = text
            events.clear()
            by_id.clear()

    shape = spec(provider).shape  # the API the body is written in
    if shape == "messages":
        for message in payload.get("messages") or []:
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            answers = any(b.get("type") == "tool_result" for b in blocks or [])
            for block in blocks or []:
                kind = block.get("type")
                if message["role"] == "user" and kind == "text" and not answers:
                    user(block.get("text", ""))
                elif kind in ("tool_use", "server_tool_use"):
                    call(block["id"], block["name"], block.get("input"))
                elif kind == "tool_result":
                    result(block["tool_use_id"], _text(block.get("content")))
                elif kind == "tool_search_tool_result":
                    result(block["tool_use_id"], json.dumps(block.get("content")))
    elif shape == "responses":
        items = payload.get("input")
        for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") == "user":
                user(_text(item.get("content")))
            elif kind in ("function_call", "tool_search_call"):
                arguments = item.get("arguments")
                if isinstance(arguments, str):
                    arguments = json.loads(arguments or "{}")
                name = item.get("name", "tool_search")
                call(item.get("call_id") or item.get("id") or "", name, arguments)
            elif kind in ("function_call_output", "tool_search_output"):
                text = item.get("output") if kind == "function_call_output" else item.get("tools")
                result(
                    item.get("call_id") or "", text if isinstance(text, str) else json.dumps(text)
                )
    else:
        for message in payload.get("messages") or []:
            if message.get("role") == "user":
                user(_text(message.get("content")))
            for tc in message.get("tool_calls") or []:
                function = tc.get("function") or {}
                name, arguments = (
                    function.get("name", ""),
                    json.loads(function.get("arguments") or "{}"),
                )
                inner = arguments.get("name") if isinstance(arguments, dict) else None
                if name == CALL_TOOL and isinstance(inner, str):  # the bridge: the inner call
                    name, arguments = inner, arguments.get("arguments")
                call(tc["id"], name, arguments)
            if message.get("role") == "tool":
                result(message.get("tool_call_id", ""), _text(message.get("content")))
    return task, events


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""
