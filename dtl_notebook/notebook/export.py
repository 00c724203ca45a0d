"""`export_html`: one self-contained HTML file of a whole session that loads nothing.

The page inlines the widget's own ESM and CSS and every request's panes, and drives the
ESM with a small in-page model, so the timeline, the linking and the copy buttons work
from `file://`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.agent.files import write_atomic
from dtl_notebook.live.agent import Agent
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.copying import CURL_TAIL, curl_head
from dtl_notebook.notebook.document import (
    agent_header,
    agent_records,
    panes,
    static_html,
    timeline_item,
)
from dtl_notebook.notebook.html import esc, token_css
from dtl_notebook.notebook.panes import body_html
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.view_assets import STATIC, view_css, view_esm
from dtl_notebook.notebook.widget import AgentView

_THEMES = """
:root { --jp-layout-color0: #ffffff; --jp-layout-color1: #ffffff; --jp-layout-color2: #f6f8fa;
        --jp-content-font-color1: #1f2328; --jp-content-font-color2: #59636e;
        --jp-border-color2: #d0d7de; --jp-error-color0: #b71c1c; }
@media (prefers-color-scheme: dark) {
  :root { --jp-layout-color0: #0d1117; --jp-layout-color1: #0d1117; --jp-layout-color2: #161b22;
          --jp-content-font-color1: #e6edf3; --jp-content-font-color2: #9198a1;
          --jp-border-color2: #30363d; --jp-error-color0: #f85149; --jp-brand-color1: #4493f8;
          --jp-warn-color1: #d29922; }
  .dtl-view { --dtl-warm-ok: #3fb950; --dtl-warm-warn: #d29922; }
}
body { margin: 12px; background: var(--jp-layout-color0); color: var(--jp-content-font-color1);
       font-family: system-ui, sans-serif; }
"""


def _script_json(value: Any) -> str:
    """JSON safe inside <script>: no `</script>` or `<!--` can end or open anything."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_page(records: list[RequestRecord], header: dict[str, Any], registry: Any = None) -> str:
    """The whole page as a string; `registry`: the session's tools, for the cost of sending
    them all up front."""
    all_panes = [panes(r, records[i - 1] if i else None, lazy=True) for i, r in enumerate(records)]
    bodies: dict[str, int] = {}
    texts: dict[str, int] = {}  # identical bodies (the same tool in every request) stored once
    for record, data in zip(records, all_panes, strict=True):
        for ref in data.pop("refs"):
            text = body_html(record, ref)
            bodies[f"{record.index}|{ref}"] = texts.setdefault(text, len(texts))
    state = {
        "header": {**header, "live": False, "status": "exported"},
        "tail": {"start": 0, "items": [timeline_item(r) for r in records]},
        "count": len(records),
        "selected": len(records) - 1,
        "panes": all_panes[-1] if all_panes else {},
        "providers": [],
    }
    data = {
        "esm": view_esm(),
        "state": state,
        "panes": all_panes,
        "bodies": bodies,
        "texts": list(texts),
        "copies": Copies(records).data(),
    }
    css = (
        view_css()
        + token_css()
        + _THEMES
        + "@media (prefers-color-scheme: dark) {\n"
        + token_css(":root")
        + "\n}\n"
    )
    fallback = static_html(records, header, registry=registry)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(header.get('title', 'dtl_notebook'))}</title>"
        f"<style>{css}</style></head><body>"
        f'<div id="dtl-root">{fallback}</div>'
        f'<script type="application/json" id="dtl-data">{_script_json(data)}</script>'
        f'<script type="module">{(STATIC / "standalone.js").read_text(encoding="utf-8")}</script>'
        "</body></html>\n"
    )


class Copies:
    """What the page's copy buttons copy without a kernel: each request's body as its fields'
    items, every distinct item stored once (a session's requests repeat their tools and
    history), and the curl command's head (the key read from the shell); the page writes the
    JSON back with two-space indents, as the kernel does."""

    def __init__(self, records: list[RequestRecord]) -> None:
        self.items: dict[str, int] = {}
        self.requests = [self._request(r) for r in records]

    def _item(self, value: Any) -> int:
        return self.items.setdefault(json.dumps(value, ensure_ascii=False), len(self.items))

    def _request(self, record: RequestRecord) -> dict[str, Any]:
        body = redact(record.payload)
        fields = {
            name: [self._item(v) for v in value] if isinstance(value, list) else self._item(value)
            for name, value in body.items()
        }
        try:
            head: str | None = curl_head(record)
        except KeyError:  # a provider with no public endpoint
            head = None
        return {"fields": fields, "curl": head}

    def data(self) -> dict[str, Any]:
        return {"items": list(self.items), "requests": self.requests, "tail": CURL_TAIL}


def export_html(source: Agent | AgentView, path: str | Path, title: str = "dtl_notebook") -> Path:
    """Write every request of an agent (or a view) to one self-contained HTML file."""
    checks.file_path(path, "path")  # named before the page is rendered
    checks.text(title, "title", empty=True)
    if isinstance(source, AgentView):
        records, header, agent = source.records, source.header_data(), source.agent
    elif isinstance(source, Agent):
        records, header, agent = agent_records(source), agent_header(source, title), source
    else:
        raise checks.type_error("source", "an Agent or an AgentView", source)
    registry = agent.session.registry if agent is not None else None
    return write_atomic(path, render_page(records, header, registry))
