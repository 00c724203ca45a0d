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
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.agent.bridge import is_bridged
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.live.loop import Agent, Step
from dtl_notebook.wire import WireRequest, build_request
from dtl_notebook.wire.modes import LOAD_MODES, check_modes


@dataclass(frozen=True)
class ModeFigures:
    """One mode's requests over the run, as the analyzer predicts them."""

    mode: str
    requests: int
    input_tokens: int
    cached_tokens: int
    best_cached_tokens: int  # the theoretical cache: each previous request's length, floored
    breaks: int
    first_request_tokens: int
    notes: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The share of the theoretical cache this mode keeps (1.0: all of it)."""
        return self.cached_tokens / self.best_cached_tokens if self.best_cached_tokens else 1.0


@dataclass(frozen=True)
class ModeComparison:
    provider: str
    model: str
    rows: list[ModeFigures]

    def table(self) -> str:
        """The rows as a fixed-width text table."""
        head = (
            f"{'mode':<12} {'requests':>8} {'input tokens':>13} {'cached':>10} "
            f"{'theoretical':>12} {'share':>7} {'breaks':>6}"
        )
        lines = [f"{self.provider} · {self.model}", head, "-" * len(head)]
        for r in self.rows:
            lines.append(
                f"{r.mode:<12} {r.requests:>8} {r.input_tokens:>13,} {r.cached_tokens:>10,} "
                f"{r.best_cached_tokens:>12,} {r.share:>7.1%} {r.breaks:>6}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()


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
        column = _Column(agent, mode)
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
        self.columns = [_Column(agent, mode) for mode in modes]
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


class _Column:
    """One mode's requests and their analyzer."""

    def __init__(self, agent: Agent, mode: str | None) -> None:
        self.provider, self.model = agent.provider, agent.model
        self.options: dict[str, Any] = {} if mode is None else {"load_mode": mode}
        self.analyzer = CacheAnalyzer(agent.provider, agent.model)
        self.label, self.notes = mode or "", list[str]()

    def add(self, session: Session) -> None:
        request = build_request(session, self.provider, self.model, **self.options)
        self.label, self.notes = request.mode, request.notes
        self.analyzer.add(request)

    def figures(self) -> ModeFigures:
        entries = self.analyzer.entries
        return ModeFigures(
            self.label,
            len(entries),
            sum(e.total_tokens for e in entries),
            sum(e.cached_tokens for e in entries[1:]),
            sum(e.best_cached_tokens for e in entries[1:]),
            sum(1 for e in entries if e.cache_break is not None),
            entries[0].total_tokens,
            list(self.notes),
        )


def _session_at(session: Session, step: Step) -> Session:
    """A scratch copy of the session as it was when `step`'s request was built."""
    assert step.state is not None
    scratch = session.scratch_copy()
    scratch.messages = session.messages[: step.state.message_count]
    scratch.restore_active_tools(step.state.active_tools)
    return scratch
