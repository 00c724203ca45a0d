"""The diff of two request bodies in the order the provider caches them, hunk by JSON path.

Fields come in prefix order (the order of the model context: tools, system, then the
history), each list aligned item by item, so a hunk reads `tools[5] inserted` or
`messages[3] changed`. What comes after everything the older request held is an append
(cache-safe) and is folded; the first other edit in prefix order is the break, and every
edit after it only follows from it. Fields outside the prompt (`max_tokens`, …) come last.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from dtl_notebook.notebook.html import badge, dumps, element, text
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.theme import APPEND, BREAK, EDGE_BREAK, NEUTRAL
from dtl_notebook.notebook.word_diff import diff_html

_MISSING = object()
ROLES = {
    "break": ("cache break: everything after this is uncached", BREAK),
    "append": ("append (cache-safe)", APPEND),
    "after": ("after the break", NEUTRAL),
    "outside": ("outside the prompt", NEUTRAL),
    "unseen": ("not in the prompt yet (deferred: cache-neutral)", NEUTRAL),
    "same": ("the prompt reads it unchanged (cache-neutral)", NEUTRAL),
}
_EDGES = {"break": EDGE_BREAK, "append": "rgba(46, 170, 80, .8)"}


@dataclass(frozen=True)
class Hunk:
    """One edit: `path` (`tools[5]`, `input[10..12]`, `system`), what happened to it, the old
    and new values, and its role for the cache: break, append, after (the break), outside."""

    path: str
    change: str  # "inserted" | "removed" | "changed"
    old: Any
    new: Any
    role: str

    @property
    def label(self) -> str:
        return f"{self.path} {self.change}"


def prompt_paths(record: RequestRecord) -> dict[str, str]:
    """The JSON paths the model context reads (`tools.3`, `messages.2.content.0`, …), each
    with the digest of what it reads there."""
    return {s.source.split("@", 1)[0]: s.digest for s in record.context.segments}


def prefix_fields(*records: RequestRecord) -> list[str]:
    """Top-level fields in the order the model context reads them (hidden parts aside)."""
    order: list[str] = []
    for record in records:
        for segment in record.context.segments:
            name = segment.source.split(".", 1)[0].split("@", 1)[0]
            if segment.kind != "hidden" and name not in order:
                order.append(name)
    return order


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _empty(value: Any) -> bool:
    return value is _MISSING or value in (None, "", [], {})


def _span(field: str, start: int, end: int) -> str:
    return f"{field}[{start}]" if end - start == 1 else f"{field}[{start}..{end - 1}]"


def request_hunks(
    old: dict[str, Any],
    new: dict[str, Any],
    order: list[str],
    seen: tuple[dict[str, str], dict[str, str]] | None = None,
) -> list[Hunk]:
    """The hunks from `old` to `new`, in prefix order; `order`: the prompt's fields; `seen`:
    the JSON paths each request's model context reads (an item in neither, such as a
    deferred tool definition, is cache-neutral)."""
    prompt = [f for f in order if f in old or f in new]
    rest = [f for f in dict.fromkeys([*old, *new]) if f not in prompt]
    hunks: list[Hunk] = []
    broken = False
    for position, field in enumerate(prompt + rest):
        a, b = old.get(field, _MISSING), new.get(field, _MISSING)
        if _canonical(a) == _canonical(b):
            continue
        in_prompt = field in prompt
        tail = in_prompt and all(_empty(old.get(g, _MISSING)) for g in prompt[position + 1 :])
        edits = _edits(field, a, b, tail)
        for path, change, before, after, append in edits:
            if not in_prompt and field != "model":
                role = "outside"
            elif seen is not None and (read := _read(path, change, seen)) != "read":
                role = read
            elif append and not broken:
                role = "append"
            elif broken:
                role = "after"
            else:
                role, broken = "break", True
            hunks.append(Hunk(path, change, before, after, role))
    return hunks


def _read(path: str, change: str, seen: tuple[dict[str, str], dict[str, str]]) -> str:
    """How the model contexts read the item(s) at `path`: "read", "unseen" (in neither
    context: a deferred definition) or "same" (changed JSON that reads the same)."""
    field, _, rest = path.partition("[")
    if not rest:
        return "read"
    first, _, last = rest.rstrip("]").partition("..")
    old, new = seen
    for i in range(int(first), int(last or first) + 1):
        item = f"{field}.{i}"

        def under(paths: dict[str, str], item: str = item) -> dict[str, str]:
            return {p: d for p, d in paths.items() if p == item or p.startswith(item + ".")}

        if change == "removed" and under(old):
            return "read"
        if change == "inserted" and under(new):
            return "read"
        if change == "changed" and (under(old) or under(new)):
            return "read" if under(old) != under(new) else "same"
    return "unseen"


def _identity(field: str, item: Any) -> str:
    """What aligns two lists: a tool by its name, anything else by its whole JSON."""
    if field == "tools" and isinstance(item, dict):
        function = item.get("function")
        name = function.get("name") if isinstance(function, dict) else item.get("name")
        if name:
            return f"tool:{name}"
    return _canonical(item)


def _edits(field: str, a: Any, b: Any, tail: bool) -> list[tuple[str, str, Any, Any, bool]]:
    """(path, change, old, new, is_append) for one field."""
    if not (isinstance(a, list) and isinstance(b, list)):
        if a is _MISSING:
            return [(field, "inserted", None, b, tail)]
        if b is _MISSING:
            return [(field, "removed", a, None, False)]
        grows = isinstance(a, str) and isinstance(b, str) and b.startswith(a)
        return [(field, "changed", a, b, tail and grows)]
    out: list[tuple[str, str, Any, Any, bool]] = []
    keys_a, keys_b = [_identity(field, x) for x in a], [_identity(field, x) for x in b]
    matcher = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":  # the same items by identity; a tool may still be edited
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                if _canonical(a[i]) != _canonical(b[j]):
                    out.append((f"{field}[{j}]", "changed", a[i], b[j], False))
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(pairs):
            out.append((f"{field}[{j1 + k}]", "changed", a[i1 + k], b[j1 + k], False))
        if i1 + pairs < i2:
            removed = a[i1 + pairs : i2]
            out.append((_span(field, i1 + pairs, i2), "removed", removed, None, False))
        if j1 + pairs < j2:
            added = b[j1 + pairs : j2]
            append = tail and i1 + pairs == len(a)
            out.append((_span(field, j1 + pairs, j2), "inserted", None, added, append))
    return out


def _body(hunk: Hunk) -> str:
    def source(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, list) and hunk.change != "changed" and len(value) == 1:
            value = value[0]
        return dumps(value, 2)

    return diff_html(source(hunk.old), source(hunk.new))


def _hunk_html(hunk: Hunk) -> str:
    words, tint = ROLES[hunk.role]
    edge = _EDGES.get(hunk.role, "rgba(128, 128, 128, .7)")
    head = f"{text('code', hunk.label)} {badge(words, tint)}"
    if hunk.role in ("break", "append"):
        inner = element("div", head) + _body(hunk)
    else:  # follows from the break, or is cache-neutral: folded
        inner = element("details", element("summary", head) + _body(hunk))
    style = f"border-left:3px solid {edge};padding:2px 6px;margin:4px 0"
    return element("div", inner, cls=f"dtl-hunk dtl-hunk-{hunk.role}", style=style)


def hunks_html(hunks: list[Hunk]) -> str:
    """The hunks, appends folded (collapsed) under one line, the break open."""
    if not hunks:
        return text("p", "(identical)", cls="dtl-muted")
    parts, appends = [], [h for h in hunks if h.role == "append"]
    breaks = [h for h in hunks if h.role == "break"]
    summary = f"{len(hunks)} hunk{'s' if len(hunks) != 1 else ''} in prefix order"
    if breaks:
        summary += f"; the cache breaks at {breaks[0].label}"
    elif appends:
        summary += "; only appends: the cached prefix is kept"
    parts.append(element("div", text("b", summary)))
    folded = False
    for hunk in hunks:
        if hunk.role != "append":
            parts.append(_hunk_html(hunk))
        elif not folded:
            folded = True
            paths = ", ".join(h.label for h in appends)
            summary_html = f"{badge('append (cache-safe)', APPEND)} {text('code', paths)}"
            folded_html = "".join(_hunk_html(h) for h in appends)
            parts.append(
                element(
                    "details", element("summary", summary_html) + folded_html, cls="dtl-appends"
                )
            )
    return element("div", "".join(parts), cls="dtl-rdiff")


def record_hunks(a: RequestRecord, b: RequestRecord) -> list[Hunk]:
    """The hunks from request `a` to request `b`, knowing what each model context reads."""
    seen = (prompt_paths(a), prompt_paths(b))
    return request_hunks(a.payload, b.payload, prefix_fields(a, b), seen)
