"""Cache figures computed from the request bodies themselves.

Each body is rendered in the provider's cache order (tools, then system/instructions, then the
messages/input), compact JSON with keys as sent and cache markers removed (a marker moving is not
a content change). Consecutive renders are compared by their longest common byte prefix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

RENDER_ORDER = {
    "anthropic": ("tools", "system", "messages"),
    "openai-responses": ("tools", "instructions", "input"),
    "openai-chat": ("tools", "messages"),
    "kimi": ("tools", "messages"),
}
MARKERS = {"cache_control", "prompt_cache_breakpoint"}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in MARKERS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def render(payload: dict[str, Any], provider: str, *, raw: bool = False) -> bytes:
    """The body's cacheable content in provider order, as bytes. Unless `raw`, tools sent
    with `defer_loading: true` are left out: the provider keeps them out of the prompt."""
    parts: list[str] = []
    for key in RENDER_ORDER[provider]:
        value = _strip(payload.get(key))
        if key == "tools" and isinstance(value, list) and not raw:
            value = [t for t in value if not (isinstance(t, dict) and t.get("defer_loading"))]
        if isinstance(value, list):  # items, not the closing bracket: appending keeps a prefix
            parts += ["[", *(_compact(item) + "," for item in value)]
        elif value is not None:
            parts.append(_compact(value))
    return "".join(parts).encode()


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (binary search over C-speed slice compares)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class ByteFigures:
    requests: int
    total_bytes: int
    cached_bytes: int  # sum of the common prefix with the previous request
    best_bytes: int  # sum of the most that could be cached: min(previous, current) length
    breaks: int  # requests whose previous request is not (up to length) a prefix

    FIELDS = ("requests", "total_bytes", "cached_bytes", "best_bytes", "breaks")

    @property
    def retention(self) -> float:
        return self.cached_bytes / self.best_bytes if self.best_bytes else 1.0


def byte_figures(renders: list[bytes]) -> ByteFigures:
    cached = best = breaks = 0
    for previous, current in pairwise(renders):
        common = common_prefix(previous, current)
        limit = min(len(previous), len(current))
        cached, best = cached + common, best + limit
        breaks += common < limit
    return ByteFigures(len(renders), sum(map(len, renders)), cached, best, breaks)
