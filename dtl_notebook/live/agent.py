"""The agent loop: one user turn, tools executed through the session, every step kept."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.messages import ToolResultMessage
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer, CacheEntry
from dtl_notebook.context.model import ModelContext, model_context
from dtl_notebook.live.policies import Policy
from dtl_notebook.live.recording import Recorder
from dtl_notebook.live.transport import Transport, emulator_transport, live_transport, redact
from dtl_notebook.wire import Reply, WireRequest, build_request, parse_response
from dtl_notebook.wire.profiles import profile_for


class TurnError(DtlError, RuntimeError):
    """A turn failed; the session is as it was before the turn."""


@dataclass
class Step:
    """One request of a turn and everything known about it."""

    turn: int
    request: WireRequest
    response: dict[str, Any]
    reply: Reply
    context: ModelContext
    cache: CacheEntry
    results: list[ToolResultMessage] = field(default_factory=list)

    @property
    def shown_request(self) -> dict[str, Any]:
        """The request body with any secret masked."""
        return redact(self.request.payload)  # type: ignore[no-any-return]


@dataclass
class TurnResult:
    text: str | None
    steps: list[Step]
    stopped: str | None = None  # why the turn ended without a final answer


class Agent:
    """Runs turns of a session against a provider, through the emulator by default."""

    def __init__(
        self,
        session: Session,
        provider: str,
        model: str,
        transport: str | Transport = "emulator",
        *,
        policy: Policy | None = None,
        max_steps: int = 10,
        api_key: str | None = None,
        base_url: str | None = None,
        record: str | None = None,
        **options: Any,
    ) -> None:
        profile_for(provider, model, **(options.get("profile") or {}))  # fail early on bad input
        self.session, self.provider, self.model = session, provider, model
        self.options, self.max_steps = options, max_steps
        if transport == "emulator":
            self.transport: Transport = emulator_transport(provider, policy)
        elif transport == "live":
            self.transport = live_transport(provider, api_key, base_url)
        elif isinstance(transport, str):
            raise ValueError(
                f"transport must be 'emulator', 'live' or a Transport, got {transport!r}"
            )
        else:
            self.transport = transport
        if record:
            self.transport = Recorder(self.transport, record, provider, model)
        self.label = "emulated, not an LLM" if self.transport.name == "emulator" else "live"
        self.steps: list[Step] = []
        self.turns = 0
        self.cache = CacheAnalyzer(provider, model)

    def run(self, text: str) -> TurnResult:
        """One user turn: request, execute tool calls, repeat until the model answers."""
        saved = (
            list(self.session.messages),
            self.session.active_tools,
            copy.deepcopy(self.session.prompt),
        )
        cache_state = copy.deepcopy(self.cache)
        steps: list[Step] = []
        try:
            result = self._turn(text, steps)
        except BaseException as exc:
            self.session.messages[:] = saved[0]
            self.session.set_active_tools(saved[1])
            self.session.prompt = saved[2]
            self.cache = cache_state
            if not isinstance(exc, Exception):
                raise
            where = f"step {len(steps) + 1}"
            raise TurnError(f"turn failed at {where}: {exc}; the session is unchanged") from exc
        self.steps.extend(steps)
        self.turns += 1
        return result

    def _turn(self, text: str, steps: list[Step]) -> TurnResult:
        self.session.user(text)
        for _ in range(self.max_steps):
            request = build_request(self.session, self.provider, self.model, **self.options)
            response = self.transport.send(request)
            reply = parse_response(response, self.provider, self.model)
            context = model_context(request)
            entry = self.cache.add(request, response)
            step = Step(self.turns, request, response, reply, context, entry)
            steps.append(step)
            self.session.append(reply.message)
            if reply.loaded_tool_names:  # loaded by the provider's server-side search
                self.session.activate(
                    n for n in reply.loaded_tool_names if n in self.session.registry
                )
            calls = reply.message.tool_calls
            if not calls:
                return TurnResult(reply.message.text, steps)
            step.results = [self.session.execute(call) for call in calls]
        return TurnResult(None, steps, stopped=f"step limit ({self.max_steps}) reached")
