"""The synthetic workloads every benchmark shares: a random tool catalog and a long session."""

from __future__ import annotations

import random

from dtl_notebook import Session, Tool, ToolCall

WORDS = (
    "weather shipping order eta customer invoice file calendar event add subtract city "
    "forecast refund ticket user account payment report chart email draft send archive "
    "search index vector table row column query schedule meeting room booking flight hotel"
).split()


def catalog(n: int, seed: int = 7) -> list[Tool]:
    rng = random.Random(seed)
    tools = []
    for i in range(n):
        words = rng.sample(WORDS, 6)
        props = {
            f"{w}_{j}": {"type": "string", "description": f"The {w} to use"}
            for j, w in enumerate(words[:2])
        }
        tools.append(
            Tool(
                f"{words[0]}_{words[1]}_{i}",
                description=" ".join(words) + f" tool number {i}",
                parameters={"type": "object", "properties": props, "required": list(props)},
                execute=lambda **_: "ok",
            )
        )
    return tools


def long_session(tools: list[Tool], turns: int) -> Session:
    """A transcript of about 4 messages per turn over a 10,000-tool registry."""
    session = Session(
        system="You are a benchmark agent. " * 50, tools=tools, active=["tool_search"]
    )
    for i in range(turns):
        session.user(f"task {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}")
        call = ToolCall(id=f"c{i}", name="tool_search", arguments={"query": WORDS[i % len(WORDS)]})
        session.assistant(tool_calls=[call])
        session.execute(call)
        session.assistant(f"done {i}")
    return session
