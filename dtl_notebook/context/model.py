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

from dataclasses import replace
from typing import Any

from dtl_notebook._reuse.frozen import built_here
from dtl_notebook.agent.checks import unknown_value
from dtl_notebook.context import render_anthropic, render_openai
from dtl_notebook.context.calibration import calibration, estimate_for
from dtl_notebook.context.collector import Collector, conversation_of
from dtl_notebook.context.content_rules import UNPUBLISHED
from dtl_notebook.context.openai_functions import per_message
from dtl_notebook.context.render_chat import render_chat
from dtl_notebook.context.request_kinds import request_kind
from dtl_notebook.context.segments import FRAMED_KINDS, KINDS, ModelContext, Segment
from dtl_notebook.wire.arguments import check_context_arguments
from dtl_notebook.wire.modes import PROVIDERS
from dtl_notebook.wire.request import WireRequest

__all__ = [
    "FRAMED_KINDS",
    "KINDS",
    "ModelContext",
    "Segment",
    "model_context",
]


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
    history_key = "input" if provider == "openai-responses" else "messages"
    conversation = conversation_of(payload.get(history_key))
    if provider == "anthropic":
        per_block = int(calibration()["anthropic"]["per_block"])
        out = Collector(provider, model, per_block, built, conversation)
        render_anthropic.render(payload, out)
    elif provider == "openai-responses":
        out = Collector(provider, model, per_message(), built, conversation)
        render_openai.render_responses(payload, out)
    elif provider in ("openai-chat", "kimi"):
        framing = per_message() if provider == "openai-chat" else 0
        out = Collector(provider, model, framing, built, conversation)
        render_chat(payload, out, provider)
    else:
        raise unknown_value("provider", provider, PROVIDERS)
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
