"""The change-heavy workload: 40 turns with 20 tool-list changes, under every strategy.

Before every other turn the tool list changes as an MCP server's `list_changed` would change it
(a new tool offered, an active tool redefined or withdrawn, in turn). The changes are made with
`Session.registry.register`, `redefine_tool` and `remove_tools` directly, the same neutral
events `McpConnection` records, so the run stays fast (no server process). Each turn the
emulated model searches when its tool is not visible, calls it, and answers. Figures as in
cache_workload.py: bytes of the bodies and the analyzer's token predictions side by side. The
native and hosted rows declare every registered tool, so each tool the server offers grows
`tools[]` (deferred, after the tools registered before it: raw byte breaks); the analyzer
judges what that costs on each provider.
"""

from __future__ import annotations

from typing import Any

from cache_workload import DirectEmulator, Outcome, row
from shared_sessions import shared_rows
from workloads import (
    CHANGE_KINDS,
    CHANGE_TURNS,
    apply_change,
    arguments_for,
    change_catalog,
)

from dtl_notebook import Session
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator.policies import ScriptedPolicy

SYSTEM = "You are an operations assistant. Search for a tool before you say you can't."
STRATEGIES: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("chat full list (resend on every change)", "openai-chat", "gpt-4.1", {}),
    ("chat bridge (tool_search + call_tool)", "openai-chat", "gpt-4.1", {"load_mode": "bridge"}),
    ("kimi system tools", "kimi", "kimi-k2", {}),
    ("kimi bridge", "kimi", "kimi-k2", {"load_mode": "bridge"}),
    ("responses additional_tools", "openai-responses", "gpt-5.4", {}),
    ("responses full list", "openai-responses", "gpt-5.4", {"load_mode": "full_list"}),
    ("anthropic tool_reference", "anthropic", "claude-sonnet-4-6", {}),
    # the providers' own search: every registered tool declared, each change told in place
    (
        "anthropic native bm25 (system messages)",
        "anthropic",
        "claude-opus-4-8",
        {"search": "native-bm25"},
    ),
    ("responses hosted search", "openai-responses", "gpt-5.6", {"search": "hosted"}),
)


def run(label: str, provider: str, model: str, options: dict[str, Any]) -> Outcome:
    """The workload under one strategy on the emulator; every request kept."""
    tools, reserve = change_catalog()
    reserve = list(reserve)
    session = Session(system=SYSTEM, tools=tools, active=["tool_search"], search="bm25")
    transport = DirectEmulator(provider, ScriptedPolicy([]))
    agent = Agent(session, provider, model, transport, max_steps=4, **options)
    discover = iter(tools)
    added: str | None = None
    for turn in range(CHANGE_TURNS):
        if turn % 2:
            kind, name = apply_change(session, CHANGE_KINDS[turn // 2 % 3], reserve)
            added = name if kind == "add" else None
        visible = [n for n in session.active_tools if n not in ("tool_search", "call_tool")]
        if added is not None:
            target, added = added, None
        elif turn % 4 < 2 or not visible:
            target = next(n.name for n in discover if n.name not in visible)
        else:
            target = visible[-1]
        tool = session.registry[target]
        steps: list[dict[str, Any]] = []
        if target not in visible:
            steps.append({"search": tool.description})
        steps += [{"call": target, "arguments": arguments_for(tool)}, {"text": f"Done: {target}."}]
        transport.emulator.policy = ScriptedPolicy(steps)
        agent.run(f"Turn {turn}: please run {target}.")
    refused = sum(1 for s in agent.steps if "I cannot call" in (s.reply.message.text or ""))
    payloads = [s.request.payload for s in agent.steps]
    return Outcome(label, provider, payloads, [s.cache for s in agent.steps], refused)


def change_rows() -> list[dict[str, Any]]:
    """Every strategy's row, full-list resend first, then several sessions (subagents and a
    re-run) sharing one cache scope on the same catalog."""
    return [row(run(*strategy)) for strategy in STRATEGIES] + shared_rows(change_catalog()[0])


if __name__ == "__main__":
    import time

    from results_table import markdown

    start = time.perf_counter()
    rows = change_rows()
    print(markdown("Change-heavy workload (40 turns, 20 tool-list changes)", rows))
    print(f"{time.perf_counter() - start:.1f} s")
