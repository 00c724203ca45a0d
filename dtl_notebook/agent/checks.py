"""Shared checks of public arguments: each failure names the parameter and the bad value.

The value shown is redacted (no API key ever appears) and shortened, so an error about a
megabyte of tool output stays one readable line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtl_notebook.agent.errors import ArgumentTypeError, InvalidArgumentError
from dtl_notebook.agent.secrets import redact

if TYPE_CHECKING:  # pydantic loads with the first model checked, not with every command
    from pydantic import BaseModel

MAX_SHOWN = 80


def shown(value: Any, limit: int = MAX_SHOWN) -> str:
    """`repr` of a value with keys masked, cut to `limit` characters."""
    try:
        text = repr(redact(value))
    except RecursionError:  # a value inside itself (or nested past the stack): no key shown
        return f"a {type(value).__name__} nested too deep to show (or holding itself)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def type_error(param: str, expected: str, value: Any) -> ArgumentTypeError:
    return ArgumentTypeError(
        f"{param} must be {expected}, got {type(value).__name__} {shown(value)}"
    )


def unknown_value(param: str, value: Any, choices: Iterable[str]) -> InvalidArgumentError:
    """The one error for a value outside a fixed set: names the parameter, shows the value,
    lists the choices."""
    return InvalidArgumentError(
        f"unknown {param} {shown(value)}; choose one of {', '.join(choices)}"
    )


def choice(value: Any, param: str, choices: Collection[str]) -> str:
    """`value` if it is one of `choices`, else the error from `unknown_value`."""
    if not isinstance(value, str) or value not in choices:
        raise unknown_value(param, value, choices)
    return value


def name_list(value: Any, param: str) -> list[str]:
    """A list of names from any iterable of strings; a bare string is refused (it would be
    read character by character)."""
    if isinstance(value, str | bytes):
        raise type_error(param, f"a list of names (e.g. [{value!r}]), not a bare string", value)
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise type_error(param, "a list of names", value)
    names = list(value)
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(
                f"{param}[{i}] must be a non-empty string, got {shown(name)}"
            )
    return names


def positive_int(value: Any, param: str, minimum: int = 1) -> int:
    """An int (not a bool) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise type_error(param, f"an integer >= {minimum}", value)
    if value < minimum:
        raise InvalidArgumentError(f"{param} must be >= {minimum}, got {value}")
    return value


def boolean(value: Any, param: str) -> bool:
    if not isinstance(value, bool):
        raise type_error(param, "True or False", value)
    return value


def text(value: Any, param: str, *, empty: bool = False) -> str:
    """A string of valid Unicode; a blank one too only when `empty` is allowed."""
    if not isinstance(value, str):
        raise type_error(param, "a string", value)
    if not empty and not value.strip():
        raise InvalidArgumentError(f"{param} must not be empty or blank, got {shown(value)}")
    problem = surrogate_problem(value)
    if problem:
        raise InvalidArgumentError(f"{param} {problem}")
    return value


def surrogate_problem(value: str) -> str | None:
    """Why a string is not valid Unicode (a lone surrogate, as `os.fsdecode` makes of bytes
    that are not UTF-8), or None. Such text can never be encoded, so never saved or sent."""
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds a lone surrogate {value[exc.start]!r} at position {exc.start}: not valid "
            "Unicode, so it could never be saved or sent (decode bytes with errors='replace')"
        )
    return None


def bad_text(value: Any) -> tuple[str, str] | None:
    """The first string of a JSON value (keys included) that is not valid Unicode, as (its
    path, like ``content.0.text``, and why), or None."""
    found = _first_bad_string(value)
    if found is None:
        return None
    parts, _, problem = found
    return ".".join(map(str, parts)) or "<root>", problem


def unicode_json(value: Any, param: str) -> None:
    """Every string of a JSON value (keys included) is valid Unicode; a bad one is named."""
    found = _first_bad_string(value)
    if found is not None:
        parts, is_key, problem = found
        where = param + "".join(f"[{p!r}]" for p in (parts[:-1] if is_key else parts))
        where += f" key {shown(parts[-1])}" if is_key else ""
        raise InvalidArgumentError(f"{where} {problem}")


def _first_bad_string(value: Any) -> tuple[tuple[Any, ...], bool, str] | None:
    """(the keys and indexes leading to the first bad string, whether it is a key, why)."""
    try:  # the common case, at C speed: the whole value encodes
        json.dumps(value, ensure_ascii=False, default=repr).encode("utf-8")
        return None
    except (UnicodeEncodeError, TypeError, RecursionError):  # looked through below
        pass
    except ValueError:  # a circular value: no JSON text at all
        return None
    stack: list[tuple[Any, tuple[Any, ...], bool]] = [(value, (), False)]
    while stack:
        item, parts, is_key = stack.pop()
        if isinstance(item, str):
            problem = surrogate_problem(item)
            if problem:
                return parts, is_key, problem
        elif isinstance(item, Mapping):
            for key, child in reversed(list(item.items())):
                stack += [(child, (*parts, key), False), (key, (*parts, key), True)]
        elif isinstance(item, list | tuple):
            stack += [(item[i], (*parts, i), False) for i in range(len(item) - 1, -1, -1)]
    return None


def mapping(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise type_error(param, "a dict", value)
    return dict(value)


def file_path(value: Any, param: str) -> Path:
    """A file path; an empty string (which Path would read as the current folder) is refused."""
    if not isinstance(value, str | Path):
        raise type_error(param, "a file path (str or Path)", value)
    if isinstance(value, str) and not value:
        raise InvalidArgumentError(f"{param} must not be empty, got ''")
    if "\x00" in str(value):  # no file system takes one
        raise InvalidArgumentError(f"{param} must not hold a NUL character: {shown(str(value))}")
    return Path(value)


def model_list(values: Any, kind: type[BaseModel], param: str) -> list[Any]:
    """A list of `kind` models; a single model or a string instead of a list is refused."""
    from pydantic import BaseModel

    if isinstance(values, str | bytes | BaseModel | Mapping) or not isinstance(values, Iterable):
        raise type_error(param, f"a list of {kind.__name__}", values)
    items = list(values)
    for i, item in enumerate(items):
        if not isinstance(item, kind):
            raise type_error(f"{param}[{i}]", f"a {kind.__name__}", item)
    return items


def finite_json(value: Any, param: str) -> str:
    """The JSON text of a value; NaN, infinities, non-JSON objects and lone surrogates name
    where they are."""
    try:
        dumped = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except RecursionError:
        raise InvalidArgumentError(
            f"{param} is not JSON: nested too deep to write; value {shown(value)}"
        ) from None
    except (TypeError, ValueError) as exc:
        where = _bad_path(value, param) or param
        raise InvalidArgumentError(
            f"{where} is not finite JSON ({exc}); value {shown(value)}"
        ) from None
    if surrogate_problem(dumped):
        unicode_json(value, param)  # names the string
    return dumped


def _bad_path(value: Any, path: str, within: frozenset[int] = frozenset()) -> str | None:
    """The path of the first value json.dumps refuses: one that is not JSON, or a container
    inside itself (`within`: the containers on the way, by identity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, Mapping | list | tuple):
        if id(value) in within:  # a value that holds itself: JSON has no way to write it
            return path
        within = within | {id(value)}
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str | int | float | bool) and key is not None:
                return f"{path}[{key!r}]"
            found = _bad_path(item, f"{path}[{key!r}]", within)
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _bad_path(item, f"{path}[{i}]", within)
            if found:
                return found
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return None
    return path


def same_length(param: str, values: Any, reference: str, length: int) -> None:
    """An optional per-item list must have one entry per item of `reference`."""
    if values is None:
        return
    if isinstance(values, str | bytes | Mapping) or not hasattr(values, "__len__"):
        raise type_error(param, f"a list with one entry per {reference}", values)
    if len(values) != length:
        raise InvalidArgumentError(
            f"{param} has {len(values)} entries but {reference} has {length}; "
            "pass one entry per item"
        )


def json_path(loc: Iterable[int | str], data: Any, root: str = "") -> str:
    """A pydantic error location as a path into the data (`messages[3].content[0].call`).

    Parts that are not in the data are the tags pydantic adds for discriminated unions,
    except the last one, which is a missing field and is named.
    """
    parts = list(loc)
    path = root
    for i, part in enumerate(parts):
        if isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            path, data = f"{path}[{part}]", data[part]
        elif isinstance(data, dict) and part in data:
            path, data = f"{path}.{part}" if path else str(part), data[part]
        elif i < len(parts) - 1 and isinstance(data, dict | list):
            continue
        else:
            path, data = f"{path}.{part}" if path else str(part), None
    return path or "<root>"
