"""Strict validation of provider request payloads.

A payload is checked in two steps:

1. **Shape** (:mod:`.schema`): strict validation against the official SDK request
   ``TypedDict``s (``anthropic`` / ``openai``): the streaming types when ``"stream": true``, the
   Anthropic beta types when the body uses a beta feature (:mod:`.betas`). Unknown keys are
   forbidden wherever the SDK does not explicitly allow them; union errors are reduced to the
   member whose ``type`` (or ``role``) matches the payload (:mod:`.explain`). Messages, input
   items and tools already seen valid are not validated again (:mod:`.incremental`).
2. **Semantics** (:mod:`.rules`, :mod:`.openai_rules`): provider rules the types cannot
   express (all tools deferred, a dangling ``tool_reference`` or one beside ordinary content,
   unpaired call ids, breakpoint limits, duplicate tool names).

The first problem found raises :class:`WireValidationError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook.wire import incremental
from dtl_notebook.wire.anthropic_threads import check_anthropic_thread
from dtl_notebook.wire.betas import body_features
from dtl_notebook.wire.cache_limits import MAX_CACHE_BREAKPOINTS
from dtl_notebook.wire.modes import PROVIDERS
from dtl_notebook.wire.openai_rules import check_chat, check_responses
from dtl_notebook.wire.providers import ANTHROPIC, KIMI, OPENAI_CHAT, OPENAI_RESPONSES, Part, spec
from dtl_notebook.wire.rules import is_kimi_carrier
from dtl_notebook.wire.schema import check_shape, is_valid, schema
from dtl_notebook.wire.shape_errors import Path, WireValidationError, fail
from dtl_notebook.wire.tool_rules import ALL_DEFERRED_MESSAGE

__all__ = [
    "ALL_DEFERRED_MESSAGE",
    "MAX_CACHE_BREAKPOINTS",
    "PROVIDERS",
    "WireValidationError",
    "required_betas",
    "validate_payload",
]


# the rules the types cannot express, one entry per provider (registered by wire/__init__.py)
SEMANTIC_CHECKS: Part[Callable[[dict[str, Any], str], None]] = Part(
    "semantic check", "dtl_notebook.wire"
)


def validate_payload(payload: dict[str, Any], provider: str, *, cached: bool = True) -> None:
    """Check ``payload`` for ``provider``; raise :class:`WireValidationError` on the first problem.

    ``provider`` is one of :data:`PROVIDERS`; anything else raises ``ValueError``. With
    ``cached=False`` every item is validated from scratch (the result is the same).
    """
    row = spec(provider)
    if not isinstance(payload, dict):
        raise WireValidationError(provider, "", "dict_type: payload must be a JSON object")
    if row.takes_betas and "betas" in payload:
        fail(
            provider,
            ("betas",),
            "extra_forbidden: 'betas' is the anthropic-beta header, not a body field "
            "(WireRequest.betas carries it)",
        )
    root = root_key(payload, provider)
    if row.carries_tools:
        if not (cached and _kimi_accepts(root, payload)):
            shaped, index_map = _split_kimi_carriers(payload, provider)
            check_shape(provider, schema(root), shaped, (), lambda p: _remap(p, index_map))
    elif not (cached and incremental.accepts(root, payload)):
        check_shape(provider, schema(root), payload)
    continued = (
        isinstance(payload.get("thread"), dict) and payload["thread"].get("type") == "continue"
    )
    if row.history_key == "messages" and payload.get("messages") == [] and not continued:
        # the SDK types take an empty list; the APIs refuse it (400) for all three, except a
        # thread continuation after a `pause_turn` reply: the server holds the whole history
        fail(provider, ("messages",), "too_short: 'messages' must hold a message, got []")
    SEMANTIC_CHECKS[provider](payload, provider)


def root_key(payload: dict[str, Any], provider: str) -> str:
    """The SDK request type a body is checked against (streaming, beta or plain)."""
    row = spec(provider)
    root = row.request_roots[0]
    if payload.get("type") == "response.create" and f"{root}-socket" in row.request_roots:
        return f"{root}-socket"  # a WebSocket message, typed by the SDK's client event
    if row.takes_betas and body_features(payload)[0]:
        root += "-beta"
    return root + "-stream" if payload.get("stream") is True else root


def required_betas(payload: dict[str, Any], provider: str) -> list[str]:
    """The ``anthropic-beta`` names a body needs (sorted; empty for other providers)."""
    if not (spec(provider).takes_betas and isinstance(payload, dict)):
        return []
    return body_features(payload)[1]


def _remap(path: Path, index_map: list[int] | None) -> Path:
    """Map a message index of the filtered Kimi payload back to the original one."""
    if index_map is None or len(path) < 2 or path[0] != "messages":
        return path
    idx = path[1]
    if isinstance(idx, int) and 0 <= idx < len(index_map):
        return ("messages", index_map[idx], *path[2:])
    return path


def _split_kimi_carriers(
    payload: dict[str, Any], provider: str
) -> tuple[dict[str, Any], list[int] | None]:
    """Validate Kimi's ``{"role": "system", "tools": [...]}`` messages; return the rest.

    The returned index map gives each kept message's index in the original payload.
    """
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return payload, None
    kept: list[Any] = []
    index_map: list[int] = []
    for i, msg in enumerate(messages):
        if not is_kimi_carrier(msg):
            kept.append(msg)
            index_map.append(i)
            continue
        for key in msg:
            if key not in ("role", "tools"):
                fail(provider, ("messages", i), f"extra_forbidden: unexpected key {key!r}")
        tools = msg["tools"]
        if not isinstance(tools, list):
            fail(provider, ("messages", i, "tools"), "list_type: 'tools' must be a list")
        for j, tool in enumerate(tools):
            check_shape(provider, schema("chat-tool"), tool, ("messages", i, "tools", j))
    return {**payload, "messages": kept}, index_map


class _KimiMessages:
    """The messages scanned so far without Kimi's tool carriers, and whether each carrier was
    valid."""

    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.invalid = False

    def __deepcopy__(self, memo: dict[int, Any]) -> _KimiMessages:
        copied = _KimiMessages()
        copied.kept, copied.invalid = list(self.kept), self.invalid  # frozen messages: shared
        return copied


def _kimi_step(state: _KimiMessages, _index: int, msg: Any) -> None:
    if not is_kimi_carrier(msg):
        state.kept.append(msg)
    elif not _carrier_valid(msg):
        state.invalid = True


_KIMI_MESSAGES = PrefixScan(_KimiMessages, _kimi_step)  # resumed over shared messages


def _kimi_accepts(root: str, payload: dict[str, Any]) -> bool:
    """Whether a Kimi body passes, validating only carriers and messages not seen before
    (`incremental`). ``False``: not shown valid here (the caller validates from scratch for
    the canonical error)."""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return False
    scanned = _KIMI_MESSAGES.scan(messages)
    return not scanned.invalid and incremental.accepts(root, {**payload, "messages": scanned.kept})


def _carrier_valid(carrier: dict[str, Any]) -> bool:
    tools = carrier["tools"]
    if carrier.keys() - {"role", "tools"} or not isinstance(tools, list):
        return False
    tool_schema = schema("chat-tool")
    return all(is_valid(tool_schema, tool) for tool in tools)


SEMANTIC_CHECKS.register(ANTHROPIC, check_anthropic_thread)  # a continuation read as one
SEMANTIC_CHECKS.register(OPENAI_RESPONSES, check_responses)
SEMANTIC_CHECKS.register(OPENAI_CHAT, check_chat)
SEMANTIC_CHECKS.register(KIMI, check_chat)  # Kimi's carriers are checked with the shape
