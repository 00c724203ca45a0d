"""What a `%%agent` cell's output keeps once a newer cell has the live view: its own turn.

A snapshot is static HTML that costs the same in the 32nd cell as in the first: the turn's
requests as table rows, the newest request's break, and its three panes collapsed into one
`<details>` with summary lines only (no item bodies: the live view opens any request in full).
No script, no widget, a few hundred elements whatever the length of the session; no
MathJax either (`html.static_block`).
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.notebook.document import pane_columns, panes, requests_table, title_line
from dtl_notebook.notebook.html import element, static_block, text
from dtl_notebook.notebook.legend import costs_for
from dtl_notebook.notebook.prices import PriceTable, shipped_prices
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.theme import MUTED


def snapshot_html(
    records: list[RequestRecord],
    header: dict[str, Any],
    previous: RequestRecord | None = None,
    *,
    prices: PriceTable | None = None,
) -> str:
    """The turn whose requests are `records` (`previous`: the request before them, for the
    break), as a cell keeps it."""
    parts = [title_line(header)]
    if not records:
        parts.append(text("p", "No request in this cell.", style=f"color:{MUTED}"))
        return _block(parts)
    first, last = records[0], records[-1]
    span = (
        f"request {first.index + 1}"
        if first is last
        else f"requests {first.index + 1} to {last.index + 1}"
    )
    turn = "" if last.state is None else f"turn {last.turn + 1}: "
    parts.append(" " + text("span", f"· this cell: {turn}{span}", style=f"color:{MUTED}"))
    parts.append(requests_table(records, costs_for(records, None, prices or shipped_prices())))
    data = panes(last, records[-2] if len(records) > 1 else previous, summaries_only=True)
    parts.append(data["break"])
    about = text(
        "span",
        "· three panes, items by name (the live view of a running session opens any request "
        "in full)",
        style=f"color:{MUTED}",
    )
    summary = element("summary", f"{text('b', data['title'])} {about}")
    parts.append(element("details", summary + pane_columns(data), cls="dtl-snapshot-panes"))
    return _block(parts)


def _block(parts: list[str]) -> str:
    return static_block("".join(parts), "dtl-snapshot", style="font-size:12px;text-align:left")
