"""A captured exchange: one request body and what came back, checked as the API takes it.

Shared by every capture reader (`cache.capture` for logs and HAR files, `cache.store_reader`
for the proxy's SQLite store).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.secrets import redact
from dtl_notebook.cache.analyze import reported_usage
from dtl_notebook.cache.capture_request import detect_provider, request_problem
from dtl_notebook.wire.reply import (
    JSON,
    ProviderError,
    ResponseFormatError,
    body_preview,
    error_from_body,
)
from dtl_notebook.wire.stream import response_body


class CaptureError(DtlError, ValueError):
    """A capture entry that is not a request body or a {request, response} pair; names the
    file, the entry (line number or JSON path) and the field."""


@dataclass
class Exchange:
    """One captured request and what came back: a response object or a provider error."""

    source: str
    provider: str
    request: JSON
    response: JSON | None = None
    error: ProviderError | None = None
    status: int | None = None
    url: str | None = None
    _notes: list[str] | None = field(default=None, repr=False)
    at: float | None = None  # when it was sent (seconds), where the capture says

    @property
    def notes(self) -> list[str]:
        """Findings on the request as the API takes it (never a refusal: the provider saw
        it), worked out when first read: the view reads them, the audit does not, and they
        check the body against the SDKs' request types."""
        if self._notes is None:
            from dtl_notebook.wire.lenient import captured_findings

            self._notes = captured_findings(self.request, self.provider)
        return self._notes

    @notes.setter
    def notes(self, value: list[str]) -> None:
        self._notes = value

    def __repr__(self) -> str:  # captured bodies may hold keys: masked like everything shown
        fields = ", ".join(f"{k}={redact(v)!r}" for k, v in vars(self).items() if k != "_notes")
        return f"Exchange({fields})"


def refused(status: int | None) -> bool:
    """An HTTP status that means the provider did not answer (101 is a WebSocket upgrade,
    whose answer comes as events over the socket)."""
    return status is not None and status != 101 and not 200 <= status < 300


def json_body(value: Any, where: str) -> JSON:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            at = f" at line {exc.lineno} column {exc.colno}" if "\n" in value.strip() else ""
            raise CaptureError(
                f"{where}: not JSON ({exc.msg}{at}): {body_preview(value)}"
            ) from None
        except RecursionError:
            raise CaptureError(f"{where}: JSON nested too deep to read") from None
    if not isinstance(value, dict):
        raise CaptureError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def status_of(value: Any, where: str) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise CaptureError(f"{where}: expected an HTTP status number, got {value!r}")


def exchange_from(
    where: str, body: JSON, raw: Any, status: int | None = None, url: str | None = None
) -> Exchange:
    """Check the request body and turn the response into an object or a ProviderError."""
    if not isinstance(body.get("model"), str):
        raise CaptureError(f"{where}: request model: missing (every request body names one)")
    problem = request_problem(body)
    if problem is not None:
        raise CaptureError(f"{where}: request {problem}")
    provider = detect_provider(body, url)
    exchange = Exchange(where, provider, body, status=status, url=url)
    if raw is None or (raw == "" and refused(status)):
        if refused(status):
            exchange.error = ProviderError(provider, "empty error body", status)
        return exchange
    try:
        data = response_body(raw, provider)
        error = error_from_body(data, provider, status)
        if error is None and refused(status):
            error = ProviderError(provider, body_preview(json.dumps(data)), status)
        if error is not None:
            raise error
        reported_usage(data, provider)  # a usage count that is not a number is named here
    except ProviderError as exc:
        exchange.error = ProviderError(
            provider, exc.message, exc.status or status, exc.type, code=exc.code
        )
        return exchange
    except ResponseFormatError as exc:
        if refused(status):  # an HTML error page from a proxy, say
            exchange.error = ProviderError(provider, str(exc), status)
            return exchange
        raise CaptureError(f"{where}: response {exc.field}: {exc.reason}") from None
    if not isinstance(data, dict):
        raise CaptureError(f"{where}: response: expected an object, got {type(data).__name__}")
    exchange.response = data
    return exchange
