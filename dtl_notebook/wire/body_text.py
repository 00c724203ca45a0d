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
MAX_RUN_CHARS = 32_000_000  # joined runs kept, in characters, before that memo starts over
_FROZEN = (FrozenDict, FrozenList)

_texts: dict[int, tuple[Any, str]] = {}  # id(frozen item) -> (the item, its text)
_runs: dict[tuple[int, ...], tuple[list[Any], str]] = {}  # item ids -> (the items, joined)
_run_chars = 0
_lock = threading.Lock()


def body_text(payload: dict[str, Any]) -> str:
    """`json.dumps(payload, ensure_ascii=False)`, with frozen items written once."""
    out: list[str] = []
    _write(payload, MAX_DEPTH, out)
    return "".join(out)  # the one copy of the whole text


def _write(value: Any, depth: int, out: list[str]) -> None:
    """Plain containers near the top are written part by part (frozen parts come from the
    memo); anything deeper, or without frozen parts to reuse, by `json.dumps` in one go."""
    kind = type(value)
    if (kind is FrozenDict or kind is FrozenList) and sharing():
        out.append(item_text(value))
    elif depth and kind is dict and value and all(type(key) is str for key in value):
        separator = "{"
        for key, item in value.items():
            out += (separator, _dumps(key), ": ")
            _write(item, depth - 1, out)
            separator = ", "
        out.append("}")
    elif depth and kind is list and value:
        out.append("[")
        _write_items(value, depth - 1, out)
        out.append("]")
    else:
        out.append(_dumps(value))


def _write_items(items: list[Any], depth: int, out: list[str]) -> None:
    """The items of a list, comma-separated; each run of frozen items (a body's 2,000 tool
    items) is joined once and found again by the identities of its items."""
    if not sharing():
        plain = list(range(len(items)))
    else:
        plain = [i for i, kind in enumerate(map(type, items)) if kind not in _FROZEN]
    start = 0
    for end in [*plain, len(items)]:
        if end > start:
            out += (", " if start else "", _run_text(items[start:end]))
        if end < len(items):
            out.append(", " if end else "")
            _write(items[end], depth, out)
        start = end + 1


def _run_text(run: list[Any]) -> str:
    global _run_chars
    key = tuple(map(id, run))
    found = _runs.get(key)
    if found is not None:
        return found[1]  # the run's items are kept, so no other object has their ids
    text = ", ".join(map(item_text, run))
    with _lock:
        if _run_chars + len(text) > MAX_RUN_CHARS:
            _runs.clear()
            _run_chars = 0
        _runs[key] = (run, text)
        _run_chars += len(text)
    return text


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
    global _run_chars
    with _lock:
        _texts.clear()
        _runs.clear()
        _run_chars = 0
