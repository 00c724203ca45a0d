"""Every memo of the package, bounded and registered in one place, and the switch over them.

Reuse makes a new turn cost what it adds: a request body repeats the previous one's items,
so what was built, validated, written or rendered from them is found again instead of done
again. Each such memory is a `Memo`: a dict with a name, a bound (`BOUNDS`, the one table of
them), oldest-first eviction, and entries that may die with the objects they were made from
(`put_owned`, `put_held`: weak references, so a dropped agent's tools, items and transcripts
free their entries; an entry never holds its owners itself). The registry knows every memo:
`reset()` empties them all and `footprint()` says how much each holds.

The switch: `enabled(False)` (or the environment variable ``DTL_REUSE=0`` at import) turns
reuse off for the process, `disabled()` for a block of one thread. With reuse off every
request is built, validated, written and rendered from scratch and nothing is kept; the bytes
are the same either way (the property tests check both settings).

Not memos here: the tables built once from the SDKs' own request types (compiled validators,
the beta-type walk, tokenizer ranks), which depend on no user data and are as large after one
request as after a million.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

# entries each memo keeps (for "body texts: runs", characters of joined text)
BOUNDS: dict[str, int] = {
    "tool items": 200_000,  # each dies with its tool
    "model profiles": 256,  # per provider and model, without overrides
    "cache rules": 256,  # per provider and model, without overrides
    "tool lists": 32,  # recent lists of tools, over every item maker
    "item texts": 200_000,  # each dies with its item
    "body texts: runs": 8_000_000,
    "accepted lists": 32,  # lists a validator accepted, per root type and field
    "prefix scans": 64,  # states after shared message prefixes, over every scan
    "builder walks": 32,  # builders' checkpoints, per transcript and settings
    "history scans": 32,  # folds over transcripts
    "plans": 16,  # per transcript
    "renderings": 8,  # per provider, model and framing
    "segment digests": 200_000,
    "token counts": 200_000,
    "definition comparisons": 4_096,
    "native tool lists": 8,  # a native-search body's deferred items, per registry version
    "hosted tool lists": 8,  # a hosted-search body's tools, per registry version
    "system messages": 64,  # one frozen leading system message per prompt text
    "schema checks": 65_536,  # tool parameter schemas checked, by canonical text
    "highlighted json": 4_096,  # the view's highlighted JSON texts
}

_memos: dict[str, Memo] = {}
_on = os.environ.get("DTL_REUSE", "1").strip().lower() not in ("0", "false", "no", "off")
_local = threading.local()  # .off: this thread reuses nothing


def active() -> bool:
    """Whether this thread may reuse earlier work (reuse on, and not inside `disabled`)."""
    return _on and not getattr(_local, "off", False)


def enabled(flag: bool | None = None) -> bool:
    """Whether reuse is on for the process; `enabled(False)` turns it off (and frees every
    memo), `enabled(True)` on again. Returns the setting in force afterwards."""
    global _on
    if flag is not None:
        if type(flag) is not bool:
            raise TypeError(f"enabled(flag): flag must be a bool, got {flag!r}")
        _on = flag
        if not flag:
            reset()
    return _on


@contextmanager
def disabled() -> Iterator[None]:
    """Within this block (this thread), build everything from scratch and keep nothing."""
    before = getattr(_local, "off", False)
    _local.off = True
    try:
        yield
    finally:
        _local.off = before


class Memo(dict[Any, Any]):
    """A named, bounded memo. `bound` comes from `BOUNDS[name]`; `weigh(value)` (default: 1 an
    entry) says how much of it an entry takes. Reads are plain dict reads, or `hit` where the
    entries read most should be the last to go; `put` makes an entry the newest."""

    def __init__(self, name: str, weigh: Callable[[Any], int] | None = None) -> None:
        super().__init__()
        if name in _memos:
            raise ValueError(f"a memo named {name!r} is registered already")
        self.name, self.bound, self._weigh = name, BOUNDS[name], weigh
        self._weights: dict[Any, int] = {}  # for a weighed memo only
        self._weight = 0
        self._lock = threading.RLock()  # a weak-reference callback may come back in
        _memos[name] = self

    @property
    def weight(self) -> int:
        """What the entries weigh together (their count, where each weighs 1)."""
        return self._weight if self._weigh is not None else len(self)

    def put(self, key: Any, value: Any) -> None:
        """Keep `value` under `key` (newest last), evicting the oldest entries past the bound."""
        if self._weigh is None:  # most memos: a count, no bookkeeping (puts run every turn)
            with self._lock:
                dict.pop(self, key, None)
                while len(self) >= self.bound:
                    dict.pop(self, next(iter(self)))
                dict.__setitem__(self, key, value)
            return
        weight = self._weigh(value)
        with self._lock:
            self._drop(key)
            while self and self.weight + weight > self.bound:
                self._drop(next(iter(self)))
            dict.__setitem__(self, key, value)
            self._weights[key] = weight
            self._weight += weight

    def hit(self, key: Any) -> Any:
        """The value under `key`, or None; a found entry becomes the newest (evicted last)."""
        with self._lock:
            value = dict.pop(self, key, None)
            if value is not None:
                dict.__setitem__(self, key, value)
        return value

    def put_owned(self, key: Any, owner: Any, value: Any) -> None:
        """Keep `(ref, value)` under `key`, where `ref()` is `owner` while it lives; the entry
        goes when `owner` does. A reader checks `entry[0]() is owner`."""
        ref = weakref.ref(owner, functools.partial(self._expire, key))
        self.put(key, (ref, value))

    def put_held(self, key: Any, owners: Iterable[Any], value: Any) -> None:
        """Keep `(refs, value)` under `key` while every one of `owners` lives (the key names
        them by id: they stay theirs while the entry is there). `value` must not hold them."""
        expire = functools.partial(self._expire, key)
        self.put(key, (tuple(weakref.ref(owner, expire) for owner in owners), value))

    def put_refs(self, key: Any, refs: tuple[Any, ...], value: Any) -> None:
        """`put_held` again under the same `key`, reusing the refs of its entry."""
        self.put(key, (refs, value))

    def owned(self, key: Any, owner: Any) -> Any:
        """The value `put_owned` kept for `owner` under `key`, or None."""
        entry = self.get(key)
        return entry[1] if entry is not None and entry[0]() is owner else None

    def discard(self, key: Any) -> None:
        """Drop the entry under `key`, if any."""
        with self._lock:
            self._drop(key)

    def take(self, key: Any, value: Any) -> bool:
        """Drop the entry under `key` if it is `value` itself: the caller owns it from now on
        (it may change it; no later reader finds it)."""
        with self._lock:
            if dict.get(self, key) is not value:
                return False
            self._drop(key)
            return True

    def _expire(self, key: Any, ref: Any) -> None:
        with self._lock:
            entry = self.get(key)
            refs = entry[0] if entry is not None else None
            if refs is ref or (type(refs) is tuple and any(r is ref for r in refs)):
                self._drop(key)

    def _drop(self, key: Any) -> None:
        if self._weigh is None:
            dict.pop(self, key, None)
        elif key in self._weights:
            dict.pop(self, key, None)
            self._weight -= self._weights.pop(key)

    def clear(self) -> None:
        with self._lock:
            dict.clear(self)
            self._weights.clear()
            self._weight = 0

    __setitem__ = None  # type: ignore[assignment]  # entries go in through put()


F = TypeVar("F", bound=Callable[..., Any])
_MISSING = object()


def memoized(name: str) -> Callable[[F], F]:
    """A function whose results (by its positional arguments, all hashable) are kept in the
    memo `name`, like `functools.lru_cache` but bounded, freed and switched here."""

    def wrap(function: F) -> F:
        memo = Memo(name)

        @functools.wraps(function)
        def call(*args: Any) -> Any:
            found = memo.get(args, _MISSING)
            if found is _MISSING:
                found = function(*args)
                if active():
                    memo.put(args, found)
            return found

        return cast(F, call)

    return wrap


def reset() -> None:
    """Empty every memo: the next requests are built from scratch (and kept again)."""
    for memo in list(_memos.values()):
        memo.clear()


def footprint() -> dict[str, dict[str, int]]:
    """Per memo: its entries, what they weigh against its bound (`held`), the bound, and the
    approximate bytes reachable from its entries (each object counted once, under the first
    memo that reaches it)."""
    seen: set[int] = set()
    out: dict[str, dict[str, int]] = {}
    for name, memo in _memos.items():
        with memo._lock:
            values = list(memo.values())
        out[name] = {
            "entries": len(values),
            "held": memo.weight,
            "bound": memo.bound,
            "bytes": sum(_size(value, seen) for value in values),
        }
    return out


_ATOMS = (str, bytes, int, float, bool, type(None))


def _size(value: Any, seen: set[int]) -> int:
    """Bytes of `value` and of what it holds (containers, objects' attributes), each object
    counted once; classes, functions and modules are not counted."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type) or callable(item):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, _ATOMS):
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif isinstance(item, weakref.ref):
            continue  # what it points to is not kept by it
        else:
            stack.extend(v for v in getattr(item, "__dict__", {}).values())
            for slot in getattr(type(item), "__slots__", ()):
                if hasattr(item, slot) and slot != "__weakref__":
                    stack.append(getattr(item, slot))
    return total
