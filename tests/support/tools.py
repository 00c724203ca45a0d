"""A small tool catalog built from real definitions, shared by the tests."""

from __future__ import annotations

from typing import Any

from dtl_notebook import Tool


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
