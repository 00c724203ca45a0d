"""The provider a request body was written for, told by its shape alone (a capture without
the URL it went to), from the signs the provider table lists for each row (`body_signs` in
`data/providers.json`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtl_notebook.wire.providers import SPECS, spec

__all__ = ["provider_of_body"]


def provider_of_body(payload: dict[str, Any]) -> str:
    """The row whose sign the body shows first (the lowest rank), else the row with no signs
    (a plain body)."""
    signs = sorted(
        ((sign["rank"], name, sign) for name in SPECS for sign in spec(name).body_signs),
        key=lambda ranked: ranked[0],
    )
    for _, name, sign in signs:
        if _shows(payload, sign):
            return name
    return next(name for name in SPECS if not spec(name).body_signs)


def _shows(payload: dict[str, Any], sign: dict[str, Any]) -> bool:
    """Whether the body meets every condition of one sign."""
    listed = payload.get("messages")  # a malformed list is the shape check's to name, later
    messages = [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []
    checks: dict[str, Callable[[Any], bool]] = {
        "all_keys": lambda keys: all(k in payload for k in keys),
        "any_key": lambda keys: any(k in payload for k in keys),
        "block_types": lambda types: _has_blocks(messages, set(types)),
        "system_tools": lambda wanted: (
            wanted == any(m.get("role") == "system" and "tools" in m for m in messages)
        ),
        "model_prefix": lambda prefix: str(payload.get("model", "")).startswith(prefix),
    }
    return all(checks[name](value) for name, value in sign.items() if name != "rank")


def _has_blocks(messages: list[dict[str, Any]], types: set[str]) -> bool:
    """Whether some message's content list holds a block of one of `types`."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in types for b in content
        ):
            return True
    return False
