"""One session's requests under several load modes, side by side: what each would have cached.

`compare_load_modes(agent)` takes the session as it was at each step of an agent's run (its
messages and active tools then), serializes it in each mode, and runs every mode's requests
through its own CacheAnalyzer: the same conversation, only the serialization differs.
`LoadModeWatch(agent)` does the same while the run goes on, for runs whose registry loses tools
(an MCP server withdrawing one), which a later re-serialization cannot bring back. The
figures are the analyzer's predictions under the provider's published caching rules
(cache/prefix_rules.py); what a mode costs beyond the cache (the bridge's indirect calls) is in
each row's notes, and the emulator cannot judge it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.agent.bridge import is_bridged
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.mode_figures import ModeColumn, ModeComparison, ModeFigures
from dtl_notebook.live.agent import Agent, Step
from dtl_notebook.wire import WireRequest
from dtl_notebook.wire.modes import LOAD_MODES, check_modes

__all__ = ["LoadModeWatch", "ModeComparison", "ModeFigures", "compare_load_modes"]


def compare_load_modes(
    agent: Agent, modes: Sequence[str | None] = (None, "bridge")
) -> ModeComparison:
    """Each step of `agent`'s run so far re-serialized in each mode (None: the provider's
    default, full_list on openai-chat), side by side. A tool unregistered since (an MCP
    server withdrew it) cannot be re-serialized: watch such a run with `LoadModeWatch`."""
    _check(agent, modes)
    steps = [s for s in agent.steps if s.state is not None and s.request.provider == agent.provider]
    if not steps:
        raise InvalidArgumentError(f"the agent has no {agent.provider} steps to compare yet")
    registry = agent.session.registry
    gone = sorted({n for s in steps if s.state for n in s.state.active_tools if n not in registry})
    if gone:
        raise InvalidArgumentError(
            f"tool(s) {gone} active during the run are no longer registered, so the run cannot "
            "be re-serialized: watch it from the start with LoadModeWatch(agent, modes)"
        )
    rows = []
    for mode in modes:
        column = ModeColumn(agent.provider, agent.model, mode)
        for step in steps:
            column.add(_session_at(agent.session, step))
        rows.append(column.figures())
    return ModeComparison(agent.provider, agent.model, rows)


class LoadModeWatch:
    """Serializes each request of an agent's run in each mode as it is sent (the session as
    the request saw it), beside the request itself: `comparison()` gives the figures.

    It sits in front of the agent's transport from now on (until `Agent.switch` or
    `use_transport` replaces it)."""

    def __init__(self, agent: Agent, modes: Sequence[str | None] = (None, "bridge")) -> None:
        _check(agent, modes)
        self.agent, self.inner = agent, agent.transport
        self.name = self.inner.name
        self.columns = [ModeColumn(agent.provider, agent.model, mode) for mode in modes]
        agent.use_transport(self)

    def send(self, request: WireRequest) -> Any:
        for column in self.columns:
            column.add(self.agent.session)
        return self.inner.send(request)

    def comparison(self) -> ModeComparison:
        if not self.columns[0].analyzer.entries:
            raise InvalidArgumentError("no request was sent since the watch began")
        return ModeComparison(
            self.agent.provider, self.agent.model, [c.figures() for c in self.columns]
        )


def _check(agent: Agent, modes: Sequence[str | None]) -> None:
    if not isinstance(agent, Agent):
        raise checks.type_error("agent", "an Agent", agent)
    if isinstance(modes, str) or not isinstance(modes, Sequence) or not modes:
        raise checks.type_error("modes", "a non-empty list of load modes (or None)", modes)
    for i, mode in enumerate(modes):
        if mode is not None:
            checks.choice(mode, f"modes[{i}]", LOAD_MODES)
            check_modes(agent.provider, None, mode)
    if "bridge" in modes and not is_bridged(agent.session.registry):
        raise InvalidArgumentError(
            "modes: 'bridge' needs a session that runs with load_mode='bridge' (its transcript "
            "calls tools through call_tool)"
        )


def _session_at(session: Session, step: Step) -> Session:
    """A scratch copy of the session as it was when `step`'s request was built."""
    assert step.state is not None
    return session.as_of(step.state.message_count, step.state.active_tools)
