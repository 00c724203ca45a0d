"""OpenAI-family request payloads rendered with OpenAI's own `openai-harmony` package.

`render_harmony(request)` turns an "openai-responses", "openai-chat" or "kimi" request body into
the harmony token stream (`openai_harmony`, encoding `HarmonyGptOss`, rendered for the next
assistant turn) and decodes it back to text. Harmony is the chat format of OpenAI's open-weight
gpt-oss models: for gpt-oss served by vLLM or SGLang this is the token stream the model holds
(up to the server's own choices for the system message, below); for hosted GPT models it is the
closest public rendering, since OpenAI does not publish how its API renders a request; Kimi
models do not use harmony at all, so for them it is only a comparison.

Rendered natively by harmony (OpenAI's own code does the formatting):
- a system message with harmony's defaults (model identity, knowledge cutoff, `Reasoning:` from
  `reasoning.effort` / `reasoning_effort` when it is low, medium or high; no conversation start
  date, so the text is stable; servers may add today's date);
- one developer message up front: `instructions` (Responses) or the leading system/developer
  message (Chat, Kimi; Responses when there are no `instructions`) as its `# Instructions`, and
  the immediate function tools (no `defer_loading`) as the `functions` namespace of its
  `# Tools` section; a Responses namespace's callable (non-deferred) members as a harmony
  namespace of that name; a `tool_search` tool as a function `tool_search` (a hosted one has no
  description or parameters in the request, so it renders as a bare `() => any`);
- user messages; assistant text on the `final` channel, or on `commentary` (harmony's preamble
  channel) when tool calls follow it in the same turn;
- every tool call (`function_call`, Chat `tool_calls`, `tool_search_call`) as an assistant
  message on the `commentary` channel with recipient `functions.<name>` (`<namespace>.<name>` for
  a namespaced Responses call) and content type `<|constrain|>json`;
- every tool output as a tool message authored by that same recipient (looked up by call id),
  addressed `to=assistant` on the `commentary` channel;
- a developer or system message later in the conversation as a plain-text developer message at
  its position.

Our model, not OpenAI's documented behaviour:
- Deferred tools: OpenAI documents only that deferred functions and namespaces show their name
  and description up front. Here they are listed in a second developer message right after the
  first, headed `# Deferred tools`, one line each: `- <name>: <description>` for a deferred
  function and `- namespace <name>: <description>` for a namespace with deferred members.
- Tool loads mid-conversation (`additional_tools` and `tool_search_output` items, Kimi's
  `{"role": "system", "tools": [...]}` messages): harmony has no native way to add tools after
  the conversation began, so each load is a developer message at its position whose `# Tools`
  section (`DeveloperContent.with_function_tools`, plus one harmony namespace per loaded
  Responses namespace) holds the full definitions. `HarmonyRendering.loads` gives the token
  offset where each such message starts. For hosted GPT models this is the closest public
  rendering; it is exact only for gpt-oss served by vLLM or SGLang given the same messages.
- Content harmony cannot carry (images, files, reasoning items, hosted non-function tools such as
  web search) is left out and named in `HarmonyRendering.notes`.

The o200k vocabulary is read offline: while the encoding loads (once per process),
`TIKTOKEN_ENCODINGS_BASE` points at `tokens.harmony_encodings_dir()` unless the variable is
already set, and is restored afterwards. Nothing here touches the network.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from openai_harmony import (  # type: ignore[import-untyped]
    Author,
    Conversation,
    DeveloperContent,
    HarmonyEncodingName,
    Message,
    ReasoningEffort,
    Role,
    SystemContent,
    TextContent,
    ToolDescription,
    ToolNamespaceConfig,
    load_harmony_encoding,
)

from dtl_notebook.context.tokens import harmony_encodings_dir
from dtl_notebook.wire.common import WireRequest

__all__ = ["PROVIDERS", "HarmonyRendering", "harmony_encoding", "render_harmony"]

PROVIDERS: Final = ("openai-responses", "openai-chat", "kimi")

_ENV: Final = "TIKTOKEN_ENCODINGS_BASE"
_FUNCTIONS: Final = "functions"
_TOOL_SEARCH: Final = "tool_search"
_JSON_TYPE: Final = "<|constrain|>json"
_START: Final = "<|start|>"
_EFFORTS: Final = {
    "low": ReasoningEffort.LOW,
    "medium": ReasoningEffort.MEDIUM,
    "high": ReasoningEffort.HIGH,
}
_TEXT_PARTS: Final = frozenset({"input_text", "output_text", "text", "summary_text"})
_DEFERRED_HEADER: Final = (
    "# Deferred tools\n\n"
    "Only the name and description of these tools are shown here; a tool's definition is "
    "loaded into the conversation when it is needed."
)

JSON = dict[str, Any]


@dataclass(frozen=True)
class HarmonyRendering:
    """The harmony token stream of one request, rendered for the next assistant turn.

    `text` is `tokens` decoded; `token_count` is `len(tokens)`. `loads[i]` is the offset in
    `tokens` where the developer message of the i-th mid-conversation tool load starts, and
    `load_paths[i]` the JSON path of the payload item that carried it. `notes` names what was
    left out or approximated.
    """

    tokens: list[int]
    text: str
    token_count: int = field(init=False)
    loads: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load_paths: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "token_count", len(self.tokens))


# --------------------------------------------------------------------------------------------
# The encoding, offline
# --------------------------------------------------------------------------------------------

_LOAD_LOCK: Final = threading.Lock()


@functools.cache
def harmony_encoding() -> Any:
    """The `HarmonyGptOss` encoding (an `openai_harmony.HarmonyEncoding`), loaded once, offline.

    While it loads, `TIKTOKEN_ENCODINGS_BASE` points at `harmony_encodings_dir()` unless it is
    already set (an empty value counts as unset); the variable is restored afterwards.
    """
    with _LOAD_LOCK:
        previous = os.environ.get(_ENV)
        if previous:
            return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
        os.environ[_ENV] = str(harmony_encodings_dir())
        try:
            return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
        finally:
            if previous is None:
                del os.environ[_ENV]
            else:
                os.environ[_ENV] = previous


# --------------------------------------------------------------------------------------------
# Payload pieces
# --------------------------------------------------------------------------------------------


def _texts(content: Any, where: str, notes: list[str]) -> list[str]:
    """The text parts of a message `content` (a string or a list of parts), in order."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        notes.append(f"{where}: content of type {type(content).__name__} left out")
        return []
    out: list[str] = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            out.append(part)
        elif not isinstance(part, dict):
            notes.append(f"{where}.{i}: part of type {type(part).__name__} left out")
        elif part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        else:
            notes.append(f"{where}.{i}: {part.get('type')!r} part left out (harmony is text only)")
    return out


def _description(name: str, description: Any, parameters: Any) -> Any:
    params = parameters if isinstance(parameters, dict) else None
    return ToolDescription.new(name, description if isinstance(description, str) else "", params)


def _function(tool: Mapping[str, Any]) -> Any | None:
    """A `ToolDescription` from a Responses function tool or a Chat `{"function": ...}` tool."""
    nested = tool.get("function")
    spec: Mapping[str, Any] = nested if isinstance(nested, dict) else tool
    name = spec.get("name")
    if not isinstance(name, str):
        return None
    return _description(name, spec.get("description"), spec.get("parameters"))


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def _recipient(name: str, namespace: Any = None) -> str:
    if isinstance(namespace, str) and namespace and namespace != name:
        return f"{namespace}.{name}"
    return f"{_FUNCTIONS}.{name}"


class _Tools:
    """Tool definitions grouped into harmony namespaces, `functions` first."""

    def __init__(self) -> None:
        self.functions: list[Any] = []
        self.namespaces: dict[str, tuple[str | None, list[Any]]] = {}

    def __bool__(self) -> bool:
        return bool(self.functions) or any(tools for _, tools in self.namespaces.values())

    def namespace(self, name: str, description: Any) -> list[Any]:
        if name not in self.namespaces:
            text = description if isinstance(description, str) and description else None
            self.namespaces[name] = (text, [])
        return self.namespaces[name][1]

    def content(self, instructions: str | None = None) -> Any:
        content = DeveloperContent.new()
        if instructions:
            content = content.with_instructions(instructions)
        if self.functions:
            content = content.with_function_tools(self.functions)
        for name, (description, tools) in self.namespaces.items():
            if tools and name != _FUNCTIONS:
                config = ToolNamespaceConfig(name=name, description=description, tools=tools)
                content = content.with_tools(config)
        return content


@dataclass
class _Load:
    index: int  # message index in the conversation
    path: str


class _Renderer:
    """Builds the harmony conversation from one payload."""

    def __init__(self, provider: str, payload: Mapping[str, Any]) -> None:
        self.provider = provider
        self.payload = payload
        self.notes: list[str] = []
        self.messages: list[Any] = []
        self.loads: list[_Load] = []
        self.recipients: dict[str, str] = {}

    # -- shared ------------------------------------------------------------------------------

    def system(self, effort: Any) -> None:
        content = SystemContent.new()
        if isinstance(effort, str) and effort:
            if effort.lower() in _EFFORTS:
                content = content.with_reasoning_effort(_EFFORTS[effort.lower()])
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
            recipient = f"{_FUNCTIONS}.unknown"
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
        group = _Tools()
        for i, tool in enumerate(tools):
            self.add_tool(group, tool, f"{where}.{i}", loaded=True)
        if not group:
            self.notes.append(f"{where}: tool load with no function tools; nothing rendered")
            if instructions:
                self.developer_text([instructions])
            return
        self.loads.append(_Load(len(self.messages), path))
        self.messages.append(
            Message.from_role_and_content(Role.DEVELOPER, group.content(instructions))
        )

    def add_tool(self, group: _Tools, tool: Any, where: str, *, loaded: bool) -> list[str]:
        """Add one tool definition to `group`; return deferred-summary lines (up front only)."""
        if not isinstance(tool, dict):
            self.notes.append(f"{where}: tool of type {type(tool).__name__} left out")
            return []
        kind = tool.get("type")
        if kind == "function":
            description = _function(tool)
            if description is None:
                self.notes.append(f"{where}: function tool without a name left out")
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
            return self.add_namespace(group, tool, where, loaded=loaded)
        if kind == _TOOL_SEARCH and not loaded:
            group.functions.append(
                _description(_TOOL_SEARCH, tool.get("description"), tool.get("parameters"))
            )
            if tool.get("execution") != "client":
                self.notes.append(
                    f"{where}: hosted tool_search rendered as a bare function {_TOOL_SEARCH!r} "
                    "(OpenAI's rendering of it is not public)"
                )
            return []
        self.notes.append(f"{where}: {kind!r} tool left out (no public harmony rendering)")
        return []

    def add_namespace(self, group: _Tools, tool: JSON, where: str, *, loaded: bool) -> list[str]:
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            self.notes.append(f"{where}: namespace without a name left out")
            return []
        members = group.namespace(name, tool.get("description"))
        deferred = False
        for j, member in enumerate(tool.get("tools") or []):
            spec = _function(member) if isinstance(member, dict) else None
            if spec is None or member.get("type", "function") != "function":
                self.notes.append(f"{where}.tools.{j}: non-function namespace member left out")
            elif member.get("defer_loading") and not loaded:
                deferred = True
            else:
                members.append(spec)
        if not deferred:
            return []
        text = tool.get("description")
        line = f"- namespace {name}"
        return [f"{line}: {text}" if isinstance(text, str) and text else line]

    def up_front(self, instructions: str | None, tools: Any, where: str) -> None:
        group = _Tools()
        summary: list[str] = []
        if tools is not None and not isinstance(tools, list):
            self.notes.append(f"{where}: not a list; no tools rendered")
            tools = []
        for i, tool in enumerate(tools or []):
            summary += self.add_tool(group, tool, f"{where}.{i}", loaded=False)
        if instructions or group:
            content = group.content(instructions)
            self.messages.append(Message.from_role_and_content(Role.DEVELOPER, content))
        if summary:
            self.developer_text([_DEFERRED_HEADER + "\n\n" + "\n".join(summary)])

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
            if items and _is_system(items[0]):
                instructions_text = "".join(_texts(items[0].get("content"), "input.0", self.notes))
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
            texts = _texts(item.get("content"), f"{where}.content", self.notes)
            if role == "user":
                self.user(texts)
            elif role == "assistant":
                nxt = items[index + 1] if index + 1 < len(items) else None
                calls = ("function_call", _TOOL_SEARCH + "_call")
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
            recipient = _recipient(name, item.get("namespace"))
            self.call(item.get("call_id"), recipient, _arguments(item.get("arguments")))
        elif kind == "function_call_output":
            texts = _texts(item.get("output"), f"{where}.output", self.notes)
            self.output(item.get("call_id"), texts, where)
        elif kind == "additional_tools":
            self.load(_tool_list(item.get("tools")), f"{where}.tools", where)
        elif kind == _TOOL_SEARCH + "_call":
            arguments = _arguments(item.get("arguments"))
            self.call(item.get("call_id"), _recipient(_TOOL_SEARCH), arguments)
        elif kind == _TOOL_SEARCH + "_output":
            self.load(_tool_list(item.get("tools")), f"{where}.tools", where)
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
        if messages and _is_system(messages[0]) and "tools" not in messages[0]:
            instructions = "".join(_texts(messages[0].get("content"), "messages.0", self.notes))
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
        texts = _texts(message.get("content"), f"{where}.content", self.notes)
        if role in ("system", "developer"):
            if "tools" in message:
                tools = _tool_list(message.get("tools"))
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
                arguments = _arguments(function.get("arguments"))
                self.call(call.get("id"), _recipient(name), arguments)
        elif role == "tool":
            self.output(message.get("tool_call_id"), texts, where)
        else:
            self.notes.append(f"{where}: message with role {role!r} left out")


def _is_system(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") in ("system", "developer")
        and item.get("type", "message") == "message"
    )


def _tool_list(tools: Any) -> list[Any]:
    return tools if isinstance(tools, list) else []


def _start_offsets(encoding: Any, tokens: Sequence[int]) -> Iterator[int]:
    (start,) = encoding.encode(_START, allowed_special={_START})
    return (i for i, token in enumerate(tokens) if token == start)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def render_harmony(
    request_or_payload: WireRequest | Mapping[str, Any], provider: str | None = None
) -> HarmonyRendering:
    """The harmony rendering of one request, for the next assistant turn.

    Pass a `WireRequest` (its provider is used; `provider`, when given, must agree) or a payload
    dict plus `provider` ("openai-responses", "openai-chat" or "kimi"). Anthropic and unknown
    providers raise `ValueError`.
    """
    if isinstance(request_or_payload, WireRequest):
        payload: Mapping[str, Any] = request_or_payload.payload
        if provider is not None and provider != request_or_payload.provider:
            raise ValueError(
                f"provider {provider!r} does not match the request's "
                f"{request_or_payload.provider!r}"
            )
        provider = request_or_payload.provider
    elif isinstance(request_or_payload, Mapping):
        payload = request_or_payload
    else:
        raise TypeError(
            f"expected a WireRequest or a payload dict, got {type(request_or_payload).__name__}"
        )
    if provider not in PROVIDERS:
        raise ValueError(
            f"harmony renders OpenAI-family payloads only; provider {provider!r} is not one of "
            f"{', '.join(PROVIDERS)}"
        )
    renderer = _Renderer(provider, payload)
    if provider == "openai-responses":
        renderer.responses()
    else:
        renderer.chat()
    encoding = harmony_encoding()
    conversation = Conversation.from_messages(renderer.messages)
    tokens = [
        int(t) for t in encoding.render_conversation_for_completion(conversation, Role.ASSISTANT)
    ]
    text = str(encoding.decode_utf8(tokens))
    notes = list(dict.fromkeys(renderer.notes))
    model = payload.get("model")
    if provider == "kimi":
        notes.append("Kimi models do not use harmony; this rendering is for comparison only")
    elif isinstance(model, str) and "gpt-oss" not in model:
        notes.append(
            f"{model} is a hosted model: harmony is the closest public rendering, not its exact "
            "token stream"
        )
    starts = list(_start_offsets(encoding, tokens))
    loads: list[int] = []
    # One <|start|> per message, plus the one that opens the assistant's turn.
    if len(starts) == len(renderer.messages) + 1:
        loads = [starts[load.index] for load in renderer.loads]
    elif renderer.loads:
        notes.append("harmony dropped or merged messages; tool-load offsets are unavailable")
    paths = [load.path for load in renderer.loads] if loads else []
    return HarmonyRendering(tokens, text, loads=loads, notes=notes, load_paths=paths)
