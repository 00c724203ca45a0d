"""Read-only JSON containers: tool schemas, and request items built once and shared.

A builder keeps what it made from an unchanging input (a registered tool's definition, an
immutable message) and puts the very same object in every later request body. Shared objects
must not change: these `dict` and `list` subclasses refuse every in-place edit with a
TypeError that says how to edit a copy instead. Everything else (reading, `json.dumps`,
validation) sees plain JSON; `copy.deepcopy` and `thaw` give editable plain copies.
Because a frozen value never changes, comparing a remembered one with the one in a new body
is an identity check (`exact_copy` keeps frozen values as they are).

`==` on a frozen value is exact JSON equality (`json_equal`): ``1``, ``1.0`` and ``True`` are
equal in Python but not in a request body, so they differ here. Lists of shared items are
therefore compared with a plain list `==` (`shared_prefix`): at C speed where the items are the
same objects, and exactly where they are not.
"""

from __future__ import annotations

from math import copysign
from typing import Any, NoReturn

_EDIT = (
    "read-only JSON (a tool's parameters, or a part of a request body that other requests "
    "share): edit a copy made with copy.deepcopy(); redefine a tool with "
    "registry.register(Tool(...), replace=True)"
)


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError(_EDIT)


class FrozenDict(dict[str, Any]):
    """A JSON object that cannot be edited in place."""

    __slots__ = ("__weakref__",)  # memos of what was made from it go when it does
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __eq__(self, other: object) -> bool:
        return json_equal(self, other) if isinstance(other, dict) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return not json_equal(self, other) if isinstance(other, dict) else NotImplemented

    __hash__ = None

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array that cannot be edited in place."""

    __slots__ = ("__weakref__",)
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __eq__(self, other: object) -> bool:
        return json_equal(self, other) if isinstance(other, list) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return not json_equal(self, other) if isinstance(other, list) else NotImplemented

    __hash__ = None

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __copy__(self) -> list[Any]:
        return list(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def freeze(value: Any) -> Any:
    """A read-only deep copy of plain JSON (dicts with str keys, lists, scalars)."""
    kind = type(value)
    if kind is dict or kind is FrozenDict:
        return value if kind is FrozenDict else FrozenDict((k, freeze(v)) for k, v in value.items())
    if kind is list or kind is FrozenList:
        return value if kind is FrozenList else FrozenList(freeze(v) for v in value)
    return value


FROZEN = (FrozenDict, FrozenList)


def built_here(payload: Any) -> bool:
    """Whether a body holds frozen parts (one a builder made) rather than only plain JSON (one
    parsed from bytes). Memos keep the two lineages apart: within one, equal parts are the same
    objects or plain copies, both compared at C speed; across them each comparison walks a
    frozen value in Python."""
    if not isinstance(payload, dict):
        return False
    return any(type(v) in FROZEN or built_list(v) for v in payload.values())


def built_list(items: Any) -> bool:
    """Whether a body's list holds a builder's frozen items (at its start or its end: a builder
    freezes what repeats, a history or a tool catalog, and adds plain parts around it)."""
    return (
        type(items) is list
        and bool(items)
        and (type(items[0]) in FROZEN or type(items[-1]) in FROZEN)
    )


def thaw(value: Any) -> Any:
    """An editable plain deep copy of a JSON value (frozen parts included)."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value


_DICTS = (dict, FrozenDict)
_LISTS = (list, FrozenList)
_NUMBERS = (bool, int, float)
_JSON = (*_DICTS, *_LISTS, *_NUMBERS, str, type(None))
_MISSING = object()


def json_equal(a: Any, b: Any) -> bool:
    """Exact JSON equality: true where `json.dumps` writes the same text (keys in any order).
    Numbers and booleans must match in type as well as value, ``-0.0`` is not ``0.0`` and every
    NaN is ``NaN``. A value that is not JSON (on either side) decides with its own `==`."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta in _DICTS and tb in _DICTS:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _MISSING)
            if other is _MISSING or not json_equal(value, other):
                return False
        return True
    if ta in _LISTS and tb in _LISTS:
        return len(a) == len(b) and all(map(json_equal, a, b))
    if ta in _NUMBERS and tb in _NUMBERS:
        if ta is not tb:
            return False
        if ta is not float:
            return bool(a == b)
        # Equal floats have one shortest repr, except the two zeros; all NaNs are written "NaN".
        if a == b:
            return bool(a != 0.0) or copysign(1.0, a) == copysign(1.0, b)
        return bool(a != a and b != b)
    if ta not in _JSON:
        return bool(a == b)
    if tb not in _JSON:
        return bool(b == a)
    return ta is tb and bool(a == b)  # str or None; different kinds are never equal


def shared_prefix(a: list[Any], b: list[Any]) -> int:
    """How many leading items `a` and `b` share, compared with `==` (for shared frozen items: by
    identity, at C speed). A binary search over slice comparisons: each stops at its first
    difference."""
    n = min(len(a), len(b))
    if (a if len(a) == n else a[:n]) == (b if len(b) == n else b[:n]):
        return n
    low, high = 0, n - 1  # a[:low] == b[:low] and a[:high + 1] != b[:high + 1]
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def starts_with(items: list[Any], head: list[Any]) -> bool:
    """Whether `items` starts with `head`, a list of read-only JSON objects (`FrozenDict`s),
    compared with `==` as `items[:len(head)] == head` would, without copying `items`. A list
    comparison stops at the first item that differs; there, ordering a `FrozenDict` against any
    JSON value raises, so `head <= items` is true only when no item differs (for JSON items:
    an object of another kind that orders itself against a dict could pass for equal)."""
    if len(head) >= len(items):
        return len(head) == len(items) and items == head
    try:
        return (head <= items) is True  # the last comparison's own result, not always a bool
    except TypeError:  # the first difference: a JSON object has no order
        return False


def identical_run(a: list[Any], b: list[Any], n: int) -> int:
    """Where the run of identical items at the start of `a[:n]` and `b[:n]` (known equal) ends,
    found by bisection: a body repeats the previous one's objects and then, at most, a few
    equal copies. Only used to choose which of two equal objects to keep."""
    low, high = 0, n  # a[low - 1] is b[low - 1]; past high, not
    while low < high:
        mid = (low + high + 1) // 2
        if a[mid - 1] is b[mid - 1]:
            low = mid
        else:
            high = mid - 1
    return low


class _Exact:
    """A remembered number or boolean: equal only to a value of the same type."""

    __slots__ = ("value",)

    def __init__(self, value: bool | int | float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self.value) and other == self.value

    __hash__ = None  # type: ignore[assignment]


class _Unremembered:
    """Stands for a value that is not plain JSON: equal to nothing, so never reused."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def exact_copy(value: Any) -> Any:
    """A copy of `value` for exact comparison with a later one: numbers and booleans match only
    their own type (``1``, ``1.0`` and ``True`` differ in a body), a frozen part is its own
    copy, and anything but plain JSON is equal to nothing (never reused)."""
    kind = type(value)
    if kind is str or value is None or kind is FrozenDict or kind is FrozenList:
        return value
    if kind is bool or kind is int or kind is float:
        return _Exact(value)
    if kind is dict and all(type(k) is str for k in value):
        return {k: exact_copy(v) for k, v in value.items()}
    if kind is list:
        return [exact_copy(v) for v in value]
    return _Unremembered()
