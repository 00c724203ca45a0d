"""The exact text of a request body, reusing the text of every read-only item already written.

A native or hosted search body repeats thousands of tool items (and the transcript) from the
previous request; those items are frozen and shared (:mod:`.items`, :mod:`.frozen`), so each
one's JSON text is written once and spliced into every later body. The result is the very
text `json.dumps(payload, ensure_ascii=False)` gives: the same separators (", " and ": "),
the same key order, each value written by `json.dumps` itself. With reuse off every text is
written afresh.
"""

from __future__ import annotations

import json
from typing import Any

from dtl_notebook._reuse.frozen import FrozenDict, FrozenList
from dtl_notebook._reuse.registry import Memo, active

MAX_DEPTH = 4  # body -> tools -> namespace -> its tools: where shared items sit
CHUNK = 256  # a run's texts are kept in chunks of this many items, from the run's start
_FROZEN = (FrozenDict, FrozenList)

_TEXTS = Memo("item texts")  # id(frozen item) -> (ref to the item, its text)
# a chunk's item ids -> (refs to them, their joined text), while they live: weighed in characters
_RUNS = Memo("body texts: runs", weigh=lambda found: len(found[1]))


def body_text(payload: dict[str, Any]) -> str:
    """`json.dumps(payload, ensure_ascii=False)`, with frozen items written once."""
    out: list[str] = []
    _write(payload, MAX_DEPTH, out)
    return "".join(out)  # the one copy of the whole text


def _write(value: Any, depth: int, out: list[str]) -> None:
    """Plain containers near the top are written part by part (frozen parts come from the
    memo); anything deeper, or without frozen parts to reuse, by `json.dumps` in one go."""
    kind = type(value)
    if (kind is FrozenDict or kind is FrozenList) and active():
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
    if not active():
        plain = list(range(len(items)))
    else:
        plain = [i for i, kind in enumerate(map(type, items)) if kind not in _FROZEN]
    start = 0
    for end in [*plain, len(items)]:
        if end > start:
            if start:
                out.append(", ")
            _run_text(items[start:end], out)
        if end < len(items):
            out.append(", " if end else "")
            _write(items[end], depth, out)
        start = end + 1


def _run_text(run: list[Any], out: list[str]) -> None:
    """The run's items, comma-separated, chunk by chunk: a run that grew at its end (the
    history's messages) finds every chunk but the last one again."""
    for start in range(0, len(run), CHUNK):
        chunk = run[start : start + CHUNK] if len(run) > CHUNK else run
        key = tuple(map(id, chunk))
        found = _RUNS.hit(key)  # a chunk in use stays; the tails of earlier bodies go first
        if found is None:
            text = ", ".join(map(item_text, chunk))
            _RUNS.put_held(key, chunk, text)  # gone with the first of its items to go
        else:
            text = found[1]
        if start:
            out.append(", ")
        out.append(text)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def item_text(item: Any) -> str:
    """The JSON text of one frozen item, written once and remembered."""
    found = _TEXTS.get(id(item))
    if found is not None and found[0]() is item:
        return found[1]  # type: ignore[no-any-return]
    text = _dumps(item)
    if active():
        _TEXTS.put_owned(id(item), item, text)
    return text
