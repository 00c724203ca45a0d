"""Cache figures as the provider reported them in a response's `usage`.

Anthropic reports `cache_read_input_tokens` and `cache_creation_input_tokens` on every reply.
OpenAI reports `cached_tokens` (and, from GPT-5.6, `cache_write_tokens`) under
`input_tokens_details` (Responses) or `prompt_tokens_details` (Chat Completions); Moonshot's Kimi
at the top of `usage`. Engines such as vLLM and SGLang leave `prompt_tokens_details` out when
nothing was cached, so a missing figure is unknown, not 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dtl_notebook.wire.providers import SPECS, spec
from dtl_notebook.wire.reply import ResponseFormatError

__all__ = ["Usage", "reported_usage"]


@dataclass(frozen=True)
class Usage:
    """Cache figures as the provider reported them. None where it did not say: engines such as
    vLLM and SGLang omit `prompt_tokens_details` when nothing was cached, so a missing figure
    is unknown, not 0 (`input` then still holds the reported input total)."""

    cached: int | None
    written: int | None
    uncached: int | None
    input: int | None = None

    def figures(self, sep: str = "/") -> str:
        """E.g. "1200/300/20", each unknown figure written "unknown"."""
        return sep.join(
            "unknown" if n is None else str(n) for n in (self.cached, self.written, self.uncached)
        )


def reported_usage(response: Any, provider: str) -> Usage | None:
    """Cache figures as the provider reported them (SDK object or dict). A count that is not
    a whole number raises ResponseFormatError naming it."""
    data = response if isinstance(response, dict) else getattr(response, "model_dump", dict)()
    usage = data.get("usage") if isinstance(data, dict) else None
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise ResponseFormatError(provider, "usage", f"expected an object, got {usage!r:.60}")

    def count(parent: Any, key: str, where: str = "usage") -> int:
        value = parent.get(key) if isinstance(parent, dict) else None
        if value is None:
            return 0
        if isinstance(value, float) and value.is_integer() and value >= 0:
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ResponseFormatError(
                provider, f"{where}.{key}", f"expected a token count, got {value!r}"
            )
        return value

    row = spec(provider)
    if row.usage_split:  # Anthropic reports all three cache figures apart on every reply
        cached, written, uncached = (count(usage, key) for key in row.usage_split)
        return Usage(cached, written, uncached, cached + written + uncached)
    key, total_key = _details(usage, row.usage_details)
    where = f"usage.{key}"
    total = count(usage, total_key)
    details = usage.get(key)
    if details is not None and not isinstance(details, dict):
        raise ResponseFormatError(provider, f"usage.{key}", f"expected an object, got {details!r}")
    if (details is None or details.get("cached_tokens") is None) and "cached_tokens" in usage:
        # Moonshot's Kimi reports its cache hits at the top of `usage`
        # (https://platform.moonshot.ai/docs/api/chat, the response's `usage.cached_tokens`)
        cached = count(usage, "cached_tokens")
        return Usage(cached, 0, total - cached, total)
    if details is None or details.get("cached_tokens") is None:
        return Usage(None, None, None, total)  # the engine did not say what was cached
    cached = count(details, "cached_tokens", where)
    written = count(details, "cache_write_tokens", where)
    return Usage(cached, written, total - cached - written, total)


def _details(usage: dict[str, Any], own: tuple[str, str] | None) -> tuple[str, str]:
    """(the usage object holding cached_tokens, the input total's field): the provider's own,
    unless the reply carries another API's (a Responses-shaped usage read as such)."""
    if own is not None and own[0] in usage:
        return own
    for provider in SPECS:
        found = spec(provider).usage_details
        if found is not None and found[0] in usage:
            return found
    if own is None:
        raise ValueError("a provider without usage_split needs usage_details in the table")
    return own
