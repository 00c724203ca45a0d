"""The audit of a capture in one pass: each request read, analyzed and judged, then let go.

A proxy store is read row by row and each provider's analyzer keeps only its latest entry,
so a store of 100,000 exchanges is audited in the memory of a few requests. Each request's
model context is worked out once, for the analysis and the lint alike. The findings are
those of `audit_capture` + `conversation_findings`, per conversation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.capture import load_capture
from dtl_notebook.cache.conversation import ConversationFindings, FindingsBuilder
from dtl_notebook.cache.conversation_key import Conversations
from dtl_notebook.cache.exchange import CaptureError, Exchange
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.cache.store_reader import is_store, iter_store
from dtl_notebook.context.model import model_context


def iter_capture(path: str | Path) -> Iterator[Exchange]:
    """The exchanges of a capture file in order: a proxy store row by row, any other
    format as `load_capture` reads it."""
    return iter_store(path) if is_store(path) else iter(load_capture(path))


def audit_stream(path: str | Path) -> list[ConversationFindings]:
    """One ConversationFindings per conversation in the capture at `path` (named `path
    [provider]`, with the conversation where a provider has several): each request is
    compared only with its own conversation's earlier requests (`conversation_key`), so a new
    session or an interleaved parallel agent is never a break, while the cache is the
    scope's, one `PrefixStore` for the whole capture (a session reads what another wrote;
    one that loses it is `shared_prefix_lost`). Each request left out of the
    cache sequence (refused by the provider, or not one the analysis can read) is named with
    why in its provider's first group's `left_out`."""
    grouping = Conversations()
    store = PrefixStore()
    analyzers: dict[tuple[str, str], tuple[CacheAnalyzer, FindingsBuilder]] = {}
    left_out: dict[str, list[str]] = {}
    providers: list[str] = []
    empty = True
    for exchange in iter_capture(path):
        empty = False
        provider = exchange.provider
        if provider not in providers:
            providers.append(provider)
        if exchange.error is not None:
            left_out.setdefault(provider, []).append(f"{exchange.source}: {exchange.error}")
            continue
        name = grouping.assign(provider, exchange.request)
        response = exchange.response
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            grouping.answered(name, response["id"])
        if (provider, name) not in analyzers:
            builder = FindingsBuilder(f"{path} [{provider}, {name}]")
            analyzers[provider, name] = (CacheAnalyzer(provider, keep=False, store=store), builder)
        analyzer, findings = analyzers[provider, name]
        context = model_context(exchange.request, provider)
        entry = analyzer.add(exchange.request, response, exchange.at, context=context)
        findings.add(entry, exchange.request, exchange.at, context=context)
    if empty:
        raise CaptureError(f"{path}: no provider requests")
    return _groups(path, providers, analyzers, left_out)


def _groups(
    path: str | Path,
    providers: list[str],
    analyzers: dict[tuple[str, str], tuple[CacheAnalyzer, FindingsBuilder]],
    left_out: dict[str, list[str]],
) -> list[ConversationFindings]:
    """The finished groups, per provider in order of arrival; a provider with one
    conversation keeps the plain `path [provider]` name."""
    groups = []
    for provider in providers:
        own = [findings for (p, _), (_, findings) in analyzers.items() if p == provider]
        finished = [findings.finish() for findings in own] or [
            ConversationFindings(f"{path} [{provider}]")
        ]
        if len(finished) == 1:
            only = finished[0].name = f"{path} [{provider}]"
            finished[0].findings = [replace(f, conversation=only) for f in finished[0].findings]
        finished[0].left_out = left_out.get(provider, [])
        groups.extend(finished)
    return groups
