"""Segments, the model context they make up, and the text helpers that render payload parts.

How a payload becomes segments, and how unchanged parts are replayed from the previous request,
is `collector.Collector`'s job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook._reuse.registry import memoized
from dtl_notebook.context.calibration import Estimate
from dtl_notebook.context.media import media_key

KINDS = (
    "hidden",
    "tool_schema",
    "tool_summary",
    "system",
    "system_patch",
    "message",
    "tool_result",
    "loaded_schema",
    "not_seen",  # sent, but dropped by the provider before the model saw it: 0 tokens
    "tool_withdrawn",  # a tool the model may no longer call from here on (definition kept)
)
# Segments the provider frames one by one (role markers, block delimiters).
FRAMED_KINDS = frozenset({"system", "system_patch", "message", "tool_result"})


@dataclass(frozen=True)
class Segment:
    """One piece of the model context, in order."""

    kind: str
    text: str
    tokens: int
    source: str
    label: str = ""
    role: str | None = None
    load_point: str | None = None  # JSON path of the item that loaded this definition
    block: int = -1  # cacheable unit (Anthropic block) this segment belongs to

    @property
    def digest(self) -> str:
        return _digest(self.text, self.kind)


@dataclass(repr=False)
class ModelContext:
    """The ordered segments a provider puts in front of the model for one request."""

    provider: str
    model: str
    segments: list[Segment]
    tokenizer: str
    exact_tokens: bool
    notes: list[str] = field(default_factory=list)
    estimate: Estimate = field(default_factory=lambda: Estimate("unknown", False))
    # the same segments in a list nobody edits (the renderer's own), and how many of them are
    # the previous rendering's list's leading segments: the analyzer carries facts over them
    rendered: Rendered | None = field(default=None, compare=False)

    @property
    def total_tokens(self) -> int:
        return sum(s.tokens for s in self.segments)

    def __repr__(self) -> str:
        return (
            f"ModelContext(provider={self.provider}, model={self.model}, "
            f"segments={len(self.segments)}, tokens={self.total_tokens}"
            f"{'' if self.estimate.exact else ' (estimate)'})"
        )

    def __iter__(self) -> Iterator[Segment]:
        return iter(self.segments)

    def __len__(self) -> int:
        return len(self.segments)

    def of_kind(self, *kinds: str) -> list[Segment]:
        return [s for s in self.segments if s.kind in kinds]


@memoized("segment digests")
def _digest(text: str, kind: str) -> str:
    return hashlib.blake2b(f"{kind}\0{text}".encode(), digest_size=16).hexdigest()


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def strip(tool: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k not in keys}


def block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "input_image", "image_url"):
        return f"[image {media_key(block.get('source') or block.get('image_url') or block)}]"
    if kind == "tool_use":
        return dump(
            {"tool_use": block.get("name"), "id": block.get("id"), "input": block.get("input")}
        )
    return dump(strip(block, "cache_control"))


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        block_text({**p, "type": "text"} if p.get("type") in ("input_text", "output_text") else p)
        for p in content or []
    )


@dataclass(frozen=True)
class Rendered:
    """A context's segments as rendered (a list nobody edits), and its ancestry: for each of
    the last few renderings it replayed from, directly or through another, that rendering's
    list and how many of its leading segments start this one (the very objects)."""

    segments: list[Segment]
    ancestry: tuple[tuple[list[Segment], int], ...] = ()

    def shares(self, earlier: list[Segment]) -> int | None:
        """How many leading segments of `earlier` start this list, where known by ancestry."""
        return next((n for lst, n in self.ancestry if lst is earlier), None)
