"""The providers' own cache diagnostics, next to the analyzer's predicted cause.

Anthropic (`anthropic.types.Diagnostics`): a request with `diagnostics.previous_message_id`
gets `diagnostics.cache_miss_reason` of type `model_changed`, `system_changed`,
`tools_changed`, `messages_changed` (with `cache_missed_input_tokens`),
`previous_message_not_found` or `unavailable`; `diagnostics: null` means no divergence (or
that none was asked for) and a null reason means the diagnosis is still pending.
OpenAI Responses (`Response.prompt_cache_diagnostics`, asked for with
`prompt_cache_options.comparison_response_id`): `cache_hit`, `cache_miss` with a `reason`
and `cache_missed_tokens`, `comparison_response_not_found` or `unavailable`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dtl_notebook.cache.causes import BreakCause, Part
from dtl_notebook.cache.codes import code
from dtl_notebook.wire.providers import spec

# the provider's reason -> the parts of the request our causes may name for it
_REASON_PARTS = {
    "model_changed": {"model"},
    "system_changed": {"system"},
    "tools_changed": {"tools"},
    "messages_changed": {"messages"},
    "input_changed": {"system", "messages"},  # Responses: instructions and input items
    "context_compacted": {"messages"},
}


@dataclass(frozen=True)
class ProviderDiagnosis:
    """What the provider said about reusing the previous request's prefix.

    `status`: "hit" (no divergence), "miss", "not_found" (the compared response is unknown),
    "pending" (not yet diagnosed) or "unavailable"; `reason` is the provider's own word.
    """

    provider: str
    status: str
    reason: str | None = None
    missed_tokens: int | None = None

    def __str__(self) -> str:
        what = self.reason or self.status
        return f"{what} ({self.missed_tokens} tokens)" if self.missed_tokens else what


def provider_diagnosis(
    response: Any, provider: str, request: dict[str, Any] | None = None
) -> ProviderDiagnosis | None:
    """The diagnosis in a response (SDK object or dict), or None where there is none.

    `request` (the payload) tells an Anthropic `diagnostics: null` that answers a comparison
    (no divergence) from one that was never asked for."""
    data = response if isinstance(response, dict) else _dump(response)
    if not isinstance(data, dict):
        return None
    style = spec(provider).diagnosis  # the table says which diagnosis the provider gives
    if style == "message-diagnostics":
        return _message(data, request, provider)
    if style == "prompt-cache-diagnostics":
        return _prompt_cache(data.get("prompt_cache_diagnostics"), provider)
    return None


def _dump(response: Any) -> Any:
    dump = getattr(response, "model_dump", None)
    return dump(mode="json") if callable(dump) else None


def _message(
    data: dict[str, Any], request: dict[str, Any] | None, provider: str
) -> ProviderDiagnosis | None:
    found = data.get("diagnostics")
    if not isinstance(found, dict):
        asked = (request or {}).get("diagnostics")
        if isinstance(asked, dict) and asked.get("previous_message_id"):
            return ProviderDiagnosis(provider, "hit")
        return None
    reason = found.get("cache_miss_reason")
    if not isinstance(reason, dict):
        return ProviderDiagnosis(provider, "pending")
    kind = str(reason.get("type"))
    if kind == "previous_message_not_found":
        return ProviderDiagnosis(provider, "not_found", kind)
    if kind == "unavailable":
        return ProviderDiagnosis(provider, "unavailable", kind)
    return ProviderDiagnosis(provider, "miss", kind, _int(reason.get("cache_missed_input_tokens")))


def _prompt_cache(found: Any, provider: str) -> ProviderDiagnosis | None:
    if not isinstance(found, dict):
        return None
    kind = found.get("type")
    if kind == "cache_hit":
        return ProviderDiagnosis(provider, "hit")
    if kind == "cache_miss":
        reason = str(found.get("reason"))
        missed = _int(found.get("cache_missed_tokens"))
        return ProviderDiagnosis(provider, "miss", reason, missed)
    if kind == "comparison_response_not_found":
        return ProviderDiagnosis(provider, "not_found", kind)
    return ProviderDiagnosis(provider, "unavailable", str(kind))


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def cause_part(cause: BreakCause | None) -> Part | None:
    """The part of the request a predicted cause changed; None where the prefix is unchanged
    (no break, expiry, no breakpoint, below the minimum)."""
    return code(cause).part if cause else None


def agreement(cause: BreakCause | None, diagnosis: ProviderDiagnosis | None) -> str:
    """The predicted cause against the provider's: "agree", "disagree" or "unavailable"."""
    if diagnosis is None or diagnosis.status not in ("hit", "miss"):
        return "unavailable"
    part = cause_part(cause)
    if diagnosis.status == "hit":
        return "agree" if part is None else "disagree"
    return "agree" if part in _REASON_PARTS.get(diagnosis.reason or "", set()) else "disagree"


def provider_reason(provider: str, cause: BreakCause | None) -> str | None:
    """The reason the provider would give for a predicted cause (None: no divergence)."""
    part = cause_part(cause)
    if part is None:
        return None
    table = spec(provider).diagnosis_reasons
    return table[part] if table else None  # a provider without a diagnosis gives no reason
