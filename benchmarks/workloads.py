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


# -- the change-heavy workload: the tool list changes under the agent every other turn --------
CHANGE_TURNS, CHANGES = 40, 20
CHANGE_KINDS = ("add", "redefine", "remove")  # one MCP list change each, in turn


def change_catalog(n: int = 60, seed: int = 11) -> tuple[list[Tool], list[Tool]]:
    """The registry a change-heavy session starts with, and the tools a server offers later."""
    tools = catalog(n + CHANGES, seed)
    return tools[:n], tools[n:]


def apply_change(session: Session, kind: str, reserve: list[Tool]) -> tuple[str, str]:
    """One tool-list change, as an MCP `list_changed` would record it: a new tool registered
    (deferred: found by a later search), or an active tool redefined or withdrawn (each a
    neutral SystemUpdate). Returns (kind done, tool name); with no active tool to change, a
    tool is added instead."""
    found = [n for n in session.active_tools if n not in ("tool_search", "call_tool")]
    if kind == "redefine" and found:
        old = session.registry[found[0]]
        new = Tool(
            old.name,
            description=old.description + " (revised)",
            parameters=dict(old.parameters),
            execute=old.execute,
        )
        session.redefine_tool(new)
        return kind, old.name
    if kind == "remove" and found:
        session.remove_tools([found[0]])
        return kind, found[0]
    tool = reserve.pop(0)
    session.registry.register(tool)
    return "add", tool.name


def arguments_for(tool: Tool) -> dict[str, str]:
    """Deterministic arguments for a catalog tool (every parameter is a string)."""
    return {name: f"{name}-value" for name in tool.parameters.get("properties", {})}
