"""What the view opens in place: the rows of a windowed run, and where a text occurs.

Panes show the prefix and the newest items; the runs between are one row each
(`panes.hidden_row`). `window_html` renders such a run's rows (bodies still lazy) so the view
can open it where it stands, and `search` looks through every item of a request, collapsed
or windowed, so the view's filter finds what the panes do not show.
"""

from __future__ import annotations

import json
from typing import Any

from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.context_pane import _divergence_index, _segment
from dtl_notebook.notebook.panes import Bodies, hidden_row, item_path, tool_name
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.request_pane import _item
from dtl_notebook.notebook.state_pane import _message_row

WINDOW_LIMIT = 200  # rows per opening; the rest stays one row
MATCH_LIMIT = 60


def window_html(rec: RequestRecord, ref: str, start: int, end: int) -> tuple[str, list[str]]:
    """The rows `start`..`end` of the windowed run `ref` (`request:messages`, `context`,
    `state:messages`), and the refs of their lazy bodies."""
    bodies = Bodies(rec, lazy=True)
    stop = min(end, start + WINDOW_LIMIT)
    rows: list[str] = []
    if ref in ("request:messages", "request:input"):
        name = ref.partition(":")[2]
        items = rec.payload.get(name)
        if not isinstance(items, list):
            raise KeyError(f"ref {ref!r}: the request has no list {name!r}")
        loads = {item_path(lp.path): lp for lp in rec.load_points}
        for i in range(start, min(stop, len(items))):
            lp = loads.get(f"{name}.{i}")
            rows.append(_item(name, i, items[i], bodies, lp=lp))
        noun = "items"
    elif ref == "context":
        segments = rec.context.segments
        diverged = _divergence_index(rec)
        broke = rec.cache.cache_break is not None
        for i in range(start, min(stop, len(segments))):
            rows.append(_segment(i, segments[i], broke and i == diverged, bodies))
        noun = "segments"
    elif ref == "state:messages":
        paths = {lp.message_index: lp.path for lp in rec.load_points}
        for i in range(start, min(stop, len(rec.messages))):
            rows.append(_message_row(i, rec.messages[i], paths))
        noun = "messages"
    else:
        raise KeyError(f"ref {ref!r}: not a windowed list")
    if stop < end:
        rows.append(hidden_row(stop, end, noun, ref))
    return "".join(rows), bodies.refs


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(redact(value), ensure_ascii=False)


def search(rec: RequestRecord, query: str) -> list[dict[str, Any]]:
    """Every item of the request whose text holds `query` (case-insensitive): its ref, a
    label, and the windowed run it sits in, if any."""
    needle = query.casefold().strip()
    if not needle:
        return []
    found: list[dict[str, Any]] = []

    def add(ref: str, label: str, text: str, window: str = "", index: int = -1) -> None:
        if len(found) < MATCH_LIMIT and needle in text.casefold():
            found.append({"ref": ref, "label": label, "window": window, "index": index})

    for name, value in rec.payload.items():
        if isinstance(value, list) and name in ("tools", "messages", "input"):
            for i, item in enumerate(value):
                label = f"{name}[{i}] {tool_name(item)}".rstrip()
                add(f"request:{name}.{i}", label, _text(item), f"request:{name}", i)
        else:
            add(f"request:{name}", name, _text(value))
    for i, seg in enumerate(rec.context.segments):
        add(
            f"context:{i}",
            f"segment {i} {seg.kind} {seg.label}",
            seg.label + seg.text,
            "context",
            i,
        )
    if rec.state is not None:
        for name, text in rec.state.sections.items():
            add(f"state:section:{name}", f"section {name}", text)
    return found
