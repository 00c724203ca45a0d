"""The neutral result of parsing a provider response."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.messages import AssistantMessage, ToolCall, ToolCallPart
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
    refusal: str | None = None  # the model declined: its words (also a text part of `message`)
    incomplete_details: JSON | None = None  # why an OpenAI Responses reply stopped early


def with_real_names(reply: Reply, aliases: Mapping[str, str]) -> Reply:
    """The reply with calls to a versioned tool name (a redefinition the request could not
    express in place, `WireRequest.aliases`) mapped back to the real name; the request
    builders write the versioned name again where the call is replayed."""
    if not aliases:
        return reply
    content = [
        ToolCallPart(call=p.call.model_copy(update={"name": aliases[p.call.name]}))
        if isinstance(p, ToolCallPart) and p.call.name in aliases
        else p
        for p in reply.message.content
    ]
    if all(a is b for a, b in zip(content, reply.message.content, strict=True)):
        return reply
    return replace(reply, message=reply.message.model_copy(update={"content": content}))


class ProviderError(DtlError, RuntimeError):
    """The provider refused a request: its `status` (HTTP, when known), error `type`
    (e.g. `rate_limit_error`), `message`, the provider's `request_id` (when it sent one) and
    its `code` (Anthropic `error.details.error_code`).
    Every text is masked (API keys never show)."""

    def __init__(
        self,
        provider: str,
        message: str,
        status: int | None = None,
        type: str | None = None,
        *,
        request_id: str | None = None,
        code: str | None = None,
    ) -> None:
        self.provider, self.status, self.type = provider, status, type or "error"
        self.code = code  # Anthropic `error.details.error_code`, e.g. "thread_not_found"
        self.message = redact(message)
        self.request_id = redact(request_id) if request_id else None
        request = f"request {request_id}" if request_id else ""
        details = ", ".join(
            d for d in (f"HTTP {status}" if status else "", type or "", request) if d
        )
        where = f" ({details})" if details else ""
        super().__init__(redact(f"{provider} returned an error{where}: {self.message}"))


def error_from_body(data: Any, provider: str, status: int | None = None) -> ProviderError | None:
    """The ProviderError an error body stands for, or None for a response: Anthropic
    `{"type": "error", "error": {...}}`, OpenAI `{"error": {...}}`, a Responses stream `error`
    event, a Responses object whose `status` is `failed` (its `error` says why), the flat
    `{"object": "error", "message", "type", "code"}` of OpenAI-compatible servers such as vLLM,
    a proxy's `{"error": "text"}` and a web framework's `{"detail": ...}`."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    # an error object beside anything but a reply's own keys (`request_id`, a gateway's
    # `provider` or `metadata`) is the error: extra keys never hide its message
    if isinstance(error, dict) and (
        data.get("type") == "error" or len(data) <= 2 or not _REPLY_KEYS & set(data)
    ):
        kind = error.get("type") or error.get("code")
        message = error.get("message") or _unsaid(error)
        details = error.get("details")
        code = _text(details.get("error_code")) if isinstance(details, dict) else None
        return ProviderError(provider, str(message), status, _text(kind), code=code)
    if data.get("type") == "error" and "message" in data:  # Responses stream error event
        kind = data.get("code") or data.get("error_type")
        return ProviderError(provider, str(data["message"]), status, _text(kind))
    if data.get("object") == "error":  # vLLM and other compatible servers
        kind = data.get("type") or data.get("code")
        message = data.get("message") or "an error object without a message"
        return ProviderError(provider, str(message), status, _text(kind))
    if isinstance(error, str) and error and not _REPLY_KEYS & set(data):  # a proxy's own text
        return ProviderError(provider, error, status, _text(data.get("type") or data.get("code")))
    if set(data) == {"detail"}:  # a web framework's own error body (FastAPI, Starlette)
        return ProviderError(provider, str(data["detail"]), status, "detail")
    if data.get("status") == "failed" and isinstance(data.get("output"), list):
        failure = error if isinstance(error, dict) else {"message": error} if error else {}
        message = str(failure.get("message") or "the response failed without an error message")
        return ProviderError(provider, message, status, _text(failure.get("code")) or "failed")
    return None


_REPLY_KEYS = {"choices", "output", "content", "message"}


def _unsaid(error: dict[str, Any]) -> str:
    """What an error object without a `message` holds, shown so the user can read it."""
    return f"an error object without a message: {body_preview(json.dumps(error, default=str))}"


def _text(value: Any) -> str | None:
    return str(value) if value else None


def body_preview(body: str | bytes, limit: int = 120) -> str:
    """The start of a body for an error text, masked and clipped."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    clipped = text if len(text) <= limit else text[:limit] + "…"
    return repr(redact(clipped)) if clipped else "(empty body)"


def as_dict(response: Any, provider: str) -> JSON:
    """A plain dict from an SDK model or a dict; an error body raises ProviderError."""
    if isinstance(response, dict):
        error = error_from_body(response, provider)
        if error is not None:
            raise error
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
