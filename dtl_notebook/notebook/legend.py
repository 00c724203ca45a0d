"""The legend of the strips, marks and badges, and the session's cost in money."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from dtl_notebook.context.tokens import encoding_for
from dtl_notebook.notebook.html import badge, element, esc, grey_mark, mark, text
from dtl_notebook.notebook.prices import Costs, PriceTable, dollars, session_costs, shipped_prices
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.theme import (
    APPEND,
    BREAK,
    CARRIER,
    LOAD,
    MUTED,
    cell_style,
    tinted,
)

# the strip colours of view.css, inline for the static legend
STRIP = {
    "cached": "var(--jp-success-color1, rgb(45, 164, 78))",
    "written": "var(--jp-brand-color1, rgb(9, 105, 218))",
    "uncached": "var(--jp-layout-color4, rgb(140, 149, 159))",
}
_TOOL_KINDS = ("tool_schema", "loaded_schema", "tool_summary")


def _swatch(colour: str) -> str:
    style = f"display:inline-block;width:14px;height:6px;background:{colour};"
    return element("span", style=style + "border-radius:2px;vertical-align:middle")


def legend_html() -> str:
    """One collapsed line per family: the strips, the timeline marks, the badges."""
    strips = " ".join(f"{_swatch(c)} {esc(name)}" for name, c in STRIP.items())
    marks = " · ".join(
        [
            f"{mark('+5', LOAD)} tools loaded at a load point",
            element("span", "✕", style=tinted(BREAK, "padding:0 3px")) + " cache break (counted)",
            f"{grey_mark('not cacheable yet')} below the model's minimum (not a break)",
            f"{grey_mark('cold: new provider')} first request on a provider (not a break)",
        ]
    )
    badges = " · ".join(
        [
            badge("carrier: tool_reference", CARRIER) + " carries a load point on the wire",
            badge("load point: + tool", LOAD) + " where tools entered",
            badge("defer_loading · loaded in history") + " sent, seen only from its load point",
            badge("append (cache-safe)", APPEND) + " added after everything cached",
            badge("cache break", BREAK) + " the first edit of the cached prefix",
        ]
    )
    rows = "".join(
        element("div", f"{text('b', title)}: {body}")
        for title, body in (
            ("Strips (predicted; thin: reported)", strips),
            ("Marks", marks),
            ("Badges", badges),
            (
                "All requests (the strip above the timeline)",
                "one mark per request, grouped by turn: its green height the cached share, red a "
                "cache break, an amber top tools loaded; a click opens the request",
            ),
        )
    )
    return element("details", element("summary", "Legend") + rows, cls="dtl-legend")


def up_front_tokens(records: list[RequestRecord], registry: Iterable[Any]) -> list[int]:
    """Per request, the tokens of the registered tools missing from its model context."""
    tools = list(registry)
    counted: dict[tuple[str, str], dict[str, int]] = {}
    out = []
    for rec in records:
        sizes = counted.get((rec.provider, rec.model))
        if sizes is None:
            counter = encoding_for(rec.provider, rec.model)
            sizes = {
                t.name: counter.count(
                    json.dumps(
                        {"name": t.name, "description": t.description, "input": t.parameters},
                        ensure_ascii=False,
                    )
                )
                for t in tools
            }
            counted[(rec.provider, rec.model)] = sizes
        seen = {s.label for s in rec.context.segments if s.kind in _TOOL_KINDS}
        out.append(sum(n for name, n in sizes.items() if name not in seen))
    return out


def costs_for(
    records: list[RequestRecord],
    registry: Iterable[Any] | None = None,
    table: PriceTable | None = None,
) -> Costs:
    extra = up_front_tokens(records, registry) if registry is not None else None
    return session_costs(records, table or shipped_prices(), extra)


def request_cost_html(rec: RequestRecord, table: PriceTable | None = None) -> str:
    """One request's input cost and what caching saved on it, with the price's source."""
    price = (table or shipped_prices()).find(rec.model)
    if price is None:
        return text("span", f"cost: no price listed for {rec.model}", style=f"color:{MUTED}")
    cost = price.input_cost(rec.cache)
    saved = price.cost(rec.cache.total_tokens, 0, 0) - cost
    saving = (
        f"saved {dollars(saved)} by caching"
        if saved >= 0
        else f"{dollars(-saved)} more than sent uncached (a cache write costs more than input)"
    )
    if rec.spent is not None:
        saving += f" · session so far: input {dollars(rec.spent)}"
    hint = (
        f"${price.input:g} / MTok input, cached read x{price.cache_read:g}, "
        f"write x{price.cache_write:g}: {price.source}"
    )
    return element(
        "span", f"this request: input {dollars(cost)} · {esc(saving)}", cls="dtl-cost", title=hint
    )


def costs_html(costs: Costs, table: PriceTable | None = None, models: Iterable[str] = ()) -> str:
    """The session's input cost, what caching saved, and the all-tools-up-front figure."""
    if not costs.priced:
        return text("p", "Cost: no price listed for these models.", style=f"color:{MUTED}")
    parts = [
        f"input cost {dollars(costs.total)} as sent",
        f"{dollars(costs.uncached)} with nothing cached",
        f"saved {dollars(costs.saved)} by caching",
    ]
    if costs.up_front is not None:
        parts.append(f"{dollars(costs.up_front)} with every registered tool sent up front")
    table = table or shipped_prices()
    sources = []
    for model in dict.fromkeys(models):
        price = table.find(model)
        if price is not None:
            rate = (
                f"${price.input:g} / MTok input · read x{price.cache_read:g} · "
                f"write x{price.cache_write:g}"
            )
            cells = [text("code", price.model), rate, esc(price.source)]
            sources.append(
                element("tr", "".join(element("td", c, style=cell_style()) for c in cells))
            )
    table_style = "border-collapse:collapse;font-size:11px"
    listing = element("table", "".join(sources), style=table_style) if sources else ""
    unpriced = len(costs.per_request) - costs.priced
    note = f" ({unpriced} request(s) of unlisted models left out)" if unpriced else ""
    summary = element("summary", "<b>Cost</b>: " + esc(" · ".join(parts) + note))
    return element("details", summary + listing, cls="dtl-costs")
