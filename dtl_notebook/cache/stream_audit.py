"""The audit of a capture in one pass: each request read, analyzed and judged, then let go.

A proxy store is read row by row and each provider's analyzer keeps only its latest entry,
so a store of 100,000 exchanges is audited in the memory of a few requests. Each request's
model context is worked out once, for the analysis and the lint alike. The findings are
those of `audit_capture` + `conversation_findings`, per provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.capture import load_capture
from dtl_notebook.cache.conversation import ConversationFindings, FindingsBuilder
from dtl_notebook.cache.exchange import CaptureError, Exchange
from dtl_notebook.cache.store_reader import is_store, iter_store
from dtl_notebook.context.model import model_context


def iter_capture(path: str | Path) -> Iterator[Exchange]:
    """The exchanges of a capture file in order: a proxy store row by row, any other
    format as `load_capture` reads it."""
    return iter_store(path) if is_store(path) else iter(load_capture(path))


def audit_stream(path: str | Path) -> list[ConversationFindings]:
    """One ConversationFindings per provider in the capture at `path` (named `path
    [provider]`); each request left out of the cache sequence (refused by the provider, or
    not one the analysis can read) is named with why in its provider's `left_out`."""
    analyzers: dict[str, tuple[CacheAnalyzer, FindingsBuilder]] = {}
    left_out: dict[str, list[str]] = {}
    empty = True
    for exchange in iter_capture(path):
        empty = False
        provider = exchange.provider
        if provider not in analyzers:
            name = f"{path} [{provider}]"
            analyzers[provider] = (CacheAnalyzer(provider, keep=False), FindingsBuilder(name))
        if exchange.error is not None:
            left_out.setdefault(provider, []).append(f"{exchange.source}: {exchange.error}")
            continue
        analyzer, findings = analyzers[provider]
        context = model_context(exchange.request, provider)
        entry = analyzer.add(exchange.request, exchange.response, context=context)
        findings.add(entry, exchange.request, context=context)
    if empty:
        raise CaptureError(f"{path}: no provider requests")
    groups = []
    for provider, (_, findings) in analyzers.items():
        group = findings.finish()
        group.left_out = left_out.get(provider, [])
        groups.append(group)
    return groups
