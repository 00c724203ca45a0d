"""Load modes side by side: one mode's requests through its own CacheAnalyzer, and the table.

The requests come from the layer above (live/load_modes.py: the same session serialized in
each mode); the figures are the analyzer's predictions under the provider's published caching
rules (cache/prefix_rules.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.wire import build_request


@dataclass(frozen=True)
class ModeFigures:
    """One mode's requests over the run, as the analyzer predicts them."""

    mode: str
    requests: int
    input_tokens: int
    cached_tokens: int
    best_cached_tokens: int  # the theoretical cache: each previous request's length, floored
    breaks: int
    first_request_tokens: int
    notes: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The share of the theoretical cache this mode keeps (1.0: all of it)."""
        return self.cached_tokens / self.best_cached_tokens if self.best_cached_tokens else 1.0


@dataclass(frozen=True)
class ModeComparison:
    provider: str
    model: str
    rows: list[ModeFigures]

    def table(self) -> str:
        """The rows as a fixed-width text table."""
        head = (
            f"{'mode':<12} {'requests':>8} {'input tokens':>13} {'cached':>10} "
            f"{'theoretical':>12} {'share':>7} {'breaks':>6}"
        )
        lines = [f"{self.provider} · {self.model}", head, "-" * len(head)]
        for r in self.rows:
            lines.append(
                f"{r.mode:<12} {r.requests:>8} {r.input_tokens:>13,} {r.cached_tokens:>10,} "
                f"{r.best_cached_tokens:>12,} {r.share:>7.1%} {r.breaks:>6}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()


class ModeColumn:
    """One mode's requests and their analyzer."""

    def __init__(self, provider: str, model: str, mode: str | None) -> None:
        self.provider, self.model = provider, model
        self.options: dict[str, Any] = {} if mode is None else {"load_mode": mode}
        self.analyzer = CacheAnalyzer(provider, model)
        self.label, self.notes = mode or "", list[str]()

    def add(self, session: Session) -> None:
        request = build_request(session, self.provider, self.model, **self.options)
        self.label, self.notes = request.mode, request.notes
        self.analyzer.add(request)

    def figures(self) -> ModeFigures:
        entries = self.analyzer.entries
        return ModeFigures(
            self.label,
            len(entries),
            sum(e.total_tokens for e in entries),
            sum(e.cached_tokens for e in entries[1:]),
            sum(e.best_cached_tokens for e in entries[1:]),
            sum(1 for e in entries if e.cache_break is not None),
            entries[0].total_tokens,
            list(self.notes),
        )
