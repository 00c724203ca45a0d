"""What a session's input tokens cost: per request, in total, saved by caching, and against
sending every registered tool up front. The prices are the cache layer's table
(`dtl_notebook.cache.prices`), re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dtl_notebook.cache.prices import Price as Price
from dtl_notebook.cache.prices import PriceTable as PriceTable
from dtl_notebook.cache.prices import shipped_prices as shipped_prices


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
