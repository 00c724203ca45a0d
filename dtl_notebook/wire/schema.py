"""Strict adapters built from the official SDK request types, and the shape check.

Every TypedDict reachable from a root gets ``extra="forbid"`` while its ``TypeAdapter`` is
built (an explicit SDK ``extra`` is kept), lazy ``Iterable`` fields are drained so that every
element really gets validated, and the errors are reduced to one reason (:mod:`.explain`).
"""

from __future__ import annotations

import functools
import importlib
import operator
import threading
import types
import typing
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import typing_extensions as te
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.warnings import TypedDictExtraConfigWarning
from pydantic_core import ErrorDetails

from dtl_notebook.wire.shape_errors import (
    Path,
    WireValidationError,
    explain,
    format_path,
    union_members,
)

_CHAT = "openai.types.chat.completion_create_params"

# Root request types (module, attribute), imported lazily.
ROOTS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic.types.message_create_params", "MessageCreateParamsNonStreaming"),
    "anthropic-stream": ("anthropic.types.message_create_params", "MessageCreateParamsStreaming"),
    "anthropic-beta": (
        "anthropic.types.beta.message_create_params",
        "MessageCreateParamsNonStreaming",
    ),
    "anthropic-beta-stream": (
        "anthropic.types.beta.message_create_params",
        "MessageCreateParamsStreaming",
    ),
    "responses": (
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsNonStreaming",
    ),
    "responses-stream": (
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsStreaming",
    ),
    # a Responses WebSocket `response.create` message (its `type`, `generate` typed too)
    "responses-socket": (
        "openai.types.responses.responses_client_event_param",
        "ResponseCreate",
    ),
    "chat": (_CHAT, "CompletionCreateParamsNonStreaming"),
    "chat-stream": (_CHAT, "CompletionCreateParamsStreaming"),
    "chat-tool": ("openai.types.chat", "ChatCompletionFunctionToolParam"),
}


@dataclass(frozen=True)
class Schema:
    """A strict adapter plus what is needed to explain its errors."""

    adapter: TypeAdapter[Any]
    members: Mapping[str, tuple[type, ...]]  # union label (class name) -> classes
    fallbacks: Mapping[type, TypeAdapter[Any]]  # response model -> its union's TypedDicts


_SCHEMAS: dict[object, Schema] = {}
_LOCK = threading.Lock()


def root_type(key: str) -> Any:
    """The SDK request TypedDict named by ``key`` (one of :data:`ROOTS`)."""
    module, attr = ROOTS[key]
    return getattr(importlib.import_module(module), attr)


def schema(key: str) -> Schema:
    """The strict schema of the root ``key``, built once (thread-safe)."""
    return schema_of(root_type(key))


def schema_of(tp: Any) -> Schema:
    """The strict schema of any SDK type (a root or an item type), built once."""
    with _LOCK:
        built = _SCHEMAS.get(tp)
        if built is None:
            built = _SCHEMAS[tp] = _build(tp)
        return built


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def reachable(root: Any) -> tuple[list[type], list[tuple[list[type], list[type]]]]:
    """TypedDicts reachable from ``root`` and unions mixing response models with TypedDicts."""
    typeddicts: list[type] = []
    mixed: list[tuple[list[type], list[type]]] = []
    seen: set[int] = set()
    todo = [root]
    while todo:
        tp = todo.pop()
        if id(tp) in seen:
            continue
        seen.add(id(tp))
        if te.is_typeddict(tp):
            typeddicts.append(tp)
            todo.extend(te.get_type_hints(tp, include_extras=True).values())
            continue
        origin = te.get_origin(tp)
        if origin is typing.Union or origin is types.UnionType:
            members = union_members(tp)
            models = [m for m in members if _is_model(m)]
            params = [m for m in members if te.is_typeddict(m)]
            if models and params:
                mixed.append((models, params))
        todo.extend(te.get_args(tp))
    return typeddicts, mixed


def _build(root: Any) -> Schema:
    """Build a strict ``TypeAdapter`` for ``root``.

    ``extra="forbid"`` is set on every reachable TypedDict for the duration of the build
    (merged into any SDK config; an explicit SDK ``extra`` or ``extra_items`` is kept), then
    restored.
    """
    typeddicts, mixed = reachable(root)
    saved: list[tuple[type, bool, Any]] = []
    for td in typeddicts:
        had = "__pydantic_config__" in td.__dict__
        old = td.__dict__.get("__pydantic_config__")
        if (old and "extra" in old) or _declares_extra_items(td):
            continue
        saved.append((td, had, old))
        td.__pydantic_config__ = {**(old or {}), "extra": "forbid"}  # type: ignore[attr-defined]
    try:
        with warnings.catch_warnings():
            # an open TypedDict nested in a forbidding one keeps its extra items (as intended)
            warnings.simplefilter("ignore", TypedDictExtraConfigWarning)
            adapter: TypeAdapter[Any] = TypeAdapter(root)
        # The SDK accepts response models (extra="allow") next to param TypedDicts, e.g. in
        # Anthropic message content; a dict that lands on such a model is re-checked
        # against the TypedDict members alone.
        fallbacks: dict[type, TypeAdapter[Any]] = {}
        for models, params in mixed:
            alt: TypeAdapter[Any] = TypeAdapter(functools.reduce(operator.or_, params))
            fallbacks.update(dict.fromkeys(models, alt))
    finally:
        for td, had, old in saved:
            if had:
                td.__pydantic_config__ = old  # type: ignore[attr-defined]
            else:
                del td.__pydantic_config__  # type: ignore[attr-defined]
    members: dict[str, tuple[type, ...]] = {}
    for member in [*typeddicts, *fallbacks]:
        members[member.__name__] = (*members.get(member.__name__, ()), member)
    return Schema(adapter, members, fallbacks)


def _declares_extra_items(td: type) -> bool:
    """A TypedDict the SDK declares open (``extra_items=...``): its extra keys stay allowed."""
    return getattr(td, "__extra_items__", te.NoExtraItems) is not te.NoExtraItems


class _ShapeFailure(Exception):
    """Validation errors whose ``loc`` is relative to ``base`` (found at ``prefix``)."""

    def __init__(self, prefix: Path, base: Any, errors: list[ErrorDetails]) -> None:
        super().__init__(prefix)
        self.prefix, self.base, self.errors = prefix, base, errors


def is_valid(shape: Schema, value: Any) -> bool:
    """Whether ``value`` passes ``shape`` (elements of lazy iterables included)."""
    try:
        _drain(shape, shape.adapter.validate_python(value), value, ())
    except (ValidationError, _ShapeFailure):
        return False
    return True


def check_shape(
    provider: str,
    shape: Schema,
    value: Any,
    prefix: Path = (),
    remap: typing.Callable[[Path], Path] | None = None,
) -> None:
    """Validate ``value`` strictly; raise :class:`WireValidationError` with a short reason.

    ``remap`` maps the error's data path back to the caller's payload (Kimi carriers).
    """
    try:
        try:
            validated = shape.adapter.validate_python(value)
        except ValidationError as exc:
            raise _ShapeFailure((), value, exc.errors()) from None
        _drain(shape, validated, value, ())
    except _ShapeFailure as failure:
        rel, reason = explain(shape.members, failure.base, failure.errors)
        path: Path = (*prefix, *failure.prefix, *rel)
        raise WireValidationError(
            provider, format_path(remap(path) if remap else path), reason
        ) from None


def _drain(shape: Schema, value: Any, original: Any, path: Path) -> None:
    """Consume lazy ``ValidatorIterator``s so that every element really gets validated."""
    if value is original or isinstance(value, str | int | float | None):
        return  # passed through as it came (an `object` field): no validator output inside
    if isinstance(value, BaseModel):
        alt = shape.fallbacks.get(type(value))
        if alt is not None and isinstance(original, dict):
            try:
                checked = alt.validate_python(original)
            except ValidationError as exc:
                raise _ShapeFailure(path, original, exc.errors()) from None
            _drain(shape, checked, original, path)
    elif isinstance(value, dict):
        src = original if isinstance(original, dict) else {}
        for key, item in value.items():
            _drain(shape, item, src.get(key), (*path, key))
    elif isinstance(value, list | tuple | Iterator):
        src_items = original if isinstance(original, list | tuple) else ()
        try:
            for i, item in enumerate(value):
                _drain(shape, item, src_items[i] if i < len(src_items) else None, (*path, i))
        except ValidationError as exc:  # raised by the iterator; loc starts at the index
            raise _ShapeFailure(path, original, exc.errors()) from None
