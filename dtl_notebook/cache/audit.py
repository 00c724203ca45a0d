"""Audit captured traffic: read a capture file and find where each provider's cache broke."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from dtl_notebook.cache.analyze import analyze_conversations
from dtl_notebook.cache.capture import (
    CaptureError,
    Exchange,
    detect_provider,
    load_capture,
)
from dtl_notebook.cache.entries import CacheReport

__all__ = [
    "CaptureAudit",
    "CaptureError",
    "audit_capture",
    "audit_jsonl",
    "detect_provider",
    "load_jsonl",
]


@dataclass
class CaptureAudit:
    """A capture analyzed per provider: `reports[provider]` covers that provider's answered
    requests in order; `errors` are the exchanges the provider refused (kept, not analyzed:
    a refused request writes no cache)."""

    exchanges: list[Exchange]
    reports: dict[str, CacheReport] = field(default_factory=dict)

    @property
    def errors(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.error is not None]

    def requests(self, provider: str) -> list[dict[str, Any]]:
        """The answered requests of one provider, in order (what `reports[provider]` covers)."""
        return [e.request for e in self.exchanges if e.error is None and e.provider == provider]

    def __getitem__(self, provider: str) -> CacheReport:
        return self.reports[provider]

    def __repr__(self) -> str:
        reports = ", ".join(f"{p}: {r!r}" for p, r in self.reports.items())
        return f"CaptureAudit({reports}; errors={len(self.errors)})"


def load_jsonl(path: str | Path) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(request, response or None) per call in a capture file (any format load_capture reads)."""
    return [(e.request, e.response) for e in load_capture(path)]


def audit_capture(path: str | Path, **overrides: Any) -> CaptureAudit:
    """One CacheReport per provider in a capture file (JSONL, HAR or SDK pair list); each
    entry's provider is detected on its own, so a mixed log is never one sequence."""
    exchanges = load_capture(path)
    if not exchanges:
        raise CaptureError(f"{path}: no provider requests")
    audit = CaptureAudit(exchanges)
    answered = [e for e in exchanges if e.error is None]
    for provider in dict.fromkeys(e.provider for e in answered):
        mine = [e for e in answered if e.provider == provider]
        audit.reports[provider] = _report(mine, provider, overrides)
    return audit


def audit_jsonl(path: str | Path, provider: str | None = None, **overrides: Any) -> CacheReport:
    """Analyze every answered request in a single-provider capture file, in order.
    `provider` overrides detection (every entry is read as that provider's); a file that
    mixes providers needs audit_capture."""
    exchanges = load_capture(path)
    if not exchanges:
        raise CaptureError(f"{path}: no requests")
    answered = [e for e in exchanges if e.error is None]
    if provider is None:
        counts = Counter(e.provider for e in answered)
        if len(counts) > 1:
            mixed = ", ".join(f"{p}: {n}" for p, n in counts.items())
            raise CaptureError(
                f"{path}: requests of several providers ({mixed}); "
                "audit_capture(path) gives one report per provider"
            )
        provider = next(iter(counts), exchanges[0].provider)
    return _report(answered, provider, overrides)


def _report(exchanges: list[Exchange], provider: str, overrides: dict[str, Any]) -> CacheReport:
    requests, responses = [e.request for e in exchanges], [e.response for e in exchanges]
    # the store's clock, where it has one; parallel requests may start out of row order
    known = list(accumulate((e.at for e in exchanges if e.at is not None), max))
    times = known if len(known) == len(exchanges) else None
    return analyze_conversations(requests, provider, responses, times=times, **overrides)
