"""What a request's cache figures mean: the break (red) and the facts that are not breaks
(grey): a prefix below the model's minimum is not cacheable yet, and the first request on a
new provider starts cold. Only breaks are counted as breaks."""

from __future__ import annotations

from dtl_notebook.cache.analyze import CacheBreak
from dtl_notebook.notebook.html import element, esc, grey_mark, key, link_classes, text
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.theme import BREAK, EDGE_BREAK, NEUTRAL, tinted
from dtl_notebook.notebook.word_diff import diff_html

# a fact, not a fault: the notes box and a break the provider brings about by design
_FACT_STYLE = tinted(NEUTRAL, "border-left:3px solid rgba(128, 128, 128, .8);padding:4px 6px")


def notes(rec: RequestRecord) -> list[dict[str, str]]:
    """The grey marks of a request: `text` (short) and `title` (the sentence)."""
    out = []
    if rec.switched_from is not None:
        out.append(
            {
                "kind": "cold",
                "text": "cold: new provider",
                "title": f"{rec.switched_from} → {rec.provider}: every provider keeps its own "
                "cache, so the first request on this one reads nothing (not a break)",
            }
        )
    if rec.cache.below_minimum:
        out.append(
            {
                "kind": "below_minimum",
                "text": "not cacheable yet",
                "title": f"below the minimum ({rec.cache.below_minimum}): the provider caches "
                "nothing this short (not a break)",
            }
        )
    return out


def notes_html(rec: RequestRecord) -> str:
    return " ".join(grey_mark(n["text"], n["title"]) for n in notes(rec))


def notes_box(rec: RequestRecord) -> str:
    """The grey box above the panes: the facts in full sentences."""
    found = notes(rec)
    if not found:
        return ""
    lines = "".join(element("div", f"{text('b', n['text'])}: {esc(n['title'])}") for n in found)
    return element("div", lines, cls="dtl-notes", style=_FACT_STYLE)


def lost_text(brk: CacheBreak, cached: int) -> str:
    """What was cached before and is not read now."""
    if not brk.lost_tokens:
        return ""
    held = brk.lost_tokens + cached
    return (
        f" · {brk.lost_tokens:,} tokens no longer cached (the previous request left "
        f"{held:,} in the cache, this one reads {cached:,})"
    )


def break_html(
    brk: CacheBreak | None, rec: RequestRecord | None = None, previous: RequestRecord | None = None
) -> str:
    """The break in one line, its one-line fix, then the segment where it happens, diffed by
    whole lines with the changed words marked (from both requests where the view has them)."""
    if brk is None:
        return ""
    cached = rec.cache.cached_tokens if rec is not None else 0
    diff = _segment_diff(brk, rec, previous)
    if not diff:
        diff = "".join(
            _spaced(text("code", f"{op.op} at {op.path}") + diff_html(op.old or "", op.new or ""))
            for op in brk.diff
        )
    involved = f" ({', '.join(brk.involved)})" if brk.involved else ""
    where = f" at {brk.where}" if brk.where else ""
    red = tinted(BREAK, f"border-left:3px solid {EDGE_BREAK};padding:4px 6px")
    style = _FACT_STYLE if brk.expected else red  # by the provider's design: grey
    title = f"{'Expected cache break' if brk.expected else 'Cache break'}: {brk.message}"
    fix = text("div", f"fix: {brk.fix}", cls="dtl-fix", style="margin-top:2px")
    return element(
        "div",
        text("b", title) + esc(involved + where) + esc(lost_text(brk, cached)) + fix + diff,
        cls=link_classes(key("brk", "here"), cls="dtl-breakbox"),
        style=style,
    )


def _segment_diff(
    brk: CacheBreak, rec: RequestRecord | None, previous: RequestRecord | None
) -> str:
    if rec is None or previous is None or not brk.where:
        return ""
    old = next((s for s in previous.context.segments if s.source == brk.where), None)
    new = next((s for s in rec.context.segments if s.source == brk.where), None)
    if old is None or new is None or old.text == new.text or old.label != new.label:
        return ""
    labels = esc(f"{old.label} → {new.label}")
    return _spaced(f"{text('code', brk.where)}: {labels}{diff_html(old.text, new.text)}")


def _spaced(inner_html: str) -> str:
    return element("div", inner_html, style="margin-top:4px")
