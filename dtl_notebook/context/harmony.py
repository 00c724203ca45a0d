"""OpenAI-family request payloads rendered with OpenAI's own `openai-harmony` package.

`render_harmony(request)` turns a request body of an OpenAI-family API (Responses, Chat) into
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

The encoding is loaded offline (`harmony_encoding`); payload pieces live in `harmony_parts`,
the conversation builder in `harmony_messages`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from openai_harmony import (  # type: ignore[import-untyped]
    Conversation,
    Role,
)

from dtl_notebook.context.harmony_encoding import harmony_encoding
from dtl_notebook.context.harmony_messages import ConversationBuilder
from dtl_notebook.wire.providers import SPECS, spec
from dtl_notebook.wire.request import WireRequest

__all__ = ["PROVIDERS", "HarmonyRendering", "harmony_encoding", "render_harmony"]

# the providers whose bodies harmony can render (the table's `harmony` column)
PROVIDERS: Final = tuple(name for name in SPECS if spec(name).harmony)

_START: Final = "<|start|>"


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


def _start_offsets(encoding: Any, tokens: Sequence[int]) -> Iterator[int]:
    (start,) = encoding.encode(_START, allowed_special={_START})
    return (i for i, token in enumerate(tokens) if token == start)


def render_harmony(
    request_or_payload: WireRequest | Mapping[str, Any], provider: str | None = None
) -> HarmonyRendering:
    """The harmony rendering of one request, for the next assistant turn.

    Pass a `WireRequest` (its provider is used; `provider`, when given, must agree) or a payload
    dict plus `provider` (one of `PROVIDERS`). Other and unknown providers raise `ValueError`.
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
    renderer = ConversationBuilder(provider, payload)
    row = spec(provider)
    if row.harmony == "responses":
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
    if row.harmony_note:  # a provider whose models do not use harmony
        notes.append(row.harmony_note)
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
