"""The neutral result of parsing a provider response."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.messages import AssistantMessage, ToolCall
from dtl_notebook.agent.secrets import redact

JSON = dict[str, Any]


class ResponseFormatError(DtlError, ValueError):
    """A provider response that does not have the documented shape; names the field."""

    def __init__(self, provider: str, field: str, reason: str) -> None:
        self.provider, self.field, self.reason = provider, field, reason
        super().__init__(f"malformed {provider} response at {field}: {reason}")


@dataclass
class Reply:
    """A parsed response: the assistant message, usage as reported, and what it loaded."""

    message: AssistantMessage
    usage: JSON = field(default_factory=dict)
    stop_reason: str | None = None
    loaded_tool_names: list[str] = field(default_factory=list)
    raw: JSON = field(default_factory=dict)


class ProviderErrorResponse(ResponseFormatError):
    """The body is the provider's error object (e.g. a 400 or 429), not a response."""

    def __init__(self, provider: str, kind: str, message: str) -> None:
        self.kind, self.message = kind, redact(message)
        DtlError.__init__(self, f"{provider} returned an error ({kind}): {self.message}")
        self.provider, self.field, self.reason = provider, "error", message


def _error_body(data: JSON, provider: str) -> None:
    """Raise ProviderErrorResponse when `data` is an error body (both providers' shapes)."""
    error = data.get("error")
    if isinstance(error, dict) and (data.get("type") == "error" or len(data) <= 2):
        kind = str(error.get("type") or error.get("code") or "error")
        raise ProviderErrorResponse(provider, kind, str(error.get("message") or ""))


def as_dict(response: Any, provider: str) -> JSON:
    """A plain dict from an SDK model or a dict; an error body raises ProviderErrorResponse."""
    if isinstance(response, dict):
        _error_body(response, provider)
        return response
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", exclude_none=True, warnings=False)
        if isinstance(data, dict):
            return data
    raise ResponseFormatError(
        provider, "<root>", f"expected an object, got {type(response).__name__}"
    )


def require(data: JSON, key: str, kind: type | tuple[type, ...], provider: str, where: str) -> Any:
    """data[key], checked to be of `kind`; otherwise a ResponseFormatError naming the field."""
    if not isinstance(data, dict) or key not in data:
        raise ResponseFormatError(provider, f"{where}.{key}".lstrip("."), "missing")
    value = data[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ResponseFormatError(
            provider, f"{where}.{key}".lstrip("."), f"expected {names}, got {type(value).__name__}"
        )
    return value


def call_from_json(call_id: str, name: str, raw: str, namespace: str | None = None) -> ToolCall:
    """A tool call from JSON-text arguments; text that is not a JSON object is kept as
    `invalid_arguments`, so executing it gives the model an error result instead of a crash."""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(id=call_id, name=name, namespace=namespace, invalid_arguments=raw)
    return ToolCall(id=call_id, name=name, arguments=arguments, namespace=namespace)
