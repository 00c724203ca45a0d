"""Read-only JSON containers: tool schemas, and request items built once and shared.

A builder keeps what it made from an unchanging input (a registered tool's definition, an
immutable message) and puts the very same object in every later request body. Shared objects
must not change: these `dict` and `list` subclasses refuse every in-place edit with a
TypeError that says how to edit a copy instead. Everything else (reading, `json.dumps`,
validation, `==`) sees plain JSON; `copy.deepcopy` and `thaw` give editable plain copies.
Because a frozen value never changes, comparing a remembered one with the one in a new body
is an identity check (`wire.incremental.exact_copy` keeps frozen values as they are).
"""

from __future__ import annotations

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

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array that cannot be edited in place."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

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


def thaw(value: Any) -> Any:
    """An editable plain deep copy of a JSON value (frozen parts included)."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value
