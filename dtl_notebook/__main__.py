"""`python -m dtl_notebook`: an offline walk through deferred tool loading, printed."""

from __future__ import annotations

import json

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import tool_catalog


def _catalog() -> list[Tool]:
    def obj(**props: str) -> dict[str, object]:
        return {
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
            "required": list(props),
        }

    return [
        Tool(
            name="read_file",
            description="Read a text file from the workspace",
            parameters=obj(path="Relative file path"),
            execute=lambda path: f"<{path}>",
        ),
        Tool(
            name="get_weather",
            description="Current weather for a city",
            parameters=obj(city="City name"),
            execute=lambda city: f"Sunny, 21C in {city}",
        ),
        Tool(
            name="get_shipping_eta",
            description="Look up the shipping ETA of an order",
            parameters=obj(order_id="Order id such as order_42"),
            execute=lambda order_id: {"order_id": order_id, "eta": "2026-12-05"},
        ),
        Tool(
            name="create_invoice",
            description="Create an invoice for a customer",
            parameters=obj(customer_id="CRM customer id"),
        ),
        Tool(
            name="list_events",
            description="List calendar events on a day",
            parameters=obj(day="ISO date"),
        ),
    ]


def main() -> None:
    tools = _catalog()
    session = Session(
        system="You are a logistics assistant.",
        tools=tools,
        active=["tool_search", "read_file"],
        sections={"tool_catalog": tool_catalog(t for t in tools if t.name != "read_file")},
    )
    print("registered:", session.registry.names())
    print("active at start:", session.active_tools)
    session.user("What is the ETA of order_42?")
    search = ToolCall(id="call_1", name="tool_search", arguments={"query": "shipping eta order"})
    session.assistant(tool_calls=[search])
    result = session.execute(search)
    print("\ntool_search ->", result.text)
    print("marker added_tool_names:", result.added_tool_names)
    print("active now:", session.active_tools)
    eta = ToolCall(id="call_2", name="get_shipping_eta", arguments={"order_id": "order_42"})
    session.assistant(tool_calls=[eta])
    print("get_shipping_eta ->", session.execute(eta).text)
    split = session.split()
    print("\nimmediate (cached prefix):", [t.name for t in split.immediate])
    print("deferred (enter at their load point):", list(split.deferred))
    print("\nsystem prompt the model holds:\n" + json.dumps(session.held_sections(), indent=1))


if __name__ == "__main__":
    main()
