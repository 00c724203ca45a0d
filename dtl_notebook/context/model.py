"""What the model context holds for one request: ordered segments with token counts.

Documented by the providers
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool,
https://docs.claude.com/en/docs/build-with-claude/prompt-caching,
https://platform.openai.com/docs/guides/tools-tool-search,
https://platform.openai.com/docs/guides/prompt-caching), rendered per provider in
`render_anthropic` and `render_openai`. Our model (not documented): the exact text each provider
renders for a tool or a block is not public, so each segment's text is a canonical JSON or
plain-text rendering of what the request says, and token counts come from the offline tokenizer
named in `ModelContext.tokenizer` (estimates for Claude and Kimi). What the provider adds around
the text (hidden prompts, framing per block or message) comes from `calibration.py`: each
message-like segment carries its framing tokens, fixed additions are `hidden` segments, and
`ModelContext.estimate` says how far the total can be trusted. Segment order and presence follow
the documented rules. Unchanged parts of the previous request are replayed, not re-rendered
(see `collector.Collector`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from dtl_notebook._reuse.frozen import built_here
from dtl_notebook.context import render_anthropic, render_openai
from dtl_notebook.context.calibration import estimate_for
from dtl_notebook.context.collector import Collector, conversation_of
from dtl_notebook.context.content_rules import UNPUBLISHED
from dtl_notebook.context.openai_functions import per_message
from dtl_notebook.context.render_chat import render_chat
from dtl_notebook.context.request_kinds import request_kind
from dtl_notebook.context.segments import FRAMED_KINDS, KINDS, ModelContext, Segment
from dtl_notebook.wire import anthropic_tools, chat_reply, kimi, responses_tools
from dtl_notebook.wire.arguments import check_context_arguments
from dtl_notebook.wire.providers import Part, spec
from dtl_notebook.wire.request import WireRequest

__all__ = [
    "FRAMED_KINDS",
    "KINDS",
    "RENDERERS",
    "ModelContext",
    "Renderer",
    "Segment",
    "model_context",
]


@dataclass(frozen=True)
class Renderer:
    """A provider's part in this layer: the framing tokens around each message (or block)
    and the walk that renders a request body's segments into a Collector."""

    framing: Callable[[], int]
    render: Callable[[dict[str, Any], Collector], None]


RENDERERS: Part[Renderer] = Part("renderer", __name__)


def model_context(
    request: WireRequest | dict[str, Any], provider: str | None = None, model: str | None = None
) -> ModelContext:
    """The ordered segments the provider assembles for the model from one request."""
    check_context_arguments(request, provider, model)
    if isinstance(request, WireRequest):
        payload, provider, model = request.payload, request.provider, request.model
    else:
        payload = request
        if provider is None:
            raise ValueError("model_context(payload) needs provider=...")
        model = model or str(payload.get("model", ""))
    built = built_here(payload)
    conversation = conversation_of(payload.get(spec(provider).history_key))
    renderer = RENDERERS[provider]
    out = Collector(provider, model, renderer.framing(), built, conversation)
    renderer.render(payload, out)
    out.remember()
    rendered = out.rendered()
    counter = out.counter
    estimate = estimate_for(provider, counter.method, request_kind(provider, payload))
    unpublished = tuple(
        dict.fromkeys(n[len(UNPUBLISHED) :] for n in out.notes if n.startswith(UNPUBLISHED))
    )
    if unpublished:
        estimate = replace(estimate, unpublished=unpublished)
    return ModelContext(
        provider,
        model,
        list(out.segments),
        counter.method,
        counter.exact,
        list(out.notes),
        estimate,
        rendered,
    )


# each provider by the name its own adapter module gives it
RENDERERS.register(
    anthropic_tools.PROVIDER, Renderer(render_anthropic.per_block, render_anthropic.render)
)
RENDERERS.register(responses_tools.PROVIDER, Renderer(per_message, render_openai.render_responses))
RENDERERS.register(chat_reply.PROVIDER, Renderer(per_message, partial(render_chat, openai=True)))
# Kimi: no per-message framing is published, so none is counted
RENDERERS.register(kimi.PROVIDER, Renderer(lambda: 0, partial(render_chat, openai=False)))
