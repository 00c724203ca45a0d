"""The bodies an emulator accepted, kept as the bytes that arrived.

A parsed body of a request carrying thousands of tool definitions is tens of thousands of
dicts and lists; keeping one per request made the heap grow by that much each time, and the
cyclic garbage collector walked all of them again and again (a quarter-second pause every few
requests). Bytes are one object the collector never looks into; a body is parsed again only
when someone reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, overload


class RequestLog(Sequence[dict[str, Any]]):
    """A read-only list of request bodies (each parsed from its stored bytes when read)."""

    def __init__(self) -> None:
        self._bodies: list[bytes] = []

    def append(self, body: bytes) -> None:
        """Keep one accepted body, as sent."""
        if not isinstance(body, bytes):
            raise TypeError(f"body must be bytes, got {type(body).__name__}")
        self._bodies.append(body)

    def __len__(self) -> int:
        return len(self._bodies)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [json.loads(body) for body in self._bodies[index]]
        parsed: dict[str, Any] = json.loads(self._bodies[index])
        return parsed

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (json.loads(body) for body in self._bodies)

    def __repr__(self) -> str:
        return f"RequestLog({len(self._bodies)} bodies)"
