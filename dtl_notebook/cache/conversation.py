"""Every finding of a conversation: its breaks, its requests' lint (said once), its usage.

Usage-based findings need the responses: a prefix the analyzer saw intact but the provider
read nothing of (TTL, routing, or something outside the payload), a cache write no later
request read, and a gap between requests longer than the TTL (with send times).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from dtl_notebook.cache.entries import CacheReport
from dtl_notebook.cache.findings import Finding, break_finding
from dtl_notebook.cache.health import hit_tokens
from dtl_notebook.cache.lint import lint
from dtl_notebook.cache.prefix_rules import cache_rule
from dtl_notebook.wire.request import WireRequest


@dataclass
class ConversationFindings:
    """A conversation's findings in request order, and its cache hit ratio."""

    name: str | None
    findings: list[Finding] = field(default_factory=list)
    hit_ratio: float = 0.0  # read / input tokens: reported where recorded, else predicted
    reported: bool = False

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}


def conversation_findings(
    report: CacheReport,
    requests: list[Any],
    times: list[float] | None = None,
    name: str | None = None,
) -> ConversationFindings:
    """Findings of one analyzed conversation (`report` of `requests`, sent at `times`)."""
    out = ConversationFindings(name)
    said: set[str] = set()
    for entry, request in zip(report.entries, requests, strict=True):
        payload = request.payload if isinstance(request, WireRequest) else request
        for found in lint(payload, entry.provider, entry.model):
            if found.code not in said:  # a fact about the client: once per conversation
                said.add(found.code)
                out.findings.append(_at(found, entry.index, name))
        if entry.cache_break is not None:
            out.findings.append(break_finding(entry.cache_break, entry.index, name))
    out.findings += _usage(report, times, name)
    out.findings.sort(key=lambda f: f.index or 0)
    read, total, out.reported = hit_tokens(report.entries)
    out.hit_ratio = read / total if total else 0.0
    return out


def _at(found: Finding, index: int, name: str | None) -> Finding:
    return replace(found, index=index, conversation=name)


def _usage(report: CacheReport, times: list[float] | None, name: str | None) -> list[Finding]:
    out: list[Finding] = []
    entries = report.entries
    for k, entry in enumerate(entries):
        rule = cache_rule(entry.provider, entry.model)
        gap = times[k] - times[k - 1] if times and k else 0.0
        if gap > rule.ttl_seconds:
            out.append(Finding("ttl_gap", None, [f"{gap:.0f}s > {rule.ttl_seconds:.0f}s"], k, name))
        used = entry.reported
        if used is None:
            continue
        intact = k and entry.cache_break is None and entry.cached_tokens > 0
        if intact and used.cached == 0 and gap <= rule.ttl_seconds:
            why = [f"{entry.cached_tokens} tokens expected"]
            out.append(Finding("prefix_intact_not_read", None, why, k, name))
        later = entries[k + 1 :]
        if (
            (used.written or 0) > 0
            and later
            and all(e.reported is not None and e.reported.cached == 0 for e in later)
        ):
            out.append(Finding("write_never_read", None, [f"{used.written} tokens"], k, name))
    return out
