"""Line diffs with word-level marks inside changed lines, unified or side by side.

Changed lines are shown whole (with a few unchanged lines around them); inside a pair of
changed lines `<del>` / `<ins>` cover whole words and names, never parts of them, so
`write_file` → `read_file` reads as one name replaced by another. Everything is escaped.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.html import deleted, element, esc, inserted, pre
from dtl_notebook.notebook.theme import BORDER, DELETED, INSERTED, MUTED, tinted

_WORD = re.compile(r"\w+|\s+|[^\w\s]")
CONTEXT = 2  # unchanged lines kept around a change
LINE_LIMIT = 400  # lines of one diff shown; the rest are counted


def words(text: str) -> list[str]:
    """Words and names (`\\w+`), runs of spaces, and single punctuation marks."""
    return _WORD.findall(text)


def inline_diff(old: str, new: str) -> tuple[str, str]:
    """`old` and `new` as HTML, the words that differ wrapped in `<del>` / `<ins>`. Secrets
    are masked in the whole texts first, so none survives split across two words."""
    a, b = words(str(redact(old))), words(str(redact(new)))
    left, right = [], []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_part, new_part = esc("".join(a[i1:i2])), esc("".join(b[j1:j2]))
        if tag == "equal":
            left.append(old_part)
            right.append(new_part)
            continue
        if old_part:
            left.append(deleted(old_part))
        if new_part:
            right.append(inserted(new_part))
    return "".join(left), "".join(right)


def pretty(text: str) -> str:
    """JSON text indented (so it wraps at spaces and diffs by line); other text as it is."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and "\n" not in stripped:
        try:
            return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Row:
    """One line of a diff: `kind` is " " (context), "-", "+", "~" (changed pair) or "…"."""

    kind: str
    old: str = ""  # HTML
    new: str = ""  # HTML


def diff_rows(old: str, new: str, context: int = CONTEXT) -> list[Row]:
    """The rows of a line diff; runs of unchanged lines beyond `context` become one "…"."""
    a, b = str(redact(old)).splitlines(), str(redact(new)).splitlines()
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            same = a[i1:i2]
            first, last = i1 == 0, i2 == len(a)
            head = [] if first else same[:context]
            tail = [] if last else same[-context:]
            if len(same) > len(head) + len(tail):
                rows += [Row(" ", esc(x), esc(x)) for x in head]
                hidden = len(same) - len(head) - len(tail)
                rows.append(Row("…", f"{hidden} unchanged line{'s' if hidden != 1 else ''}"))
                rows += [Row(" ", esc(x), esc(x)) for x in tail]
            else:
                rows += [Row(" ", esc(x), esc(x)) for x in same]
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(pairs):
            rows.append(Row("~", *inline_diff(a[i1 + k], b[j1 + k])))
        rows += [Row("-", esc(x)) for x in a[i1 + pairs : i2]]
        rows += [Row("+", "", esc(x)) for x in b[j1 + pairs : j2]]
    return rows


def _clipped(rows: list[Row]) -> tuple[list[Row], int]:
    return rows[:LINE_LIMIT], max(0, len(rows) - LINE_LIMIT)


def unified_html(rows: list[Row]) -> str:
    shown, more = _clipped(rows)
    lines = []
    for row in shown:
        if row.kind == " ":
            lines.append(f"  {row.old}")
        elif row.kind == "…":
            lines.append(_muted(f"  … {row.old}"))
        elif row.kind == "-":
            lines.append(deleted(f"- {row.old}"))
        elif row.kind == "+":
            lines.append(inserted(f"+ {row.new}"))
        else:
            lines += [f"- {row.old}", f"+ {row.new}"]
    if more:
        lines.append(_muted(f"… {more:,} more lines"))
    return pre("\n".join(lines))


def _muted(inner_html: str) -> str:
    return element("span", inner_html, style=f"color:{MUTED}")


def side_by_side_html(rows: list[Row]) -> str:
    shown, more = _clipped(rows)
    cell = (
        f"border-top:1px solid {BORDER};padding:0 4px;text-align:left;vertical-align:top;width:50%"
    )
    body = []
    for row in shown:
        left, right = row.old, row.new
        left_style = right_style = cell
        if row.kind == "…":
            left = right = _muted(f"… {row.old}")
        elif row.kind == "-":
            left, left_style = deleted(left), f"{cell};{tinted(DELETED)}"
        elif row.kind == "+":
            right, right_style = inserted(right), f"{cell};{tinted(INSERTED)}"
        cells = element("td", pre(left), style=left_style)
        body.append(element("tr", cells + element("td", pre(right), style=right_style)))
    if more:
        last = element("td", f"… {more:,} more lines", colspan="2", style=cell)
        body.append(element("tr", last))
    return element(
        "table",
        element("tbody", "".join(body)),
        cls="dtl-sbs-table",
        style="border-collapse:collapse;width:100%;table-layout:fixed",
    )


def diff_html(old: str, new: str) -> str:
    """A unified diff with a side-by-side toggle: opening "side by side" swaps the views
    (the view's CSS hides the unified one; without CSS both stay readable)."""
    rows = diff_rows(pretty(old), pretty(new))
    unified = element("div", unified_html(rows), cls="dtl-unified")
    both = element(
        "details", element("summary", "side by side") + side_by_side_html(rows), cls="dtl-sbs"
    )
    return element("div", unified + both, cls="dtl-diff")
