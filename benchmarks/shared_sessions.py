"""The "several sessions sharing a prefix" row: one agent's session, two subagents and a
re-run of the first session, all of one organization, so the provider's cache is theirs to
share (any request of the scope reads a prefix another wrote within its lifetime).

Every session runs on one emulator (its cache is the emulated provider's, shared by scope),
and every agent predicts with one `PrefixStore`; the row's figures are the predictions, and
its `emulator` column compares each prediction with the emulator's own accounting.
"""

from __future__ import annotations

from typing import Any

from cache_workload import SYSTEM, Outcome, Strategy, row, workload_session
from workload_script import TARGETS, Turn, conversation
from workloads import arguments_for

from dtl_notebook import Session, Tool
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.demo import core_tool_names
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.emulator.policies import ScriptedPolicy
from dtl_notebook.wire import WireRequest

STRATEGIES = (
    Strategy("several sessions sharing a prefix (anthropic)", "anthropic", "claude-sonnet-4-6"),
    Strategy("several sessions sharing a prefix (responses)", "openai-responses", "gpt-5.4"),
)


class Clock:
    """The shared send time: every request 2 seconds after the one before."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 2.0
        return self.now


class SharedEmulator:
    """One emulated provider for every session: what one organization's traffic meets."""

    name = "emulator"

    def __init__(self, provider: str, clock: Clock) -> None:
        self.emulator = Emulator(provider, ScriptedPolicy([]), clock=lambda: clock.now)

    def send(self, request: WireRequest) -> dict[str, Any]:
        return self.emulator.respond(request.payload)


def _turns(tools: list[Tool]) -> dict[str, list[Turn]]:
    """Each session's turns: the main session's first four, two each for the subagents, and
    the main session's again for the re-run. A catalog without the demo workload's tools
    (the change-heavy one) has its own tools called in order."""
    names = {t.name for t in tools}
    if all(target in names for target, _, _ in TARGETS):
        turns = conversation(tools)
    else:
        turns = [Turn(f"Please run {t.name}.", t.name, arguments_for(t), None) for t in tools]
    return {
        "main": turns[:4],
        "subagent 1": turns[4:6],
        "subagent 2": turns[6:8],
        "re-run of main": turns[:4],
    }


def _session(tools: list[Tool], strategy: Strategy) -> Session:
    """The demo workload's session where its core tools are in the catalog, else the
    change-heavy workload's (only tool_search active)."""
    if set(core_tool_names()) <= {t.name for t in tools}:
        return workload_session(tools, strategy)
    return Session(system=SYSTEM, tools=tools, active=["tool_search"], search="bm25")


def _steps(session: Session, turns: list[Turn]) -> list[dict[str, Any]]:
    """The emulated model's steps for one session: a search first for every tool this
    session has not found yet (what another session found is not in its tools), then the
    call and the answer."""
    steps: list[dict[str, Any]] = []
    found = set(session.active_tools)
    for turn in turns:
        if turn.tool not in found:
            steps.append({"search": turn.query or session.registry[turn.tool].description})
            found.add(turn.tool)
        steps += [{"call": turn.tool, "arguments": turn.arguments}, {"text": f"Done: {turn.tool}."}]
    return steps


def run_shared(tools: list[Tool], strategy: Strategy) -> Outcome:
    """The sessions one after the other on one emulator and one prediction store."""
    clock, store = Clock(), PrefixStore()
    transport = SharedEmulator(strategy.provider, clock)
    payloads, entries, refused, starts = [], [], 0, []
    for turns in _turns(tools).values():
        starts.append(len(entries))
        session = _session(tools, strategy)
        agent = Agent(
            session,
            strategy.provider,
            strategy.model,
            transport,
            max_steps=4,
            clock=clock,
            prefix_store=store,
            **strategy.options,
        )
        transport.emulator.policy = ScriptedPolicy(_steps(session, turns))
        for turn in turns:
            agent.run(turn.text)
        payloads += [s.request.payload for s in agent.steps]
        entries += [s.cache for s in agent.steps]
        refused += sum(1 for s in agent.steps if "I cannot call" in (s.reply.message.text or ""))
    return Outcome(strategy.label, strategy.provider, payloads, entries, refused, tuple(starts))


def shared_rows(tools: list[Tool]) -> list[dict[str, Any]]:
    """One row per provider: the sessions' figures as predicted, checked against the
    emulator's."""
    return [row(run_shared(tools, strategy)) for strategy in STRATEGIES]
