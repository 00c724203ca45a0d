"""The analyzer's results: one CacheEntry per request, and the CacheReport over them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dtl_notebook.cache.change_savings import ChangeSaving
from dtl_notebook.cache.diagnostics import ProviderDiagnosis
from dtl_notebook.cache.explain import CacheBreak
from dtl_notebook.cache.prefix_rules import CacheRule
from dtl_notebook.cache.prefix_store import LostPrefix
from dtl_notebook.cache.reported import Usage
from dtl_notebook.cache.response_continuation import Continuation
from dtl_notebook.cache.thread_events import ThreadFacts
from dtl_notebook.cache.warmth import Warmth
from dtl_notebook.context.model import ModelContext

__all__ = ["CacheEntry", "CacheReport", "disagreement"]


@dataclass(repr=False)
class CacheEntry:
    """The prediction for one request."""

    index: int
    provider: str
    model: str
    total_tokens: int
    cached_tokens: int
    written_tokens: int
    uncached_tokens: int
    best_cached_tokens: int
    cache_break: CacheBreak | None
    context: ModelContext
    reported: Usage | None = None
    disagreement: str | None = None
    diagnosis: ProviderDiagnosis | None = None  # the provider's own reason, when it gave one
    diagnosis_agreement: str = "unavailable"  # predicted cause vs. the provider's reason
    # a fact, not a break: the request is shorter than the model's minimum cacheable prefix,
    # so none of it is written to the cache, e.g. "40 < 1024 tokens"
    below_minimum: str | None = None
    # each tool change first carried here: its cost against a naive rewrite of the tools
    change_savings: list[ChangeSaving] = field(default_factory=list)
    # hidden prompts of hosted tools whose size is not published: shared by every request
    # with the same tool, they are read from the cache across conversations (a first request
    # included) but are not in `cached_tokens`
    shared_unpredicted: tuple[str, ...] = ()
    # what the request left warm in the cache, until when, and whether that lasts to the
    # next likely request (send times from `CacheAnalyzer.add(at=...)`)
    warmth: Warmth | None = None
    # an Anthropic message thread request: messages sent against those the model sees, the
    # thread's age against its expiry, and its event (thread_not_found, thread_replaced)
    thread: ThreadFacts | None = None
    # an OpenAI Responses `previous_response_id` continuation, read after what it continues
    continued: Continuation | None = None
    # a session's first request that departs from the prefix another session of the scope
    # left warm (`session_head`): not a break, a finding of its own
    shared_lost: LostPrefix | None = None
    # what the prediction read from: the provider's cache scope, in words, with how sure it is
    # ("model and prompt_cache_key routing, best effort"); `prefix_store.scope_words`
    scope: str = ""

    def __repr__(self) -> str:
        brk = f", break={str(self.cache_break.cause)!r}" if self.cache_break else ""
        brk += f", below the minimum ({self.below_minimum})" if self.below_minimum else ""
        return (
            f"CacheEntry(index={self.index}, cached={self.cached_tokens}, "
            f"written={self.written_tokens}, uncached={self.uncached_tokens}{brk})"
        )


@dataclass(repr=False)
class CacheReport:
    """One entry per request, in order."""

    entries: list[CacheEntry]

    def __repr__(self) -> str:
        cached = sum(e.cached_tokens for e in self.entries)
        total = sum(e.total_tokens for e in self.entries) or 1
        return (
            f"CacheReport(requests={len(self.entries)}, breaks={len(self.breaks)}, "
            f"cached={round(100 * cached / total)}%)"
        )

    def __getitem__(self, index: int) -> CacheEntry:
        return self.entries[index]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[CacheEntry]:
        return iter(self.entries)

    @property
    def breaks(self) -> list[CacheEntry]:
        return [e for e in self.entries if e.cache_break is not None]


def disagreement(entry: CacheEntry, rule: CacheRule) -> str | None:
    """How far the reported cached tokens are from the prediction, where beyond tolerance."""
    if entry.reported is None or entry.reported.cached is None:
        return None
    tolerance = max(rule.granularity, int(0.1 * max(entry.total_tokens, 1)))
    gap = entry.reported.cached - entry.cached_tokens
    if abs(gap) <= tolerance:
        return None
    why = (
        f"; the hidden prompt of {', '.join(entry.shared_unpredicted)} (size not published) is "
        "read from the cache across conversations and is not in the prediction"
        if gap > 0 and entry.shared_unpredicted
        else ""
    )
    return (
        f"predicted {entry.cached_tokens} cached tokens, the provider reported "
        f"{entry.reported.cached} ({'+' if gap > 0 else ''}{gap}){why}"
    )
