"""The views' front ends: their ES modules and CSS, assembled from the files in static/, and
the vocabulary both languages share (data/view.json: the panes, the messages each way)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from dtl_notebook.notebook.html import token_css

STATIC = Path(__file__).parent / "static"
SPEC = Path(__file__).parent / "data" / "view.json"
ESM_PARTS = (
    "view_dom.js",
    "view_warmth.js",
    "view_timeline.js",
    "view_links.js",
    "view_tools.js",
    "view_panes.js",
    "view.js",
)
CSS_PARTS = ("view.css", "view_controls.css")
_EXPORT = re.compile(r"^export default\b", re.MULTILINE)
PICKER_CSS = """
.dtl-proxy-bar { font-size: 12px; margin: 0 0 4px 0; }
.dtl-proxy-bar .dtl-conv-picker { font-size: 12px; max-width: 60ch; }
"""


def view_esm(css: str | None = None) -> str:
    """The front end as one ES module (small files, concatenated in order).

    With `css`, the module installs it once per page. anywidget's own `_css` rewrites its
    style element for every new widget, which makes the browser restyle the whole page:
    a cost that grows with every cell of a long notebook.
    """
    parts = [
        f"const VIEW_CSS = {json.dumps(css)};",
        f"const VIEW_SPEC = {json.dumps(view_spec())};",
    ]
    parts += [(STATIC / name).read_text(encoding="utf-8") for name in ESM_PARTS]
    return "\n".join(parts)


@cache
def view_spec() -> dict[str, Any]:
    """The panes (name, title) and the message types: `asks` (view to kernel), `answers`."""
    spec: dict[str, Any] = json.loads(SPEC.read_text(encoding="utf-8"))
    return spec


def pane_titles() -> dict[str, str]:
    return dict(view_spec()["panes"])


def view_css() -> str:
    return "".join((STATIC / name).read_text(encoding="utf-8") for name in CSS_PARTS)


def proxy_esm() -> str:
    """The view's module (view_esm), its default export renamed `agentView`, then the
    picker's wrapper as the module's default export; the picker's CSS joins the view's."""
    base = view_esm(view_css() + token_css() + PICKER_CSS)
    if len(_EXPORT.findall(base)) != 1:
        raise RuntimeError("the view's module must have exactly one `export default`")
    picker = (STATIC / "proxy_picker.js").read_text(encoding="utf-8")
    return _EXPORT.sub("const agentView =", base) + "\n" + picker
