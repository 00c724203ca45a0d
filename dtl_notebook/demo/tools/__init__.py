"""The demo tools the lessons call, written by hand over the demo world's data.

Each is a plain function named as its tool; one whose first parameter is `world` reads or
changes the state of one catalog (a `records.World`), bound when the catalog is built.
Every other catalog tool is answered by `dtl_notebook.demo.fake`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtl_notebook.demo.tools import conversions, files, lookups, shipping, weather

HAND_WRITTEN: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for module in (shipping, weather, files, lookups, conversions)
    for fn in module.TOOLS
}

__all__ = ["HAND_WRITTEN"]
