"""One OpenTelemetry span per provider request, exported over OTLP/HTTP when configured.

Configured by an endpoint (`otlp_endpoint=`, the proxy's `--otlp-endpoint`), a tracer
provider of the caller's own (`tracer_provider=`), or the standard variables
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`, with
`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` and the rest read by the SDK itself).
Unconfigured, neither its SDK nor an exporter is imported. Spans go out in batches on the SDK's own
thread, so a request waits for none of it. Message content is written only when asked
(`capture_content=True` or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
"""

from __future__ import annotations

import os
import socket
import threading
from typing import TYPE_CHECKING, Any

from dtl_notebook.live.span_attributes import SpanFacts, span_attributes, span_name, telemetry_table

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

__all__ = ["Telemetry", "configured_telemetry", "traces_url"]

_TRUE = frozenset({"1", "true", "yes", "on"})


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of `endpoint`: a base (`http://host:4318`) gets `/v1/traces`,
    as `OTEL_EXPORTER_OTLP_ENDPOINT` does; a URL ending in it is kept."""
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"otlp_endpoint must be an http(s) URL, got {endpoint!r:.80}")
    path = telemetry_table()["traces_path"]
    base = endpoint.rstrip("/")
    return base if base.endswith(path) else base + path


def _env_endpoint() -> str | None:
    for name in telemetry_table()["endpoint_variables"]:
        if os.environ.get(name):
            return os.environ[name]
    return None


def _content_from_env() -> bool:
    name = telemetry_table()["content_capture_variable"]
    return os.environ.get(name, "").strip().lower() in _TRUE


class Telemetry:
    """Writes one span per request through a tracer (`record`), `flush` and `shutdown` it."""

    def __init__(self, tracer: Tracer, provider: Any, capture_content: bool) -> None:
        self.tracer, self.provider, self.capture_content = tracer, provider, capture_content
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

        self._kind, self._status, self._error = SpanKind.CLIENT, Status, StatusCode.ERROR
        self._internal, self._in_context = SpanKind.INTERNAL, set_span_in_context

    def start_turn(self, provider: str, model: str, turn: int) -> Span:
        """The span of one agent turn (`invoke_agent`): its requests' spans are its children,
        in one trace."""
        names: dict[str, str] = telemetry_table()["provider_names"]
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": names.get(provider, provider),
            "gen_ai.request.model": model,
            "dtl.turn": turn,
        }
        return self.tracer.start_span("invoke_agent", kind=self._internal, attributes=attributes)

    def end_turn(self, span: Span, error: str | None = None) -> None:
        if error is not None:
            span.set_attribute("error.type", "TurnError")
            span.set_status(self._status(self._error, error))
        span.end()

    def record(
        self, facts: SpanFacts, start_ns: int, end_ns: int, parent: Span | None = None
    ) -> None:
        """One CLIENT span from `start_ns` to `end_ns` (nanoseconds since the epoch), under
        `parent` (a turn's span) where given."""
        attributes = span_attributes(facts, self.capture_content)
        context = self._in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            span_name(facts.entry),
            context=context,
            kind=self._kind,
            start_time=start_ns,
            attributes=attributes,
        )
        if facts.status is not None and facts.status >= 400:
            span.set_attribute("error.type", str(facts.status))
            span.set_status(self._status(self._error))
        span.end(end_time=end_ns)

    def flush(self, timeout_ms: int = 10_000) -> bool:
        """Export what is pending now (True when it all went)."""
        flush = getattr(self.provider, "force_flush", None)
        return bool(flush(timeout_ms)) if flush is not None else True

    def shutdown(self) -> None:
        """Export what is pending: the exporter itself is shared, and stops at exit."""
        self.flush()


_PROVIDERS: dict[tuple[str | None, str], TracerProvider] = {}  # one exporter per destination
_PROVIDERS_LOCK = threading.Lock()


def _exporting_provider(url: str | None, service: str) -> TracerProvider:
    """The process's tracer provider batching spans to the OTLP/HTTP exporter of `url` (else
    the variables' endpoint): one per destination, so agents made by the hundred share one
    exporter thread; the SDK flushes it at exit."""
    with _PROVIDERS_LOCK:
        provider = _PROVIDERS.get((url, service))
        if provider is None:
            provider = _PROVIDERS[(url, service)] = _new_provider(url, service)
        return provider


def _new_provider(url: str | None, service: str) -> TracerProvider:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME") or service
    resource = Resource.create({"service.name": name, "host.name": socket.gethostname()})
    provider = TracerProvider(resource=resource)
    exporter = OTLPSpanExporter(endpoint=url) if url else OTLPSpanExporter()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def configured_telemetry(
    otlp_endpoint: str | None = None,
    tracer_provider: Any = None,
    capture_content: bool | None = None,
    service: str = "dtl_notebook",
) -> Telemetry | None:
    """A `Telemetry` where one is configured (the arguments first, then the variables),
    else None, with nothing of OpenTelemetry imported. `capture_content`: None reads
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`."""
    if capture_content is not None and not isinstance(capture_content, bool):
        raise TypeError(f"capture_content must be True, False or None, got {capture_content!r}")
    content = _content_from_env() if capture_content is None else capture_content
    if tracer_provider is not None:
        if not callable(getattr(tracer_provider, "get_tracer", None)):
            raise TypeError(
                f"tracer_provider must be an OpenTelemetry TracerProvider, got {tracer_provider!r}"
            )
        return Telemetry(tracer_provider.get_tracer("dtl_notebook"), tracer_provider, content)
    url = traces_url(otlp_endpoint) if otlp_endpoint is not None else None
    if url is None and _env_endpoint() is None:
        return None
    provider = _exporting_provider(url, service)
    return Telemetry(provider.get_tracer("dtl_notebook"), provider, content)
