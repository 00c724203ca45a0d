"""Shape errors: the error type, and pydantic errors reduced to one clear reason and path.

A strict validation may report many errors, most of them from union members the payload was
never meant as. The one reported is the deepest in the data, reached through the union members
whose ``type`` (or ``role``) Literal matches the payload.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import typing_extensions as te
from pydantic import BaseModel
from pydantic_core import ErrorDetails

Path = tuple[str | int, ...]


class WireValidationError(ValueError):
    """A request payload that the provider would reject.

    ``path`` is the dotted JSON path of the offending element (``""`` for the root) and
    ``reason`` a one-line explanation.
    """

    def __init__(self, provider: str, path: str, reason: str) -> None:
        self.provider = provider
        self.path = path
        self.reason = reason
        super().__init__(f"{provider} request invalid at {path or '<root>'}: {reason}")


def fail(provider: str, path: Path, reason: str) -> NoReturn:
    """Raise :class:`WireValidationError` at ``path``."""
    raise WireValidationError(provider, format_path(path), reason)


def format_path(parts: Sequence[str | int]) -> str:
    """``("messages", 2, "content")`` -> ``"messages.2.content"``."""
    return ".".join(str(p) for p in parts)


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def origin(tp: Any) -> Any:
    """``typing.get_origin`` (typed loosely: the origins compared are special forms)."""
    return te.get_origin(tp)


def union_members(tp: Any) -> list[Any]:
    """Flatten ``Union``/``Annotated`` nesting into the list of member types."""
    kind = origin(tp)
    if kind is te.Annotated:
        return union_members(te.get_args(tp)[0])
    if kind is typing.Union or kind is types.UnionType:
        return [m for arg in te.get_args(tp) for m in union_members(arg)]
    return [tp]


@functools.cache
def _discriminators(td: type) -> dict[str, tuple[frozenset[Any], bool]]:
    """``{"type"|"role": (literal values, required)}`` for a TypedDict's (or model's) Literals."""
    fields: dict[str, tuple[Any, bool]] = {}
    if issubclass(td, BaseModel):
        for key, info in td.model_fields.items():
            fields[key] = (info.annotation, info.is_required())
    else:
        total = bool(getattr(td, "__total__", True))
        for key, tp in te.get_type_hints(td, include_extras=True).items():
            required = total
            while (wrapper := origin(tp)) in (te.Required, te.NotRequired, te.Annotated):
                if wrapper is not te.Annotated:
                    required = wrapper is te.Required
                tp = te.get_args(tp)[0]
            fields[key] = (tp, required)
    out: dict[str, tuple[frozenset[Any], bool]] = {}
    for key in ("type", "role"):
        tp, required = fields.get(key, (None, False))
        literals = frozenset(
            v for m in union_members(tp) if origin(m) is te.Literal for v in te.get_args(m)
        )
        if literals:
            out[key] = (literals, required)
    return out


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool | type(None))


def _member_matches(td: type, value: Any) -> bool:
    """Whether ``value`` could be meant as ``td``, judged by its ``type``/``role`` Literals."""
    if not isinstance(value, dict):
        return False
    for key, (literals, required) in _discriminators(td).items():
        if key in value:
            if not _hashable(value[key]) or value[key] not in literals:
                return False
        elif required:
            return False
    return True


def _walk(
    members: Mapping[str, tuple[type, ...]], base: Any, err: ErrorDetails
) -> tuple[Path, Any, str | None]:
    """Follow ``err['loc']`` through the data; return (data path, value there, mismatch label).

    Union labels are skipped; the walk stops at a union member that the data's discriminator
    rules out (the label is returned then).
    """
    value, path = base, list[str | int]()
    loc = err["loc"]
    for n, seg in enumerate(loc):
        last = n == len(loc) - 1
        if isinstance(value, dict) and isinstance(seg, str) and seg in value:
            if last and err["type"] == "extra_forbidden":
                break
            value = value[seg]
            path.append(seg)
        elif isinstance(value, list | tuple) and isinstance(seg, int) and 0 <= seg < len(value):
            value = value[seg]
            path.append(seg)
        elif (
            isinstance(seg, str)
            and seg in members
            and not any(_member_matches(td, value) for td in members[seg])
        ):
            return tuple(path), value, seg
    return tuple(path), value, None


def explain(
    members: Mapping[str, tuple[type, ...]], base: Any, errors: list[ErrorDetails]
) -> tuple[Path, str]:
    """Pick the most relevant error (deepest in the data, through matching union members)."""
    walked = [(*_walk(members, base, err), err) for err in errors]
    path, value, label, err = max(walked, key=lambda w: (len(w[0]), w[2] is None))
    if label is None:
        return path, _reason(err)
    candidates = [
        td for p, _, lbl, _ in walked if p == path and lbl is not None for td in members[lbl]
    ]
    return path, _no_member_reason(value, candidates, err)


def _one_of(values: set[Any], limit: int = 12) -> str:
    shown = sorted(map(repr, values))
    return ", ".join(shown[:limit]) + (", ..." if len(shown) > limit else "")


def _reason(err: ErrorDetails) -> str:
    """One-line reason for a single pydantic error."""
    kind, loc = err["type"], err["loc"]
    last = loc[-1] if loc else ""
    if kind == "extra_forbidden":
        return f"extra_forbidden: unexpected key {last!r}"
    if kind == "missing":
        return f"missing: field {last!r} required"
    value = err.get("input")
    if kind == "literal_error" or isinstance(value, str | int | float | bool | type(None)):
        return f"{kind}: {err['msg']}, got {short(value)}"
    return f"{kind}: {err['msg']}"


def _no_member_reason(value: Any, candidates: list[type], err: ErrorDetails) -> str:
    """Reason for a union element that no member accepts by its ``type``/``role``."""
    if not isinstance(value, dict):
        return f"dict_type: expected an object, got {type(value).__name__}"
    for key in ("type", "role"):
        rules = {td: _discriminators(td).get(key) for td in candidates}
        allowed = {v for rule in rules.values() if rule for v in rule[0]}
        if not allowed:
            continue
        if key not in value:
            optional = [td for td, rule in rules.items() if not (rule and rule[1])]
            if not optional:
                return f"missing: field {key!r} required (one of {_one_of(allowed)})"
            candidates = optional
            continue
        got = value[key]
        if not _hashable(got) or got not in allowed:
            return f"literal_error: {key} {short(got)} not allowed (expected {_one_of(allowed)})"
        candidates = [td for td, rule in rules.items() if not rule or got in rule[0]]
    return _reason(err)
