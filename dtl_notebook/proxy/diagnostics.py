"""`--diagnostics`: the proxy asks the provider for its own cache diagnosis on every request.

The one edit the proxy makes to traffic, and only when asked: the request gets the provider's
cache-diagnostics field against the latest response of its conversation, so the response
says whether (and why) the cached prefix was missed.
- Anthropic: `diagnostics.previous_message_id` (null on a conversation's first request);
  https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
- OpenAI Responses: `prompt_cache_options.comparison_response_id`, on models that take
  `prompt_cache_options`, once the conversation has a response to compare with;
  https://platform.openai.com/docs/guides/prompt-caching
A request that already carries the field is left as it came.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.wire.profiles import profile_for
from dtl_notebook.wire.providers import spec


def with_diagnostics(
    request: dict[str, Any], provider: str, previous: str | None
) -> tuple[dict[str, Any], str] | None:
    """(the body with the diagnostics field, what was added), or None where nothing is."""
    model = request.get("model")
    style = spec(provider).diagnosis  # which field asks this provider for its diagnosis
    if style == "message-diagnostics":
        if "diagnostics" in request:
            return None
        return (
            {**request, "diagnostics": {"previous_message_id": previous}},
            f"diagnostics.previous_message_id = {previous or 'null'} (added by the proxy)",
        )
    if style != "prompt-cache-diagnostics" or previous is None or not isinstance(model, str):
        return None
    options = request.get("prompt_cache_options")
    if options is not None and not isinstance(options, dict):
        return None
    if "comparison_response_id" in (options or {}):
        return None
    try:
        takes_options = profile_for(provider, model)[0].exact_cache_boundary
    except Exception:  # a model the profiles do not know: nothing is added
        return None
    if not takes_options:
        return None
    edited = {
        **request,
        "prompt_cache_options": {**(options or {}), "comparison_response_id": previous},
    }
    return edited, f"prompt_cache_options.comparison_response_id = {previous} (added by the proxy)"
