"""What an agent's turn is made of: its steps (one request each, keep-warm refreshes
included), the turn's result, and the events listeners hear."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent.messages import ToolCall, ToolResultMessage
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.collapse import CacheMiss
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.keep_warm import RefreshDecision
from dtl_notebook.context.model import ModelContext
from dtl_notebook.live.transport import redact
from dtl_notebook.wire import Reply, WireRequest

__all__ = ["AgentEvent", "Listener", "Step", "StepState", "TurnResult"]


@dataclass(frozen=True)
class StepState:
    """The agent's own state when a request was built (layer 1 as the request saw it)."""

    message_count: int  # the request serialized session.messages[:message_count]
    active_tools: tuple[str, ...]
    registry_size: int
    sections: dict[str, str]


@dataclass(repr=False)
class Step:
    """One request of a turn and everything known about it."""

    turn: int
    request: WireRequest
    response: dict[str, Any]
    reply: Reply
    context: ModelContext
    cache: CacheEntry
    results: list[ToolResultMessage] = field(default_factory=list)
    state: StepState | None = None
    # the request was a keep-warm refresh sent while the user was idle: why, its cost, saving
    keep_warm: RefreshDecision | None = None
    # the request read clearly less than the previous one left warm, and why
    cache_miss: CacheMiss | None = None
    # when it was sent and answered, nanoseconds since the epoch (its telemetry span)
    sent_ns: tuple[int, int] | None = None

    @property
    def shown_request(self) -> dict[str, Any]:
        """The request body with any secret masked."""
        return redact(self.request.payload)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        calls = [c.name for c in self.reply.message.tool_calls]
        brk = self.cache.cache_break
        return (
            f"Step(turn={self.turn}, provider={self.request.provider}, mode={self.request.mode}, "
            f"calls={calls}, cached={self.cache.cached_tokens}/{self.cache.total_tokens}"
            + (f", break={str(brk.cause)!r}" if brk else "")
            + ")"
        )


@dataclass(repr=False)
class TurnResult:
    text: str | None
    steps: list[Step]
    stopped: str | None = None  # why the turn ended without a final answer

    def __repr__(self) -> str:
        text = self.text if self.text is not None else f"<{self.stopped}>"
        short = text if len(text) <= 80 else text[:77] + "..."
        return f"TurnResult(steps={len(self.steps)}, text={short!r})"


@dataclass(frozen=True)
class AgentEvent:
    """What listeners hear: "turn_start", "step", "turn_end", "turn_failed" while a turn runs;
    "cache_miss" after a step that collapsed (`step.cache_miss`); "keep_warm" after a
    refresh step."""

    kind: str
    text: str = ""
    step: Step | None = None
    error: str | None = None


Listener = Callable[[AgentEvent], None]


def activate_registered(session: Session, request: WireRequest, calls: list[ToolCall]) -> None:
    """Activate the called tools that the request loaded where their registration was
    recorded (hosted search declares a tool registered mid-session there, callable), as
    one the provider's search loaded; a tool a change touched keeps its own history."""
    if not calls:
        return
    timeline = session.timeline()
    loaded = {n for lp in request.load_points if lp.kind == "load" for n in lp.tools}
    names = [
        c.name
        for c in calls
        if c.name in loaded
        and c.name in timeline.registered
        and c.name in session.registry
        and not timeline.events(c.name)
    ]
    if names:
        session.activate(names)
