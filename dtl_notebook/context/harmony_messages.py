"""The harmony conversation of one payload: Responses items or Chat/Kimi messages turned
into harmony messages, tool loads and notes (see `harmony` for the rules).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from openai_harmony import (  # type: ignore[import-untyped]
    Author,
    Message,
    Role,
    SystemContent,
    TextContent,
)

from dtl_notebook.context.harmony_parts import (
    DEFERRED_HEADER,
    EFFORTS,
    FUNCTIONS,
    TOOL_SEARCH,
    ToolGroup,
    arguments_text,
    call_recipient,
    is_system,
    texts_of,
    tool_list,
)
from dtl_notebook.context.harmony_tools import add_tool

_JSON_TYPE: Final = "<|constrain|>json"


@dataclass
class ToolLoad:
    index: int  # message index in the conversation
    path: str


class ConversationBuilder:
    """Builds the harmony conversation from one payload."""

    def __init__(self, provider: str, payload: Mapping[str, Any]) -> None:
        self.provider = provider
        self.payload = payload
        self.notes: list[str] = []
        self.messages: list[Any] = []
        self.loads: list[ToolLoad] = []
        self.recipients: dict[str, str] = {}

    # -- shared ------------------------------------------------------------------------------

    def system(self, effort: Any) -> None:
        content = SystemContent.new()
        if isinstance(effort, str) and effort:
            if effort.lower() in EFFORTS:
                content = content.with_reasoning_effort(EFFORTS[effort.lower()])
            else:
                self.notes.append(
                    f"reasoning effort {effort!r} has no harmony equivalent (low, medium, high); "
                    "harmony's default is shown"
                )
        self.messages.append(Message.from_role_and_content(Role.SYSTEM, content))

    def developer_text(self, texts: list[str]) -> None:
        contents = [TextContent(text=t) for t in texts]
        self.messages.append(Message.from_role_and_contents(Role.DEVELOPER, contents))

    def user(self, texts: list[str]) -> None:
        contents = [TextContent(text=t) for t in texts]
        self.messages.append(Message.from_role_and_contents(Role.USER, contents))

    def assistant_text(self, texts: list[str], preamble: bool) -> None:
        contents = [TextContent(text=t) for t in texts]
        message = Message.from_role_and_contents(Role.ASSISTANT, contents)
        self.messages.append(message.with_channel("commentary" if preamble else "final"))

    def call(self, call_id: Any, recipient: str, arguments: str) -> None:
        if isinstance(call_id, str):
            self.recipients[call_id] = recipient
        message = Message.from_role_and_content(Role.ASSISTANT, arguments)
        message = message.with_channel("commentary").with_recipient(recipient)
        self.messages.append(message.with_content_type(_JSON_TYPE))

    def output(self, call_id: Any, texts: list[str], where: str) -> None:
        recipient = self.recipients.get(call_id) if isinstance(call_id, str) else None
        if recipient is None:
            self.notes.append(f"{where}: no earlier call has call id {call_id!r}")
            recipient = f"{FUNCTIONS}.unknown"
        author = Author.new(Role.TOOL, recipient)
        contents = [TextContent(text=t) for t in texts] or [TextContent(text="")]
        message = Message(author=author, content=contents)
        self.messages.append(message.with_channel("commentary").with_recipient("assistant"))

    def load(
        self, tools: list[Any], where: str, path: str, instructions: str | None = None
    ) -> None:
        """A mid-conversation tool load: a developer message with a `# Tools` section.

        `where` is the JSON path of the tool list, `path` the load point as `WireRequest`
        names it (the Responses item, or Kimi's `messages.N.tools`).
        """
        group = ToolGroup()
        for i, tool in enumerate(tools):
            add_tool(group, tool, f"{where}.{i}", self.notes, loaded=True)
        if not group:
            self.notes.append(f"{where}: tool load with no function tools; nothing rendered")
            if instructions:
                self.developer_text([instructions])
            return
        self.loads.append(ToolLoad(len(self.messages), path))
        self.messages.append(
            Message.from_role_and_content(Role.DEVELOPER, group.content(instructions))
        )

    def up_front(self, instructions: str | None, tools: Any, where: str) -> None:
        group = ToolGroup()
        summary: list[str] = []
        if tools is not None and not isinstance(tools, list):
            self.notes.append(f"{where}: not a list; no tools rendered")
            tools = []
        for i, tool in enumerate(tools or []):
            summary += add_tool(group, tool, f"{where}.{i}", self.notes, loaded=False)
        if instructions or group:
            content = group.content(instructions)
            self.messages.append(Message.from_role_and_content(Role.DEVELOPER, content))
        if summary:
            self.developer_text([DEFERRED_HEADER + "\n\n" + "\n".join(summary)])

    # -- OpenAI Responses ----------------------------------------------------------------------

    def responses(self) -> None:
        payload = self.payload
        reasoning = payload.get("reasoning")
        self.system(reasoning.get("effort") if isinstance(reasoning, dict) else None)
        items = payload.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        elif not isinstance(items, list):
            items = []
        start = 0
        instructions = payload.get("instructions")
        if isinstance(instructions, str) and instructions:
            instructions_text: str | None = instructions
        else:
            instructions_text = None
            if items and is_system(items[0]):
                instructions_text = "".join(
                    texts_of(items[0].get("content"), "input.0", self.notes)
                )
                start = 1
        self.up_front(instructions_text, payload.get("tools"), "tools")
        for index in range(start, len(items)):
            self.responses_item(items, index)

    def responses_item(self, items: list[Any], index: int) -> None:
        item, where = items[index], f"input.{index}"
        if not isinstance(item, dict):
            self.notes.append(f"{where}: not an object; left out")
            return
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            texts = texts_of(item.get("content"), f"{where}.content", self.notes)
            if role == "user":
                self.user(texts)
            elif role == "assistant":
                nxt = items[index + 1] if index + 1 < len(items) else None
                calls = ("function_call", TOOL_SEARCH + "_call")
                self.assistant_text(texts, isinstance(nxt, dict) and nxt.get("type") in calls)
            elif role in ("system", "developer"):
                self.developer_text(texts)
            else:
                self.notes.append(f"{where}: message with role {role!r} left out")
        elif kind == "function_call":
            name = item.get("name")
            if not isinstance(name, str):
                self.notes.append(f"{where}: function_call without a name left out")
                return
            recipient = call_recipient(name, item.get("namespace"))
            self.call(item.get("call_id"), recipient, arguments_text(item.get("arguments")))
        elif kind == "function_call_output":
            texts = texts_of(item.get("output"), f"{where}.output", self.notes)
            self.output(item.get("call_id"), texts, where)
        elif kind == "additional_tools":
            self.load(tool_list(item.get("tools")), f"{where}.tools", where)
        elif kind == TOOL_SEARCH + "_call":
            arguments = arguments_text(item.get("arguments"))
            self.call(item.get("call_id"), call_recipient(TOOL_SEARCH), arguments)
        elif kind == TOOL_SEARCH + "_output":
            self.load(tool_list(item.get("tools")), f"{where}.tools", where)
        else:
            self.notes.append(f"{where}: {kind!r} item left out (no public harmony rendering)")

    # -- Chat Completions and Kimi -------------------------------------------------------------

    def chat(self) -> None:
        payload = self.payload
        self.system(payload.get("reasoning_effort"))
        messages = payload.get("messages")
        if not isinstance(messages, list):
            messages = []
        start = 0
        instructions: str | None = None
        if messages and is_system(messages[0]) and "tools" not in messages[0]:
            instructions = "".join(texts_of(messages[0].get("content"), "messages.0", self.notes))
            start = 1
        self.up_front(instructions, payload.get("tools"), "tools")
        for index in range(start, len(messages)):
            self.chat_message(messages, index)

    def chat_message(self, messages: list[Any], index: int) -> None:
        message, where = messages[index], f"messages.{index}"
        if not isinstance(message, dict):
            self.notes.append(f"{where}: not an object; left out")
            return
        role = message.get("role")
        texts = texts_of(message.get("content"), f"{where}.content", self.notes)
        if role in ("system", "developer"):
            if "tools" in message:
                tools = tool_list(message.get("tools"))
                self.load(tools, f"{where}.tools", f"{where}.tools", "".join(texts))
            else:
                self.developer_text(texts)
        elif role == "user":
            self.user(texts)
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if isinstance(message.get("reasoning_content"), str):
                self.notes.append(f"{where}: reasoning_content left out")
            if any(texts):
                self.assistant_text(texts, bool(calls))
            for i, call in enumerate(calls if isinstance(calls, list) else []):
                function = call.get("function") if isinstance(call, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                if not isinstance(function, dict) or not isinstance(name, str):
                    self.notes.append(f"{where}.tool_calls.{i}: malformed tool call left out")
                    continue
                arguments = arguments_text(function.get("arguments"))
                self.call(call.get("id"), call_recipient(name), arguments)
        elif role == "tool":
            self.output(message.get("tool_call_id"), texts, where)
        else:
            self.notes.append(f"{where}: message with role {role!r} left out")
