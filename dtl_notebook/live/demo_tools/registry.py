"""The registry the demo tools' implementations are collected in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

J = dict[str, Any]
Fn = Callable[..., Any]
F = TypeVar("F", bound=Fn)


class _Domain:
    """Collects the implementations of one namespace by tool name: `@tool` on a function
    registers it under the function's name, `tool.add(name, fn)` under an explicit one. The
    definitions (descriptions and parameter schemas) live in data/demo_catalog.json."""

    def __init__(self, namespace: str, out: dict[str, tuple[str, Fn]]) -> None:
        self.namespace = namespace
        self.out = out

    def add(self, name: str, fn: Fn) -> None:
        if name in self.out:
            raise ValueError(f"implementation {name!r} registered twice")
        self.out[name] = (self.namespace, fn)

    def __call__(self, fn: F) -> F:
        self.add(fn.__name__, fn)
        return fn
