"""How long a provider keeps a cached prefix, read from `data/retention.json` (each entry names
the provider's page): the lifetimes a request can ask for, whether a read refreshes them, and
whether the provider only tries (OpenAI's in-memory retention: cleared after 5 to 10 minutes
idle, always within an hour, best effort).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dtl_notebook.wire.providers import SPECS, spec

__all__ = ["Retention", "request_ttl", "retention"]


@dataclass(frozen=True)
class Retention:
    """A provider's cache lifetimes and how far they can be relied on."""

    provider: str
    ttl_seconds: tuple[tuple[str, float], ...]  # (what the request sends, seconds)
    refreshed_on_read: bool
    best_effort: bool
    note: str
    source: str
    earliest_seconds: float | None = None  # a best-effort entry may go this soon when idle
    max_seconds: float | None = None  # and never lives longer than this

    def ttl_for(self, asked: Any, default: float) -> float:
        """The lifetime a request asking for `asked` gets; `default` where it asks for none
        this provider knows."""
        return next((s for name, s in self.ttl_seconds if name == asked), default)


@functools.cache
def _table() -> dict[str, Retention]:
    text = resources.files("dtl_notebook.cache").joinpath("data/retention.json").read_text()
    out = {}
    for name, row in json.loads(text)["providers"].items():
        out[name] = Retention(
            name,
            tuple((k, float(v)) for k, v in row["ttl_seconds"].items()),
            bool(row["refreshed_on_read"]),
            bool(row["best_effort"]),
            str(row["note"]),
            str(row["source"]),
            row.get("earliest_seconds"),
            row.get("max_seconds"),
        )
    return out


def retention(provider: str) -> Retention:
    """The retention of `provider` (both OpenAI APIs share one); KeyError names the known."""
    entry = spec(provider).retention if provider in SPECS else provider  # the table's row
    try:
        return _table()[entry]
    except KeyError:
        known = ", ".join(_table())
        raise KeyError(f"no cache retention for {provider!r}; known: {known}") from None


def request_ttl(provider: str, payload: dict[str, Any], default: float) -> float:
    """The lifetime of the automatic cache entries a request writes: OpenAI's
    `prompt_cache_retention` where it asks for one, else `default` (the model's rule)."""
    return retention(provider).ttl_for(payload.get("prompt_cache_retention"), default)
