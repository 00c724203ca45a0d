"""What a session's input tokens cost: per request, in total, saved by caching, and against
sending every registered tool up front.

Prices come from an editable table (package data `notebook/data/prices.json`, each entry
naming the provider's pricing page): the input price per million tokens and the multipliers
for a cached read and a cache write. `PriceTable.set` returns an edited copy.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.cache.entries import CacheEntry


@dataclass(frozen=True)
class Price:
    """US dollars per million input tokens, and what a cached read and a cache write cost
    as a share of that price."""

    model: str
    input: float
    cache_read: float
    cache_write: float
    source: str

    def cost(self, uncached: int, cached: int, written: int) -> float:
        per_token = self.input / 1_000_000
        return per_token * (uncached + cached * self.cache_read + written * self.cache_write)

    def input_cost(self, entry: CacheEntry) -> float:
        """What one request's input cost as sent: its uncached, cached and written tokens."""
        return self.cost(entry.uncached_tokens, entry.cached_tokens, entry.written_tokens)


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
            )
        return cls(prices)

    @classmethod
    def default(cls) -> PriceTable:
        text = resources.files("dtl_notebook.notebook").joinpath("data/prices.json").read_text()
        return cls.from_json(text)

    @staticmethod
    @functools.cache
    def listed() -> PriceTable:
        """The package's table, read once (an edit is a copy: `set`)."""
        return PriceTable.default()

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


@dataclass(frozen=True)
class Costs:
    """A session's input cost (dollars): as sent, with nothing cached, and with every
    registered tool sent up front (`None` where the registry is not known)."""

    per_request: list[float | None]
    total: float
    uncached: float
    up_front: float | None
    priced: int  # requests with a known price

    @property
    def saved(self) -> float:
        return self.uncached - self.total


def session_costs(
    records: list[Any], table: PriceTable, up_front_tokens: list[int] | None = None
) -> Costs:
    """Costs of `records` (RequestRecords). `up_front_tokens`: per request, the tokens the
    registered tools missing from its context would add if all were sent up front."""
    per_request: list[float | None] = []
    total = uncached = up_front = 0.0
    for i, rec in enumerate(records):
        price = table.find(rec.model)
        if price is None:
            per_request.append(None)
            continue
        cost = price.input_cost(rec.cache)
        per_request.append(cost)
        total += cost
        uncached += price.cost(rec.cache.total_tokens, 0, 0)
        # up front, the tool prefix is stable: written by the first request, read after
        extra = up_front_tokens[i] if up_front_tokens else 0
        up_front += cost + price.cost(0, extra if i else 0, 0 if i else extra)
    priced = sum(c is not None for c in per_request)
    return Costs(per_request, total, uncached, up_front if up_front_tokens else None, priced)


def dollars(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
