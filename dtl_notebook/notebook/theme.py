"""Colours that read in JupyterLab's light and dark themes, inline where a sanitizer needs them.

Text colours are JupyterLab theme variables with a light fallback (`var(--jp-…, #…)`); the
export defines the same variables for a dark `prefers-color-scheme`. Colours that carry
meaning (a load point, a break, an append) are translucent tints, so they take the
background of the theme they sit on: dark text on a pale tint in the light theme, light
text on a deep tint in the dark one, both above 4.5:1 (tests/notebook/browser/test_themes.py).
"""

from __future__ import annotations

FG = "var(--jp-content-font-color1, #1f2328)"
MUTED = "var(--jp-content-font-color2, #59636e)"
BORDER = "var(--jp-border-color2, #d0d7de)"

# tints: translucent, so the theme's own background shows through
LOAD = "rgba(255, 190, 40, .32)"  # a load point: yellow
BREAK = "rgba(255, 72, 72, .24)"  # the cache break: red
CARRIER = "rgba(64, 140, 255, .22)"  # an item that carries a load point on the wire
APPEND = "rgba(46, 170, 80, .24)"  # an append after everything cached: green
DELETED = "rgba(255, 72, 72, .30)"
INSERTED = "rgba(46, 170, 80, .30)"
NEUTRAL = "rgba(128, 128, 128, .20)"  # a fact, not a break: grey
EDGE_BREAK = "rgba(220, 40, 40, .85)"  # border lines only (never text)

KIND_TINTS = {
    "hidden": NEUTRAL,
    "tool_schema": "rgba(46, 170, 80, .20)",
    "tool_summary": "rgba(64, 140, 255, .18)",
    "system": "rgba(170, 90, 255, .18)",
    "system_patch": "rgba(170, 90, 255, .18)",
    "message": NEUTRAL,
    "tool_result": NEUTRAL,
    "loaded_schema": LOAD,
    "not_seen": "rgba(128, 128, 128, .32)",  # sent, dropped before the model saw it
}


def tinted(tint: str, extra: str = "") -> str:
    """A `style` value: a tint with the theme's text colour on it."""
    return f"background:{tint};color:{FG}{';' + extra if extra else ''}"


def cell_style(extra: str = "") -> str:
    """A static table cell: left-aligned (JupyterLab right-aligns `td`), theme border."""
    base = f"border-top:1px solid {BORDER};padding:2px 6px;text-align:left;vertical-align:top"
    return base + (";" + extra if extra else "")
