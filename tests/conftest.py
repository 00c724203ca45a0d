"""Shared fixtures: small tool catalogs built from real definitions, the real recordings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook import Session, Tool

from .real_recordings import need_real


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


def make_tools() -> list[Tool]:
    return [
        Tool(
            "get_weather",
            description="Get current weather for a location",
            parameters=obj(location={"type": "string", "description": "City name"}),
            execute=lambda location: f"Sunny, 21C in {location}",
        ),
        Tool(
            "get_shipping_eta",
            description="Look up shipping ETA for an order",
            parameters=obj(order_id={"type": "string", "description": "Order identifier"}),
            execute=lambda order_id: {"order_id": order_id, "eta": "2026-12-05"},
        ),
        Tool(
            "add",
            description="Add two numbers",
            parameters=obj(a={"type": "number"}, b={"type": "number"}),
            execute=lambda a, b: a + b,
        ),
        Tool(
            "read_file",
            description="Read a text file from the workspace",
            parameters=obj(path={"type": "string", "description": "Relative file path"}),
            execute=lambda path: f"contents of {path}",
        ),
    ]


@pytest.fixture
def tools() -> list[Tool]:
    return make_tools()


@pytest.fixture
def session(tools: list[Tool]) -> Session:
    return Session(
        system="You are a helpful agent.", tools=tools, active=["tool_search", "read_file"]
    )


@pytest.fixture
def ip() -> Iterator[Any]:
    """The shared IPython testing shell with the extension loaded, reset around each test."""
    from tests.notebook_shell import interactive_shell, reset_shell

    shell = interactive_shell()
    reset_shell(shell)
    yield shell
    reset_shell(shell)


@pytest.fixture(scope="session")
def real_recordings() -> Path:
    """The real recorded provider traffic (tests/real_recordings.py); a test that takes it skips
    with one reason where the recordings are not here."""
    return need_real()
