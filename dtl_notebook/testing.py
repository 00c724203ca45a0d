"""Fail a test when a change breaks the prompt cache.

`assert_cache_stable(requests)` analyzes request bodies (or a capture file, or a
`CacheRecorder`) in order and raises AssertionError naming every failing finding with its
fix. `CacheRecorder` records what an SDK client sends: pass `recorder.http_client()` as the
client's `http_client` (it wraps the real transport, or one you give it). The pytest fixture
`cache_recorder` (plugin `dtl_notebook.pytest_plugin`) hands one to a test.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx2

from dtl_notebook.cache.analyze import analyze
from dtl_notebook.cache.audit import audit_capture
from dtl_notebook.cache.capture import detect_provider
from dtl_notebook.cache.codes import CODES
from dtl_notebook.cache.conversation import ConversationFindings, conversation_findings
from dtl_notebook.cache.fail_on import failing_codes
from dtl_notebook.wire.request import WireRequest

# every break that loses cached tokens, and requests the API refuses
DEFAULT_FAIL_ON = frozenset(
    c.code for c in CODES.values() if c.severity == "error" and c.kind in ("break", "lint")
)


class _Recording(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, recorder: CacheRecorder) -> None:
        self.inner, self.recorder = inner, recorder

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and request.content:
            try:
                body = json.loads(request.content)
            except ValueError:
                return response
            if isinstance(body, dict):
                self.recorder.record(body, str(request.url))
        return response

    def close(self) -> None:
        self.inner.close()


class CacheRecorder:
    """The request bodies an SDK client sent, in order, with the provider of each."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def record(self, body: dict[str, Any], url: str | None = None) -> None:
        self.requests.append((detect_provider(body, url), body))

    def transport(self, inner: httpx2.BaseTransport | None = None) -> httpx2.BaseTransport:
        """A transport that records each request, then sends it through `inner`."""
        return _Recording(inner or httpx2.HTTPTransport(), self)

    def http_client(self, transport: httpx2.BaseTransport | None = None) -> httpx2.Client:
        """An httpx2 client for an SDK's `http_client=`, recording every request."""
        return httpx2.Client(transport=self.transport(transport))


def cache_findings(requests: Any) -> list[ConversationFindings]:
    """The findings of recorded requests, request bodies or a capture file, per provider.
    Nothing to check (an empty recorder or list) is an AssertionError: a test whose client
    never sent through `CacheRecorder.http_client()` must not pass."""
    if isinstance(requests, (str, Path)):
        audit = audit_capture(requests)
        return [
            conversation_findings(r, audit.requests(p), name=p) for p, r in audit.reports.items()
        ]
    pairs = requests.requests if isinstance(requests, CacheRecorder) else _pairs(requests)
    if not pairs:
        where = "the recorder" if isinstance(requests, CacheRecorder) else "the list"
        raise AssertionError(
            f"no requests to check: {where} is empty (was the SDK client built with "
            "http_client=cache_recorder.http_client()?)"
        )
    out = []
    for provider in dict.fromkeys(p for p, _ in pairs):
        mine = [b for p, b in pairs if p == provider]
        out.append(conversation_findings(analyze(mine, provider=provider), mine, name=provider))
    return out


def assert_cache_stable(
    requests_or_capture: Any, *, fail_on: str | Iterable[str] = DEFAULT_FAIL_ON
) -> list[ConversationFindings]:
    """Raise AssertionError when a finding in `fail_on` appears; returns the findings.
    `fail_on`: codes and severities (a severity fails on itself and anything more severe),
    as a list or a comma-separated text."""
    failing = failing_codes(fail_on)
    groups = cache_findings(requests_or_capture)
    bad = [f for g in groups for f in g.findings if f.code in failing]
    if bad:
        lines = [f"request {f.index}: {f}\n    fix: {f.fix}" for f in bad]
        raise AssertionError(f"{len(bad)} cache finding(s):\n" + "\n".join(lines))
    return groups


def _pairs(requests: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(requests, dict) or not isinstance(requests, Iterable):
        one = (
            "one request body (a dict); pass a list of them, in order"
            if isinstance(requests, dict)
            else type(requests).__name__
        )
        raise TypeError(
            "requests_or_capture: expected request bodies (dicts or WireRequests) in order, "
            f"a CacheRecorder or a capture file's path, got {one}"
        )
    out = []
    for i, request in enumerate(requests):
        if isinstance(request, WireRequest):
            out.append((request.provider, request.payload))
        elif isinstance(request, dict):
            out.append((detect_provider(request, None), request))
        else:
            raise TypeError(
                f"requests_or_capture[{i}]: expected a dict or WireRequest, "
                f"got {type(request).__name__}"
            )
    return out
