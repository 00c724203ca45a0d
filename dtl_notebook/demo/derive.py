"""Deterministic values for the demo world: stable hashes, picks, samples and word matching.

Nothing here reads a clock or an unseeded random generator, so every answer of the demo
tools is the same in every process.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i in is it its my of on or "
    "that the this to was were what when will with you your we our".split()
)


def stable_hash(*parts: object) -> int:
    """A stable 64-bit hash of the parts (unlike hash(), the same in every process)."""
    data = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def unit(*parts: object) -> float:
    """A stable number in [0, 1) derived from the parts."""
    return stable_hash(*parts) / 2**64


def pick(options: Sequence[T], *parts: object) -> T:
    return options[stable_hash(*parts) % len(options)]


def sample(options: Sequence[T], k: int, *parts: object) -> list[T]:
    """k distinct options in a stable pseudo-random order."""
    return sorted(options, key=lambda o: stable_hash(*parts, o))[:k]


def fold(text: str) -> str:
    """Lower case, accents removed, spaces collapsed: the key for name lookups."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().replace("_", " ").split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", fold(text))


def _stem(word: str) -> str:
    """A crude plural stem, so that 'invoices' matches 'invoice'."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def match_score(query: str, *fields: str) -> int:
    """How many query words (stop words aside) occur in the fields (0: no match)."""
    haystack = {_stem(w) for w in _words(" ".join(fields))}
    return sum(1 for w in set(_words(query)) - STOPWORDS if _stem(w) in haystack)


def money(value: float) -> float:
    return round(value + 0.0, 2)
