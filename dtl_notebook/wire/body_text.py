"""The exact text of a request body, reusing the text of every read-only item already written.

A native or hosted search body repeats thousands of tool items (and the transcript) from the
previous request; those items are frozen and shared (:mod:`.shared`, `agent.frozen`), so each
one's JSON text is written once and spliced into every later body. The result is the very
text `json.dumps(payload, ensure_ascii=False)` gives: the same separators (", " and ": "),
the same key order, each value written by `json.dumps` itself. Inside `shared.unshared` every
text is written afresh.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from dtl_notebook.agent.frozen import FrozenDict, FrozenList
from dtl_notebook.wire.shared import sharing

MAX_DEPTH = 4  # body -> tools -> namespace -> its tools: where shared items sit
MAX_TEXTS = 200_000  # beyond this the memo starts over (registries come and go)

_texts: dict[int, tuple[Any, str]] = {}  # id(frozen item) -> (the item, its text)
_lock = threading.Lock()


def body_text(payload: dict[str, Any]) -> str:
    """`json.dumps(payload, ensure_ascii=False)`, with frozen items written once."""
    return _text(payload, MAX_DEPTH)


def _text(value: Any, depth: int) -> str:
    """Plain containers near the top are written part by part (frozen parts come from the
    memo); anything deeper, or without frozen parts to reuse, by `json.dumps` in one go."""
    kind = type(value)
    if (kind is FrozenDict or kind is FrozenList) and sharing():
        return item_text(value)
    if depth and kind is dict and value and all(type(key) is str for key in value):
        fields = [f"{_dumps(key)}: {_text(item, depth - 1)}" for key, item in value.items()]
        return "{" + ", ".join(fields) + "}"
    if depth and kind is list and value:
        return "[" + ", ".join([_text(item, depth - 1) for item in value]) + "]"
    return _dumps(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def item_text(item: Any) -> str:
    """The JSON text of one frozen item, written once and remembered."""
    found = _texts.get(id(item))
    if found is not None and found[0] is item:
        return found[1]
    text = _dumps(item)
    with _lock:
        if len(_texts) >= MAX_TEXTS:
            _texts.clear()
        _texts[id(item)] = (item, text)  # the item is kept, so its id is not reused meanwhile
    return text


def forget() -> None:
    """Drop every remembered text."""
    with _lock:
        _texts.clear()
