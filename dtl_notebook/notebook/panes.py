"""What the three panes of a request share: windowing, lazily loaded bodies, link keys.

Long lists are windowed so a pane costs what the request adds, not what the history holds:
load points, active tools and the newest items are always shown, the rest is summarized.
The panes themselves are `state_pane`, `request_pane` and `context_pane`.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.html import (
    clip,
    element,
    esc,
    json_html,
    key,
    pre,
    text,
)
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.word_diff import pretty

TAIL = 20  # newest items always shown in full
HEAD = 24  # and the first ones (the prefix: tools, system)
RECENT_LOADS = 3  # load points shown wherever they are; older ones only inside the window
LIST_LIMIT = 200  # collapsed items listed by name, beyond that only counted


def item_path(path: str) -> str:
    """The carrier item of a JSON path: `messages.2.content.0` -> `messages.2`."""
    return ".".join(path.split(".")[:2])


def lp_key(path: str) -> str:
    return key("lp", item_path(path))


def recent_loads(rec: RequestRecord) -> list[Any]:
    """The newest load points of a request: always shown, however long the history."""
    return sorted(rec.load_points, key=lambda lp: lp.message_index)[-RECENT_LOADS:]


def names_list(names: list[str], what: str) -> str:
    listed = ", ".join(names[:LIST_LIMIT])
    more = f" … and {len(names) - LIST_LIMIT} more" if len(names) > LIST_LIMIT else ""
    return element(
        "details",
        text("summary", f"{len(names)} {what}", cls="dtl-muted")
        + text("div", listed + more, cls="dtl-muted"),
    )


class Bodies:
    """Where collapsed bodies go: inline (static HTML, export) or fetched on open (widget).

    With `lazy`, a collapsed body is a placeholder whose class names its ref
    (`dtl-ref:request:tools.3`); the front end asks for `body_html(record, ref)` when the
    user opens it, so a pane costs its summaries, not every definition in full. With
    `summaries_only` (a cell's snapshot, static), a collapsed item is its summary line alone.
    """

    def __init__(self, rec: RequestRecord, lazy: bool, *, summaries_only: bool = False) -> None:
        self.rec, self.lazy, self.summaries_only = rec, lazy, summaries_only
        self.refs: list[str] = []

    def details(self, summary_html: str, ref: str, *, open_: bool = False) -> str:
        if self.summaries_only and not open_:
            return element("div", summary_html, cls="dtl-closed")
        if self.lazy and not open_ and not any(c.isspace() for c in ref):
            self.refs.append(ref)
            body = element("div", "…", cls=f"dtl-pending dtl-ref:{redact(ref)}")
        else:
            body = body_html(self.rec, ref)
        return element("details", element("summary", summary_html) + body, open=open_)


def body_html(rec: RequestRecord, ref: str) -> str:
    """The body of one collapsed item.

    Refs: `request:<field>` or `request:<field>.<i>`, `context:<i>`, `state:section:<name>`.
    """
    pane, _, path = ref.partition(":")
    try:
        if pane == "request":
            field_name, _, index = path.partition(".")
            value = rec.payload[field_name]
            if index:
                value = value[int(index)]
            return pre(json_html(value, 2))
        if pane == "context":
            return pre(esc(clip(pretty(rec.context.segments[int(path)].text), 20_000)))
        if pane == "state" and path.startswith("section:") and rec.state is not None:
            return pre(esc(rec.state.sections[path.removeprefix("section:")]))
    except (KeyError, IndexError, ValueError, TypeError):
        pass
    return text("em", f"{ref}: not in this request", cls="dtl-muted")


def windowed(count: int, keep: set[int]) -> list[int | tuple[int, int]]:
    """Indexes to show, with runs of hidden ones as (start, end) pairs."""
    shown = set(range(max(0, count - TAIL), count)) | {i for i in keep if 0 <= i < count}
    out: list[int | tuple[int, int]] = []
    start = None
    for i in range(count):
        if i in shown:
            if start is not None:
                out.append((start, i))
                start = None
            out.append(i)
        elif start is None:
            start = i
    if start is not None:
        out.append((start, count))
    return out


def hidden_row(start: int, end: int, noun: str, ref: str = "") -> str:
    """A run of windowed items; with `ref` (`request:messages`) the view can open it in place."""
    window = f" dtl-window dtl-win:{redact(ref)}:{start}:{end}" if ref else ""
    said = (
        f"… {end - start} earlier {noun} ({start} to {end - 1}) unchanged; select an earlier "
        "request to see them"
    )
    return element("div", text("i", said), cls=f"dtl-row dtl-muted{window}")


# -- agent state ---------------------------------------------------------------------------------


def tool_name(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    function = item.get("function")
    if isinstance(function, dict):
        return str(function.get("name", ""))
    return str(item.get("name") or item.get("type") or "")
