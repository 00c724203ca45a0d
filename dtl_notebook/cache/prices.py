"""Token prices: an editable table (package data `cache/data/prices.json`, each entry naming
the provider's pricing page) of the input price per million tokens and the multipliers for a
cached read and a cache write (a separate one for Anthropic's 1-hour writes). `PriceTable.set`
returns an edited copy. The cache rules (warmth, keep-warm) and the notebook's costs read it.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from dtl_notebook.agent import checks


class Counted(Protocol):
    """A request's input tokens as the cache saw them (a CacheEntry)."""

    @property
    def uncached_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...
    @property
    def written_tokens(self) -> int: ...


__all__ = ["Price", "PriceTable", "shipped_prices"]

_SHORT_TTL = 300.0  # a write living longer than 5 minutes is priced as a 1-hour one


@dataclass(frozen=True)
class Price:
    """US dollars per million input tokens, and what a cached read and a cache write cost
    as a share of that price."""

    model: str
    input: float
    cache_read: float
    cache_write: float
    source: str
    cache_write_1h: float | None = None  # Anthropic's 1-hour writes, priced apart

    def write_share(self, ttl_seconds: float) -> float:
        """What a token written for `ttl_seconds` costs as a share of the input price."""
        if self.cache_write_1h is not None and ttl_seconds > _SHORT_TTL:
            return self.cache_write_1h
        return self.cache_write

    def input_cost(self, entry: Counted) -> float:
        """What one request's input cost as sent: its uncached, cached and written tokens."""
        return self.cost(entry.uncached_tokens, entry.cached_tokens, entry.written_tokens)

    def cost(self, uncached: int, cached: int, written: int) -> float:
        per_token = self.input / 1_000_000
        return per_token * (uncached + cached * self.cache_read + written * self.cache_write)


def _number(entry: dict[str, Any], name: str, model: str) -> float:
    value = entry.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"prices: {model}.{name} must be a number, got {value!r}")
    if value < 0:
        raise ValueError(f"prices: {model}.{name} must not be negative, got {value!r}")
    return float(value)


class PriceTable:
    """Prices by model; a model is found by its name or the longest listed prefix of it
    (`claude-sonnet-4-6-20260101` is priced as `claude-sonnet-4-6`)."""

    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = dict(prices)

    @classmethod
    def from_json(cls, text: str) -> PriceTable:
        data = json.loads(text)
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, dict):
            raise ValueError("prices: the table needs a `models` object")
        prices = {}
        for model, entry in models.items():
            if not isinstance(entry, dict):
                raise ValueError(f"prices: {model} must be an object, got {entry!r}")
            prices[model] = Price(
                model,
                _number(entry, "input", model),
                _number(entry, "cache_read", model),
                _number(entry, "cache_write", model),
                str(entry.get("source", "")),
                _number(entry, "cache_write_1h", model) if "cache_write_1h" in entry else None,
            )
        return cls(prices)

    @classmethod
    def default(cls) -> PriceTable:
        text = resources.files("dtl_notebook.cache").joinpath("data/prices.json").read_text()
        return cls.from_json(text)

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        return cls.from_json(Path(checks.file_path(path, "path")).read_text(encoding="utf-8"))

    def set(
        self,
        model: str,
        *,
        input: float | None = None,
        cache_read: float | None = None,
        cache_write: float | None = None,
        source: str = "set by hand",
    ) -> PriceTable:
        """A copy with `model`'s figures changed (a new model needs all three)."""
        checks.text(model, "model")
        old = self.prices.get(model)
        given = {"input": input, "cache_read": cache_read, "cache_write": cache_write}
        if old is None and None in given.values():
            missing = [k for k, v in given.items() if v is None]
            raise ValueError(f"prices: {model} is not listed; give {', '.join(missing)} too")
        merged = {k: v if v is not None else getattr(old, k) for k, v in given.items()}
        figures = {k: _number(merged, k, model) for k in given}
        base = old or Price(model, 0.0, 0.0, 0.0, source)
        table = PriceTable(self.prices)
        table.prices[model] = replace(
            base,
            input=figures["input"],
            cache_read=figures["cache_read"],
            cache_write=figures["cache_write"],
            source=source,
        )
        return table

    def find(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        listed = [m for m in self.prices if model.startswith(m)]
        return self.prices[max(listed, key=len)] if listed else None


@functools.cache
def shipped_prices() -> PriceTable:
    """The shipped table, read once (a `PriceTable` is never changed in place)."""
    return PriceTable.default()
