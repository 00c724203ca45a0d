"""`ViewMessages`: the answers to what a view's front ends ask (a base of `AgentView`).

A request's panes, a body, a window of a long text, a search, a copy, a slice of the
timeline: each travels as a custom message, answered to the view that asked, so selection
is per view. A bad request is answered with an error to that view only.
"""

from __future__ import annotations

from typing import Any

import anywidget

from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.copying import copy_text
from dtl_notebook.notebook.document import panes, timeline_item
from dtl_notebook.notebook.panes import body_html
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.view_assets import view_spec
from dtl_notebook.notebook.window import search, window_html

CHUNK = 200  # timeline items per message when a front end asks for the history
ASKS = frozenset(view_spec()["asks"])  # each answered by its `_msg_<type>` method


class ViewMessages(anywidget.AnyWidget):
    """Answers each `{"type": T, ...}` message, T one of data/view.json's `asks`, with its
    `_msg_T` method (`AgentView` adds preview and switch); the view's requests are `records`,
    its previews `preview` and `previews`."""

    records: list[RequestRecord]
    preview: RequestRecord | None
    previews: dict[str, RequestRecord]

    @staticmethod
    def _lazy_panes(record: RequestRecord, previous: RequestRecord | None) -> dict[str, Any]:
        data = panes(record, previous, lazy=True)
        del data["refs"]  # the front end reads refs from the placeholders themselves
        return data

    def _record(self, index: int, provider: Any = None) -> RequestRecord | None:
        if index == -1:
            return self.previews.get(str(provider)) if provider else self.preview
        return self.records[index] if 0 <= index < len(self.records) else None

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") not in ASKS:
            return
        handler = getattr(self, f"_msg_{content['type']}")
        try:
            reply = handler(content)
        except (KeyError, ValueError, TypeError) as exc:  # bad input: said to that view only
            reply = {"type": "error", "text": redact(f"{content.get('type')}: {exc}")}
        except Exception as exc:  # shown in the view; the session is untouched
            reply = {"type": "error", "text": redact(f"{content.get('type')} failed: {exc}")}
        if reply is not None:
            self.send({**reply, "view": content.get("view")})

    def _asked(self, content: dict[str, Any]) -> RequestRecord:
        index = content.get("index")
        record = self._record(index, content.get("provider")) if isinstance(index, int) else None
        if record is None:
            raise KeyError(f"index {index!r}: no such request in this view")
        return record

    def _msg_body(self, content: dict[str, Any]) -> dict[str, Any]:
        ref = str(content.get("ref", ""))
        index = content.get("index")
        record = self._record(index, content.get("provider")) if isinstance(index, int) else None
        html = body_html(record, ref) if record is not None else ""
        return {"type": "body", "index": index, "ref": ref, "html": html}

    def _msg_panes(self, content: dict[str, Any]) -> dict[str, Any]:
        record = self._asked(content)
        previous = self.records[record.index - 1] if record.index > 0 else None
        return {"type": "panes", "index": record.index, "data": self._lazy_panes(record, previous)}

    def _msg_timeline(self, content: dict[str, Any]) -> None:
        start, end = content.get("start", 0), content.get("end", len(self.records))
        if not (isinstance(start, int) and isinstance(end, int)):
            raise TypeError(f"timeline: start and end must be integers, not {start!r}, {end!r}")
        start, end = max(0, start), min(len(self.records), end)
        for i in range(start, end, CHUNK):
            chunk = self.records[i : min(end, i + CHUNK)]
            self.send({"type": "timeline", "start": i, "items": [timeline_item(r) for r in chunk]})

    def _msg_copy(self, content: dict[str, Any]) -> dict[str, Any]:
        record = self._asked(content)
        what, path = str(content.get("what", "")), str(content.get("path", ""))
        return {"type": "copy", "what": what, "text": copy_text(record, what, path)}

    def _msg_window(self, content: dict[str, Any]) -> dict[str, Any]:
        record = self._asked(content)
        ref, start, end = content.get("ref"), content.get("start"), content.get("end")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
            raise ValueError(f"window: start and end must be integers, not {start!r}, {end!r}")
        html, _refs = window_html(record, str(ref), start, end)
        return {"type": "window", "index": record.index, "ref": ref, "start": start, "html": html}

    def _msg_search(self, content: dict[str, Any]) -> dict[str, Any]:
        record = self._asked(content)
        query = str(content.get("query", ""))[:200]
        found = search(record, query)
        return {"type": "search", "index": record.index, "query": query, "found": found}
