"""Compiled indexes behind the regex and keyword engines: a query visits the tools that can
match, not every tool, and gives the same answers as a plain loop over them."""

from __future__ import annotations

import heapq
import importlib
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded when a word index is built (see `search`)
    import numpy as np

# Python's own regular-expression parser (`sre_parse` is its deprecated alias); read, never
# changed, to find the text every match must contain.
_PARSER: Any = importlib.import_module("re._parser")
_SEPARATOR = "\x00"  # between documents: a literal without NUL never spans two
_NOT_PLAIN = re.compile(r"[^\x01-\x7f]+")


def required_literal(pattern: re.Pattern[str]) -> str | None:
    """The longest run of plain ASCII characters that every match of `pattern` contains,
    lower-cased, or None where no run is certain (alternatives, optional parts, classes). Runs
    are cut at other characters: case-insensitive matching folds some of them into ASCII ones
    (the long s matches s), so only plain ASCII is looked up as it is."""
    runs = _runs(_PARSER.parse(pattern.pattern, pattern.flags))
    plain = [piece.lower() for run in runs for piece in _NOT_PLAIN.split(run) if piece]
    return max(plain, key=len) if plain else None


def _runs(parsed: Any) -> Iterator[str]:
    """The runs of literal characters that a match must contain, in the parsed pattern."""
    current: list[str] = []
    for op, arg in parsed:
        name = str(op)
        if name == "LITERAL":
            current.append(chr(arg))
            continue
        if current:
            yield "".join(current)
            current = []
        if name == "SUBPATTERN":
            yield from _runs(arg[3])
        elif name == "ATOMIC_GROUP":
            yield from _runs(arg)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and arg[0] >= 1:
            yield from _runs(arg[2])
        # BRANCH, IN, ANY, AT, ASSERT, GROUPREF...: nothing certain to appear
    if current:
        yield "".join(current)


class LiteralIndex:
    """Every plain-ASCII document lower-cased in one string, with each document's offset: the
    documents holding a literal are found by C-speed scans. A document with other characters
    is always a candidate (lower-casing may change its length or miss a case-folded match)."""

    def __init__(self, documents: Sequence[str]) -> None:
        parts: list[str] = []
        self._starts: list[int] = []
        self._always: list[int] = []
        offset = 0
        for position, document in enumerate(documents):
            text = document.lower() if document.isascii() else ""
            if not document.isascii():
                self._always.append(position)
            self._starts.append(offset)
            parts.append(text)
            offset += len(text) + 1
        self._text = _SEPARATOR.join(parts)

    def containing(self, literal: str) -> Iterator[int]:
        """The positions of the documents that may contain `literal`, in order."""
        return heapq.merge(self._found(literal), self._always)

    def _found(self, literal: str) -> Iterator[int]:
        text, starts, at = self._text, self._starts, 0
        while (at := text.find(literal, at)) >= 0:
            position = bisect_right(starts, at) - 1
            yield position
            if position + 1 == len(starts):
                return
            at = starts[position + 1]  # one hit per document is enough


class WordIndex:
    """The positions of the documents holding each word, as arrays, for counting the query's
    words in every document at once."""

    def __init__(self, documents: Sequence[set[str]]) -> None:
        postings: dict[str, list[int]] = {}
        for position, words in enumerate(documents):
            for word in words:
                postings.setdefault(word, []).append(position)
        import numpy as np

        self._postings = {word: np.array(at, dtype=np.intp) for word, at in postings.items()}
        self.size = len(documents)

    def add_counts(self, scores: np.ndarray[Any, Any], words: set[str]) -> None:
        """Adds one to each document's score per query word it holds."""
        for word in words:
            at = self._postings.get(word)
            if at is not None:
                scores[at] += 1
