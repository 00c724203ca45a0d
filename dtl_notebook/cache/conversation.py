"""Every finding of a conversation: its breaks, its requests' lint (said once), its usage.

Usage-based findings need the responses: a prefix the analyzer saw intact but the provider
read nothing of (TTL, routing, or something outside the payload), a cache write no later
request read, and a gap between requests longer than the TTL (with send times).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.cache.entries import CacheEntry, CacheReport
from dtl_notebook.cache.findings import Finding, break_finding
from dtl_notebook.cache.health import HitCount
from dtl_notebook.cache.lint import lint
from dtl_notebook.cache.prefix_rules import cache_rule
from dtl_notebook.cache.tool_order import ToolOrderWatch
from dtl_notebook.context.model import ModelContext
from dtl_notebook.wire.request import WireRequest


@dataclass
class ConversationFindings:
    """A conversation's findings in request order, and its cache hit ratio. `left_out`
    names the requests of the capture that could not be analyzed, with why."""

    name: str | None
    findings: list[Finding] = field(default_factory=list)
    hit_ratio: float = 0.0  # read / input tokens: reported where recorded, else predicted
    reported: bool = False
    left_out: list[str] = field(default_factory=list)

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}


def conversation_findings(
    report: CacheReport,
    requests: list[Any],
    times: list[float] | None = None,
    name: str | None = None,
) -> ConversationFindings:
    """Findings of one analyzed conversation (`report` of `requests`, sent at `times`)."""
    found = FindingsBuilder(name)
    for entry, request in zip(report.entries, requests, strict=True):
        payload = request.payload if isinstance(request, WireRequest) else request
        found.add(entry, payload, times[entry.index] if times else None)
    return found.finish()


class FindingsBuilder:
    """A conversation's findings gathered one analyzed request at a time, in constant memory
    per request: what `conversation_findings` returns, for a capture too long to hold."""

    def __init__(self, name: str | None) -> None:
        self.out = ConversationFindings(name)
        self._said: set[str] = set()
        self._previous: tuple[CacheEntry, float | None] | None = None
        self._unread: list[Finding] = []  # writes no later request has read (yet)
        self._hits = HitCount()
        self._tool_orders = ToolOrderWatch()

    def add(
        self,
        entry: CacheEntry,
        payload: dict[str, Any],
        at: float | None = None,
        context: ModelContext | None = None,
    ) -> None:
        """Take the next analyzed request (`entry` of `payload`, sent at `at`); `context`:
        its model context as sent, where the caller has it."""
        name, k = self.out.name, entry.index
        reordered = self._tool_orders.check(payload)
        linted = lint(payload, entry.provider, entry.model, context=context)
        for found in [*linted, *([reordered] if reordered else [])]:
            if found.code not in self._said:  # a fact about the client: once per conversation
                self._said.add(found.code)
                self.out.findings.append(Finding(found.code, found.where, found.involved, k, name))
        if entry.cache_break is not None:
            self.out.findings.append(break_finding(entry.cache_break, k, name))
        thread = entry.thread
        if thread is not None and thread.event is not None:  # a thread lost or replaced
            named = thread.replaced or thread.previous_message_id
            self.out.findings.append(Finding(thread.event, None, [named] if named else [], k, name))
        lost = entry.shared_lost
        if lost is not None:
            why = [lost.part, f"{lost.tokens} tokens"]
            self.out.findings.append(
                Finding("shared_prefix_lost", lost.where, why, k, name, lost.tokens)
            )
        self._usage_findings(entry, at)
        self._hits.add(entry)
        self._previous = (entry, at)

    def finish(self) -> ConversationFindings:
        out = self.out
        last = self._previous[0].index if self._previous else None
        out.findings += [f for f in self._unread if f.index != last]  # a later request read none
        self._unread = []
        out.findings.sort(key=lambda f: f.index or 0)
        # an engine that did not say what it cached (cached unknown) tells nothing about hits
        read, total, out.reported = self._hits.result()
        out.hit_ratio = read / total if total else 0.0
        return out

    def _usage_findings(self, entry: CacheEntry, at: float | None) -> None:
        name, k = self.out.name, entry.index
        rule = cache_rule(entry.provider, entry.model)
        before = self._previous
        gap = at - before[1] if at is not None and before and before[1] is not None else 0.0
        if gap > rule.ttl_seconds:
            why = [f"{gap:.0f}s > {rule.ttl_seconds:.0f}s"]
            self.out.findings.append(Finding("ttl_gap", None, why, k, name))
        used = entry.reported
        if used is None or used.cached != 0:  # read (or unknown): earlier writes may be read
            self._unread = []
        if used is None:
            return
        intact = before is not None and entry.cache_break is None and entry.cached_tokens > 0
        if intact and used.cached == 0 and gap <= rule.ttl_seconds:
            why = [f"{entry.cached_tokens} tokens expected"]
            self.out.findings.append(Finding("prefix_intact_not_read", None, why, k, name))
        if (used.written or 0) > 0:
            why = [f"{used.written} tokens"]
            self._unread.append(Finding("write_never_read", None, why, k, name))
