"""The cache workload's conversation and catalogs: 40 user turns that discover 12 tools.

Everything is deterministic: the turn texts, the tool each turn calls (arguments filled from the
text by the emulator's own argument filler), the search query of each discovery turn, and the
2,000-tool catalog (the demo catalog plus generated, namespaced tools).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dtl_notebook import Tool
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live.emulator.policies import fill_arguments
from dtl_notebook.live.emulator.request_view import VisibleTool

TURNS = 40
# (tool discovered, search query, user text with {i} for follow-ups)
TARGETS = (
    ("get_shipping_eta", "shipping eta order", "What is the shipping ETA of order_{i}?"),
    ("get_current_weather", "current weather city", "What is the weather in Paris, reading {i}?"),
    ("get_invoice", "get invoice", "Show me invoice inv_{i}."),
    ("lookup_customer", "lookup customer", "Look up customer cust_{i}."),
    ("convert_currency", "convert currency amount", "Convert {i} USD to EUR."),
    ("get_support_ticket", "support ticket", "Show support ticket tkt_{i}."),
    ("lookup_employee", "lookup employee", "Look up employee emp_{i}."),
    ("check_stock", "check stock product", "Check the stock of SKU-{i}."),
    ("get_flight_status", "flight status", "What is the status of flight AF{i}?"),
    ("convert_timezone", "convert timezone time", "Convert {i}:00 from Paris time to Tokyo time."),
    ("convert_length", "convert length units", "Convert {i} miles to kilometres."),
    ("count_words", "count words text", "Count the words in: the quick brown fox {i}"),
)
GENERATED_DOMAINS = (
    "analytics marketing legal procurement security devops payroll fleet energy insurance "
    "recruiting compliance facilities events research sales partners loyalty audit media"
).split()
VERBS = "get list create update delete search export import approve archive".split()
OBJECTS = "record report asset policy contract campaign device incident budget request".split()


@dataclass(frozen=True)
class Turn:
    text: str
    tool: str
    arguments: dict[str, Any]
    query: str | None  # the search query on a discovery turn


def conversation(tools: list[Tool]) -> list[Turn]:
    """12 discovery turns (every third turn) and 28 follow-ups calling a tool found earlier."""
    by_name = {t.name: t for t in tools}
    turns: list[Turn] = []
    discovered: list[int] = []
    for index in range(TURNS):
        if index % 3 == 0 and len(discovered) < len(TARGETS):
            target, query = len(discovered), TARGETS[len(discovered)][1]
            discovered.append(target)
        else:
            target, query = discovered[index % len(discovered)], None
        name, _, template = TARGETS[target]
        text = template.format(i=1000 + index)
        tool = by_name[name]
        visible = VisibleTool(tool.name, tool.description, tool.parameters)
        turns.append(Turn(text, name, fill_arguments(visible, text), query))
    return turns


def generated_catalog(total: int = 2_000, seed: int = 11) -> list[Tool]:
    """The demo catalog topped up to `total` tools with generated ones in 20 more namespaces."""
    tools = demo_catalog()
    rng = random.Random(seed)
    for i in range(total - len(tools)):
        domain = GENERATED_DOMAINS[i % len(GENERATED_DOMAINS)]
        verb, obj = rng.choice(VERBS), rng.choice(OBJECTS)
        props = {
            f"{obj}_id": {"type": "string", "description": f"The {domain} {obj} identifier"},
            "note": {"type": "string", "description": f"Why the {obj} is {verb}d"},
        }
        tools.append(
            Tool(
                f"{domain}_{verb}_{obj}_{i}",
                description=f"{verb.capitalize()} a {domain} {obj} (variant {i}).",
                parameters={"type": "object", "properties": props, "required": [f"{obj}_id"]},
                execute=lambda **_: "ok",
                namespace=domain,
            )
        )
    return tools


# the workload's catalogs by table title; built where needed (a worker process builds its own)
CATALOGS: dict[str, Callable[[], list[Tool]]] = {
    "demo catalog": demo_catalog,
    "2,000-tool catalog": generated_catalog,
}
