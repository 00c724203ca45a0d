"""Deterministic fake data: stable hashes, picks and samples, names, fuzzy word matching."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Sequence
from typing import TypeVar

from dtl_notebook.live.demo_tools.tables import demo_data

DATA = demo_data()
T = TypeVar("T")


def _hash(*parts: object) -> int:
    """A stable 64-bit hash of the parts (unlike hash(), the same in every process)."""
    data = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def _unit(*parts: object) -> float:
    """A stable number in [0, 1) derived from the parts."""
    return _hash(*parts) / 2**64


def _pick(options: Sequence[T], *parts: object) -> T:
    return options[_hash(*parts) % len(options)]


def _sample(options: Sequence[T], k: int, *parts: object) -> list[T]:
    """k distinct options in a stable pseudo-random order."""
    return sorted(options, key=lambda o: _hash(*parts, o))[:k]


def _fold(text: str) -> str:
    """Lower case, accents removed, spaces collapsed: the key for name lookups."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().replace("_", " ").split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", _fold(text))


STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i in is it its my of on or "
    "that the this to was were what when will with you your we our".split()
)


def _match_score(query: str, *fields: str) -> int:
    """How many query words (stop words aside) occur in the fields (0: no match)."""
    haystack = {_stem(w) for w in _words(" ".join(fields))}
    return sum(1 for w in set(_words(query)) - STOPWORDS if _stem(w) in haystack)


def _stem(word: str) -> str:
    """A crude plural stem, so that 'invoices' matches 'invoice'."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _money(value: float) -> float:
    return round(value + 0.0, 2)


def _finite(value: float) -> float:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("the result is too large to represent")
    return value


FIRST_NAMES = DATA.first_names
LAST_NAMES = DATA.last_names
COMPANY_WORDS = DATA.company_words
COMPANY_SUFFIXES = DATA.company_suffixes


def _person(*parts: object) -> tuple[str, str]:
    return _pick(FIRST_NAMES, *parts, "first"), _pick(LAST_NAMES, *parts, "last")
