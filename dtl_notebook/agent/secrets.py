"""Masking API keys and auth headers in anything shown, saved, recorded or raised.

It lives in the lowest layer so that every layer's error texts can use it.
"""

from __future__ import annotations

import re
from typing import Any

# OpenAI / Anthropic / OpenAI-compatible (sk-...), Google (AIza...), GitHub tokens, xAI keys,
# and any bearer credential
_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|AIza[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{16,}"
    r"|xai-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,})"
)
_SECRET_KEYS = {"api_key", "authorization", "x-api-key", "api-key", "openai-api-key"}


def redact(value: Any) -> Any:
    """A copy with API keys and auth headers masked (in keys, values and nested data)."""
    if isinstance(value, dict):
        return {
            redact(k) if isinstance(k, str) else k: "[redacted]"
            if str(k).lower() in _SECRET_KEYS
            else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _SECRET.sub("[redacted]", value)
    return value


class MaskedError(Exception):
    """Stands in for an exception whose text may hold a key: its type name and masked text,
    with its traceback, so a chained traceback still shows where it came from."""


def masked_cause(exc: BaseException) -> BaseException:
    """An exception safe to chain as a `__cause__`: `exc` itself when neither its text, its
    notes nor its own chain hold a key, otherwise a MaskedError standing for it."""
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    hidden = exc.__context__ if exc.__suppress_context__ else None
    if hidden is not None and hidden is not cause:
        # not displayed (`raise ... from`), but still reachable through the chain: masked too
        exc.__context__ = masked_cause(hidden)
    safe_cause = masked_cause(cause) if cause is not None else None
    texts = [str(exc), *getattr(exc, "__notes__", ())]
    if safe_cause is cause and all(redact(t) == t for t in texts):
        return exc
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    stand_in = MaskedError(f"{name}: {redact(str(exc))}").with_traceback(exc.__traceback__)
    stand_in.__cause__ = safe_cause
    return stand_in
