"""Strict validation of provider request payloads.

A payload is checked in two steps:

1. **Shape**: strict validation against the official SDK request ``TypedDict``s
   (``anthropic`` / ``openai``), with unknown keys forbidden everywhere the SDK does not
   explicitly allow them, lazy ``Iterable`` fields drained, and union errors reduced to
   the one member whose ``type`` (or ``role``) matches the payload.
2. **Semantics**: provider rules the types cannot express (all tools deferred, a dangling
   ``tool_reference``, unpaired call ids, breakpoint limits, duplicate tool names, ...).

The first problem found raises :class:`WireValidationError`.
"""

from __future__ import annotations

import functools
import importlib
import operator
import threading
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import typing_extensions as te
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

__all__ = ["PROVIDERS", "WireValidationError", "validate_payload"]

PROVIDERS = ("anthropic", "openai-responses", "openai-chat", "kimi")

ALL_DEFERRED_MESSAGE = (
    "At least one tool must have defer_loading=false. All tools cannot be deferred."
)
MAX_CACHE_BREAKPOINTS = 4

_Path = tuple[str | int, ...]

# Root request types (module, attribute), imported lazily.
_ROOTS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic.types.message_create_params", "MessageCreateParamsNonStreaming"),
    "responses": (
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsNonStreaming",
    ),
    "chat": ("openai.types.chat.completion_create_params", "CompletionCreateParamsNonStreaming"),
    "chat-tool": ("openai.types.chat", "ChatCompletionFunctionToolParam"),
}
_PROVIDER_ROOT = {
    "anthropic": "anthropic",
    "openai-responses": "responses",
    "openai-chat": "chat",
    "kimi": "chat",
}


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


def validate_payload(payload: dict[str, Any], provider: str) -> None:
    """Check ``payload`` for ``provider``; raise :class:`WireValidationError` on the first problem.

    ``provider`` is one of :data:`PROVIDERS`; anything else raises ``ValueError``.
    """
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    if not isinstance(payload, dict):
        raise WireValidationError(provider, "", "dict_type: payload must be a JSON object")
    shaped, index_map = payload, None
    if provider == "kimi":
        shaped, index_map = _split_kimi_carriers(payload)
    _check_shape(provider, _schema(_PROVIDER_ROOT[provider]), shaped, (), index_map)
    _SEMANTIC_CHECKS[provider](payload, provider)


# --------------------------------------------------------------------------- strict adapters


@dataclass(frozen=True)
class _Schema:
    """A strict adapter plus what is needed to explain its errors."""

    adapter: TypeAdapter[Any]
    members: Mapping[str, tuple[type, ...]]  # union label (class name) -> classes
    fallbacks: Mapping[type, TypeAdapter[Any]]  # response model -> its union's TypedDicts


_SCHEMAS: dict[str, _Schema] = {}
_LOCK = threading.Lock()


def _schema(key: str) -> _Schema:
    """Return the strict schema for ``key``, building it once (thread-safe)."""
    with _LOCK:
        schema = _SCHEMAS.get(key)
        if schema is None:
            module, attr = _ROOTS[key]
            schema = _SCHEMAS[key] = _build(getattr(importlib.import_module(module), attr))
        return schema


def _origin(tp: Any) -> Any:
    return te.get_origin(tp)


def _union_members(tp: Any) -> list[Any]:
    """Flatten ``Union``/``Annotated`` nesting into the list of member types."""
    origin = _origin(tp)
    if origin is te.Annotated:
        return _union_members(te.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in te.get_args(tp) for m in _union_members(arg)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _reachable(root: Any) -> tuple[list[type], list[tuple[list[type], list[type]]]]:
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
        origin = _origin(tp)
        if origin is typing.Union or origin is types.UnionType:
            members = _union_members(tp)
            models = [m for m in members if _is_model(m)]
            params = [m for m in members if te.is_typeddict(m)]
            if models and params:
                mixed.append((models, params))
        todo.extend(te.get_args(tp))
    return typeddicts, mixed


def _build(root: Any) -> _Schema:
    """Build a strict ``TypeAdapter`` for ``root``.

    ``extra="forbid"`` is set on every reachable TypedDict for the duration of the build
    (merged into any SDK config; an explicit SDK ``extra`` is kept) and then restored.
    """
    typeddicts, mixed = _reachable(root)
    saved: list[tuple[type, bool, Any]] = []
    for td in typeddicts:
        had = "__pydantic_config__" in td.__dict__
        old = td.__dict__.get("__pydantic_config__")
        if old and "extra" in old:
            continue
        saved.append((td, had, old))
        td.__pydantic_config__ = {**(old or {}), "extra": "forbid"}  # type: ignore[attr-defined]
    try:
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
    return _Schema(adapter, members, fallbacks)


# --------------------------------------------------------------------------- shape check


class _ShapeFailure(Exception):
    """Validation errors whose ``loc`` is relative to ``base`` (found at ``prefix``)."""

    def __init__(self, prefix: _Path, base: Any, errors: list[ErrorDetails]) -> None:
        super().__init__(prefix)
        self.prefix, self.base, self.errors = prefix, base, errors


def _check_shape(
    provider: str, schema: _Schema, value: Any, prefix: _Path, index_map: list[int] | None
) -> None:
    """Validate ``value`` strictly; raise :class:`WireValidationError` with a short reason."""
    try:
        try:
            validated = schema.adapter.validate_python(value)
        except ValidationError as exc:
            raise _ShapeFailure((), value, exc.errors()) from None
        _drain(schema, validated, value, ())
    except _ShapeFailure as failure:
        rel, reason = _explain(schema.members, failure.base, failure.errors)
        path = _remap_messages((*prefix, *failure.prefix, *rel), index_map)
        raise WireValidationError(provider, _format_path(path), reason) from None


def _drain(schema: _Schema, value: Any, original: Any, path: _Path) -> None:
    """Consume lazy ``ValidatorIterator``s so that every element really gets validated."""
    if isinstance(value, str | int | float | None):
        return
    if isinstance(value, BaseModel):
        alt = schema.fallbacks.get(type(value))
        if alt is not None and isinstance(original, dict):
            try:
                checked = alt.validate_python(original)
            except ValidationError as exc:
                raise _ShapeFailure(path, original, exc.errors()) from None
            _drain(schema, checked, original, path)
    elif isinstance(value, dict):
        src = original if isinstance(original, dict) else {}
        for key, item in value.items():
            _drain(schema, item, src.get(key), (*path, key))
    elif isinstance(value, list | tuple | Iterator):
        src_items = original if isinstance(original, list | tuple) else ()
        try:
            for i, item in enumerate(value):
                _drain(schema, item, src_items[i] if i < len(src_items) else None, (*path, i))
        except ValidationError as exc:  # raised by the iterator; loc starts at the index
            raise _ShapeFailure(path, original, exc.errors()) from None


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
            while (origin := _origin(tp)) in (te.Required, te.NotRequired, te.Annotated):
                if origin is not te.Annotated:
                    required = origin is te.Required
                tp = te.get_args(tp)[0]
            fields[key] = (tp, required)
    out: dict[str, tuple[frozenset[Any], bool]] = {}
    for key in ("type", "role"):
        tp, required = fields.get(key, (None, False))
        literals = frozenset(
            v for m in _union_members(tp) if _origin(m) is te.Literal for v in te.get_args(m)
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
) -> tuple[_Path, Any, str | None]:
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


def _explain(
    members: Mapping[str, tuple[type, ...]], base: Any, errors: list[ErrorDetails]
) -> tuple[_Path, str]:
    """Pick the most relevant error (deepest in the data, through matching union members)."""
    walked = [(*_walk(members, base, err), err) for err in errors]
    path, value, label, err = max(walked, key=lambda w: (len(w[0]), w[2] is None))
    if label is None:
        return path, _reason(err)
    candidates = [
        td for p, _, lbl, _ in walked if p == path and lbl is not None for td in members[lbl]
    ]
    return path, _no_member_reason(value, candidates, err)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    if kind == "literal_error":
        return f"literal_error: {err['msg']}, got {_short(err.get('input'))}"
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
            return f"literal_error: {key} {_short(got)} not allowed (expected {_one_of(allowed)})"
        candidates = [td for td, rule in rules.items() if not rule or got in rule[0]]
    return _reason(err)


def _format_path(parts: Sequence[str | int]) -> str:
    """``("messages", 2, "content")`` -> ``"messages.2.content"``."""
    return ".".join(str(p) for p in parts)


def _remap_messages(path: _Path, index_map: list[int] | None) -> _Path:
    """Map a message index of a filtered payload back to the original one."""
    if index_map is None or len(path) < 2 or path[0] != "messages":
        return path
    idx = path[1]
    if isinstance(idx, int) and 0 <= idx < len(index_map):
        return ("messages", index_map[idx], *path[2:])
    return path


def _split_kimi_carriers(payload: dict[str, Any]) -> tuple[dict[str, Any], list[int] | None]:
    """Validate Kimi's ``{"role": "system", "tools": [...]}`` messages; return the rest.

    The returned index map gives each kept message's index in the original payload.
    """
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return payload, None
    kept: list[Any] = []
    index_map: list[int] = []
    for i, msg in enumerate(messages):
        if not _is_kimi_carrier(msg):
            kept.append(msg)
            index_map.append(i)
            continue
        for key in msg:
            if key not in ("role", "tools"):
                _fail("kimi", ("messages", i), f"extra_forbidden: unexpected key {key!r}")
        tools = msg["tools"]
        if not isinstance(tools, list):
            _fail("kimi", ("messages", i, "tools"), "list_type: 'tools' must be a list")
        for j, tool in enumerate(tools):
            _check_shape("kimi", _schema("chat-tool"), tool, ("messages", i, "tools", j), None)
    return {**payload, "messages": kept}, index_map


def _is_kimi_carrier(msg: Any) -> bool:
    return (
        isinstance(msg, dict)
        and msg.get("role") == "system"
        and "tools" in msg
        and "content" not in msg
    )


# --------------------------------------------------------------------------- semantic rules


def _fail(provider: str, path: _Path, reason: str) -> NoReturn:
    raise WireValidationError(provider, _format_path(path), reason)


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """``(index, item)`` for the dict items of a list (anything else yields nothing)."""
    if not isinstance(value, list | tuple):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _check_unique(provider: str, named: list[tuple[_Path, Any]], what: str) -> None:
    """Fail on the second occurrence of a name."""
    first: dict[str, _Path] = {}
    for path, name in named:
        if not isinstance(name, str):
            continue
        if name in first:
            _fail(
                provider, path, f"duplicate {what} {name!r} (first at {_format_path(first[name])})"
            )
        first[name] = path


def _nested_blocks(block: dict[str, Any], path: _Path) -> Iterator[tuple[_Path, dict[str, Any]]]:
    """``block`` and the blocks nested in it (tool_result content, references, sources)."""
    yield path, block
    for key in ("content", "tool_references", "source"):
        child = block.get(key)
        if isinstance(child, dict):
            yield from _nested_blocks(child, (*path, key))
        for i, item in _dicts(child):
            yield from _nested_blocks(item, (*path, key, i))


def _check_anthropic(payload: dict[str, Any], provider: str) -> None:
    tools = _dicts(payload.get("tools"))
    _check_unique(provider, [(("tools", i), t.get("name")) for i, t in tools], "tool name")
    if tools and all(t.get("defer_loading") is True for _, t in tools):
        _fail(provider, ("tools",), ALL_DEFERRED_MESSAGE)
    for i, tool in tools:
        if tool.get("defer_loading") is True and tool.get("cache_control") is not None:
            _fail(
                provider,
                ("tools", i, "cache_control"),
                "a tool with defer_loading=true cannot have cache_control; "
                "put the breakpoint on a non-deferred tool",
            )
    tool_names = {t["name"] for _, t in tools if isinstance(t.get("name"), str)}

    breakpoints: list[tuple[_Path, Any]] = [
        (("tools", i, "cache_control"), t["cache_control"])
        for i, t in tools
        if t.get("cache_control") is not None
    ]
    for j, block in _dicts(payload.get("system")):
        for path, b in _nested_blocks(block, ("system", j)):
            if b.get("cache_control") is not None:
                breakpoints.append(((*path, "cache_control"), b["cache_control"]))

    messages = _dicts(payload.get("messages"))
    previous: dict[str, Any] | None = None
    for m, msg in messages:
        pending_ids = set()
        if previous is not None and previous.get("role") == "assistant":
            pending_ids = {
                b.get("id")
                for _, b in _dicts(previous.get("content"))
                if b.get("type") == "tool_use"
            }
        for j, block in _dicts(msg.get("content")):
            here: _Path = ("messages", m, "content", j)
            if block.get("type") == "tool_result":
                _check_tool_result(provider, block, here, pending_ids)
            for path, b in _nested_blocks(block, here):
                if b.get("type") == "tool_reference" and b.get("tool_name") not in tool_names:
                    _fail(
                        provider,
                        path,
                        f"Tool reference '{b.get('tool_name')}' not found in available tools",
                    )
                if b.get("cache_control") is not None:
                    breakpoints.append(((*path, "cache_control"), b["cache_control"]))
        previous = msg
    if payload.get("cache_control") is not None:
        breakpoints.append((("cache_control",), payload["cache_control"]))
    _check_breakpoints(provider, breakpoints)


def _check_tool_result(
    provider: str, block: dict[str, Any], path: _Path, tool_use_ids: set[Any]
) -> None:
    """Pairing with the preceding assistant ``tool_use`` and the ``is_error`` text-only rule."""
    if block.get("tool_use_id") not in tool_use_ids:
        _fail(
            provider,
            path,
            f"tool_result tool_use_id {_short(block.get('tool_use_id'))} has no matching "
            "tool_use in the immediately preceding assistant message",
        )
    if block.get("is_error") is True:
        for k, item in _dicts(block.get("content")):
            if item.get("type") != "text":
                _fail(
                    provider,
                    (*path, "content", k),
                    "all content must be type 'text' if 'is_error' is true "
                    f"(found {_short(item.get('type'))})",
                )


def _check_breakpoints(provider: str, breakpoints: list[tuple[_Path, Any]]) -> None:
    """At most 4 ``cache_control`` breakpoints; 1h TTLs must precede 5m ones (prefix order)."""
    if len(breakpoints) > MAX_CACHE_BREAKPOINTS:
        _fail(
            provider,
            breakpoints[MAX_CACHE_BREAKPOINTS][0],
            f"too many cache_control breakpoints: {len(breakpoints)} "
            f"(at most {MAX_CACHE_BREAKPOINTS}; a top-level cache_control counts as one)",
        )
    first_5m: _Path | None = None
    for path, control in breakpoints:
        ttl = control.get("ttl") if isinstance(control, dict) else None
        if ttl == "1h" and first_5m is not None:
            _fail(
                provider,
                path,
                f"cache_control ttl '1h' after a 5m breakpoint at {_format_path(first_5m)}; "
                "1h breakpoints must come before 5m ones",
            )
        if ttl != "1h" and first_5m is None:
            first_5m = path


def _check_responses(payload: dict[str, Any], provider: str) -> None:
    tools = _dicts(payload.get("tools"))
    _check_unique(provider, [(("tools", i), t.get("name")) for i, t in tools], "tool name")
    for i, tool in tools:
        if tool.get("type") == "namespace":
            members = _dicts(tool.get("tools"))
            _check_unique(
                provider,
                [(("tools", i, "tools", j), t.get("name")) for j, t in members],
                f"tool name in namespace {_short(tool.get('name'))}",
            )
    # With server-side history the matching call lives in an earlier response.
    if payload.get("previous_response_id") or payload.get("conversation"):
        return
    calls: set[Any] = set()
    searches: set[Any] = set()
    for i, item in _dicts(payload.get("input")):
        kind, call_id = item.get("type"), item.get("call_id")
        if kind == "function_call":
            calls.add(call_id)
        elif kind == "tool_search_call" and call_id is not None:
            searches.add(call_id)
        elif kind == "function_call_output" and call_id not in calls:
            _fail(
                provider,
                ("input", i),
                f"function_call_output call_id {_short(call_id)} has no earlier function_call "
                "with that call_id",
            )
        elif (
            kind == "tool_search_output"
            and item.get("execution") == "client"
            and (call_id is None or call_id not in searches)
        ):
            _fail(
                provider,
                ("input", i),
                f"client tool_search_output call_id {_short(call_id)} has no earlier "
                "tool_search_call with that call_id",
            )


def _chat_tool_names(
    tools: list[tuple[int, dict[str, Any]]], prefix: _Path
) -> list[tuple[_Path, Any]]:
    named: list[tuple[_Path, Any]] = []
    for i, tool in tools:
        spec = tool.get(tool.get("type") or "function")
        if isinstance(spec, dict):
            named.append(((*prefix, i), spec.get("name")))
    return named


def _check_chat(payload: dict[str, Any], provider: str) -> None:
    tools = _dicts(payload.get("tools"))
    _check_unique(provider, _chat_tool_names(tools, ("tools",)), "function name")
    call_ids: set[Any] = set()
    for i, msg in _dicts(payload.get("messages")):
        role = msg.get("role")
        if role == "assistant":
            call_ids.update(tc.get("id") for _, tc in _dicts(msg.get("tool_calls")))
        elif role == "tool" and msg.get("tool_call_id") not in call_ids:
            _fail(
                provider,
                ("messages", i),
                f"tool message tool_call_id {_short(msg.get('tool_call_id'))} has no earlier "
                "assistant tool_calls[].id",
            )
        elif provider == "kimi" and _is_kimi_carrier(msg):
            carried = _dicts(msg.get("tools"))
            _check_unique(
                provider, _chat_tool_names(carried, ("messages", i, "tools")), "function name"
            )


_SEMANTIC_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "anthropic": _check_anthropic,
    "openai-responses": _check_responses,
    "openai-chat": _check_chat,
    "kimi": _check_chat,
}
