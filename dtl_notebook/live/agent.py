"""The agent loop: one user turn, tools executed through the session, every step kept."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.agent.bridge import enable_bridge
from dtl_notebook.agent.errors import DtlError, InvalidArgumentError
from dtl_notebook.agent.secrets import masked_cause
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.collapse import MissThresholds
from dtl_notebook.cache.keep_warm import KeepWarm
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.live.cache_watch import CacheWatch, MissCallback
from dtl_notebook.live.emulator.policies import Policy
from dtl_notebook.live.recording import Recorder
from dtl_notebook.live.steps import (
    AgentEvent,
    Listener,
    Step,
    StepState,
    TurnResult,
    activate_registered,
)
from dtl_notebook.live.telemetry import configured_telemetry
from dtl_notebook.live.threads import ThreadClient
from dtl_notebook.live.transport import (
    TRANSPORTS,
    Transport,
    TransportName,
    checked_transport,
    emulated_cache,
    emulator_transport,
    live_transport,
    redact,
)
from dtl_notebook.live.warmup import warm_up
from dtl_notebook.wire import build_request
from dtl_notebook.wire.arguments import check_provider_options


class TurnError(DtlError, RuntimeError):
    """A turn failed; the session is as it was before the turn."""


__all__ = ["Agent", "AgentEvent", "Step", "StepState", "TurnError", "TurnResult"]


class Agent(CacheWatch):
    """Runs turns of a session against a provider, through the emulator by default.

    With `record=PATH` every exchange is appended to that JSONL file, through whatever
    transport the agent uses: the recording follows `switch` and `use_transport`.
    `clock`: the send times (the emulator's cache expires by it too); `keep_warm`,
    `on_cache_miss`, `miss_thresholds`: see `CacheWatch`; `threads=True`: Anthropic message
    threads where the model takes them (`live.threads`); `prefix_store`: the cache scope shared
    with subagents and re-runs (`PrefixStore`); `otlp_endpoint`, `tracer_provider` or the
    `OTEL_EXPORTER_OTLP_*` variables: a span per request (`live.telemetry`).
    """

    def __init__(
        self,
        session: Session,
        provider: str,
        model: str,
        transport: TransportName | Transport = "emulator",
        *,
        policy: Policy | None = None,
        max_steps: int = 10,
        api_key: str | None = None,
        base_url: str | None = None,
        record: str | Path | None = None,
        clock: Callable[[], float] = time.time,
        keep_warm: KeepWarm | bool | None = None,
        on_cache_miss: MissCallback | None = None,
        miss_thresholds: MissThresholds | None = None,
        threads: bool = False,
        prefix_store: PrefixStore | None = None,
        otlp_endpoint: str | None = None,
        tracer_provider: Any = None,
        capture_content: bool | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(session, Session):
            raise checks.type_error("session", "a Session", session)
        checks.boolean(threads, "threads")
        if threads and keep_warm not in (None, False):
            raise InvalidArgumentError(
                "threads=True does not combine with keep_warm: a refresh would continue the "
                "thread (a response is continued once); pass one of them"
            )
        self.threads = ThreadClient() if threads else None
        check_provider_options(provider, model, options)  # fail early on bad input
        checks.positive_int(max_steps, "max_steps")
        if record is not None and not isinstance(record, str | Path):
            raise checks.type_error("record", "a file path (str or Path) or None", record)
        self.record = checks.file_path(record, "record") if record is not None else None
        if options.get("load_mode") == "bridge":
            enable_bridge(session)  # its tool_search and call_tool dispatcher
        self.session, self.provider, self.model = session, provider, model
        self.options, self.max_steps = options, max_steps
        if not callable(clock):
            raise checks.type_error("clock", "a callable returning seconds", clock)
        self.clock, self.lock = clock, threading.RLock()
        if prefix_store is not None and not isinstance(prefix_store, PrefixStore):
            raise checks.type_error("prefix_store", "a PrefixStore or None", prefix_store)
        self.prefix_store = prefix_store if prefix_store is not None else PrefixStore()
        if transport == "emulator":
            self._connect(self._emulator(provider, policy))
        elif transport == "live":
            self._connect(live_transport(provider, api_key, base_url))
        elif isinstance(transport, str):
            raise checks.unknown_value("transport", transport, (*TRANSPORTS, "a Transport"))
        else:
            self._connect(checked_transport(transport))
        self.policy, self.api_key, self.base_url = policy, api_key, base_url
        self.steps: list[Step] = []
        self.turns = 0
        self.cache = CacheAnalyzer(provider, model, store=self.prefix_store)
        self.listeners: list[Listener] = []
        self.telemetry = configured_telemetry(otlp_endpoint, tracer_provider, capture_content)
        self.setup_seconds = warm_up(session, provider, model, options, self.transport)
        self._watch(keep_warm, on_cache_miss, miss_thresholds)

    def __repr__(self) -> str:
        return (
            f"Agent(provider={self.provider}, model={self.model}, transport={self.transport.name}, "
            f"turns={self.turns}, requests={len(self.steps)})"
        )

    def switch(self, provider: str, model: str, **options: Any) -> None:
        """Serialize the same session for another provider from the next request on.

        `options` replace the provider options (they differ per provider). Steps so far are
        kept; the prompt cache is per provider and model, so the next request reads only what
        this agent's `prefix_store` holds for them.
        """
        if self.transport.name not in ("emulator", "live"):
            raise ValueError(
                f"cannot switch provider on a {self.transport.name!r} transport; "
                "only 'emulator' and 'live' agents switch"
            )
        check_provider_options(provider, model, options)
        if options.get("load_mode") == "bridge":
            enable_bridge(self.session)
        if self.transport.name == "emulator":
            transport: Transport = self._emulator(provider, self.policy)
        else:
            transport = live_transport(provider, self.api_key, self.base_url)
        self.provider, self.model = provider, model
        self._connect(transport)
        self.options = options
        self.cache = CacheAnalyzer(provider, model, store=self.prefix_store)
        if self.threads is not None:  # a thread is of one provider and model
            self.threads = ThreadClient()
        self.setup_seconds = warm_up(self.session, provider, model, options, self.transport)

    def _emulator(self, provider: str, policy: Policy | None) -> Transport:
        """An emulator whose cache is the emulated provider's for this agent's scope."""
        store = emulated_cache(self.prefix_store)
        return emulator_transport(provider, policy, clock=self.clock, store=store)

    def _diagnostics(self, steps: list[Step]) -> dict[str, Any]:
        """With `diagnostics=True`, the id of the previous response from the same provider and
        model (steps before a switch don't count), so the provider compares against it."""
        if not self.options.get("diagnostics") or "previous_response_id" in self.options:
            return {}
        for step in reversed([*self.steps, *steps]):
            if (step.request.provider, step.request.model) != (self.provider, self.model):
                break
            if isinstance(step.response.get("id"), str):
                return {"previous_response_id": step.response["id"]}
        return {"previous_response_id": None}

    def use_threads(self) -> None:
        """Send message threads from the next request on (as `threads=True`)."""
        if self.keep_warm is not None:
            raise InvalidArgumentError("threads do not combine with keep_warm; turn it off first")
        if self.threads is None:
            self.threads = ThreadClient()

    def use_transport(self, transport: Transport) -> None:
        """Send the next requests through another transport (emulator, live, replay); a
        recording goes on, into the same file (and into the given recorder's own, if any)."""
        speaks = getattr(checked_transport(transport), "provider", None)
        if isinstance(speaks, str) and speaks != self.provider:
            raise InvalidArgumentError(
                f"transport speaks {speaks!r} but this agent sends {self.provider!r} requests; "
                f"pass a {self.provider} transport, or agent.switch(...) to {speaks!r} first"
            )
        self._connect(transport)

    def _connect(self, transport: Transport) -> None:
        """Send through `transport`, recorded when this agent records."""
        if self.record is not None and not (
            isinstance(transport, Recorder) and transport.path.resolve() == self.record.resolve()
        ):
            transport = Recorder(transport, self.record, self.provider, self.model)
        self.transport: Transport = transport

    def run(self, text: str, on_step: Listener | None = None) -> TurnResult:
        """One user turn: request, execute tool calls, repeat until the model answers.

        `on_step` (and every callable in `listeners`) hears an `AgentEvent` when the turn
        starts, after each completed step, and when the turn ends or fails.
        """
        with self.lock:  # a keep-warm refresh never runs during a turn
            telemetry = self.telemetry
            if telemetry is not None:
                self.turn_span = telemetry.start_turn(self.provider, self.model, self.turns)
            failed: str | None = None
            try:
                return self._locked_run(text, on_step)
            except BaseException as exc:  # a failed turn's span says why (keys masked)
                failed = redact(str(exc)) or type(exc).__name__
                raise
            finally:
                if telemetry is not None and self.turn_span is not None:
                    telemetry.end_turn(self.turn_span, failed)
                self.turn_span = None
                self._turn_ended()

    def _locked_run(self, text: str, on_step: Listener | None) -> TurnResult:
        checks.text(text, "text")
        if on_step is not None and not callable(on_step):
            raise checks.type_error("on_step", "a callable or None", on_step)
        self._turn_started()
        saved = self.session.checkpoint()
        # the scope's store is shared, not undone: what was sent was written at the provider
        cache_state = copy.deepcopy(self.cache, {id(self.prefix_store): self.prefix_store})
        recorder = self.transport if isinstance(self.transport, Recorder) else None
        recorded = recorder.mark() if recorder else None
        steps: list[Step] = []
        self._emit(AgentEvent("turn_start", text), on_step)
        failure: tuple[TurnError, BaseException] | None = None
        try:
            result = self._turn(text, steps, on_step)
        except BaseException as exc:
            self.session.rollback(saved)
            self.cache = cache_state
            where = f"step {len(steps) + 1}"
            message = f"turn failed at {where}: {exc}; the session is unchanged"
            if recorder is not None:  # the recording holds no exchange the session lost
                try:
                    recorder.restore(recorded)
                except OSError as lost:
                    message += f" (but {recorder.path} keeps its exchanges: {lost})"
            message = redact(message)
            self._emit(AgentEvent("turn_failed", text, error=message), on_step)
            if not isinstance(exc, Exception):
                raise
            failure = TurnError(message), masked_cause(exc)  # a cause's text may hold a key
        if failure is not None:
            # raised out of the `except`: the raw exception is not kept as its `__context__`
            raise failure[0] from failure[1]
        self.steps.extend(steps)
        self.turns += 1
        self._emit(AgentEvent("turn_end", text), on_step)
        return result

    def _turn(self, text: str, steps: list[Step], on_step: Listener | None) -> TurnResult:
        self.session.user(text)
        for _ in range(self.max_steps):
            state = StepState(
                len(self.session.messages),
                tuple(self.session.active_tools),
                len(self.session.registry),
                self.session.held_sections(),
            )
            request = build_request(
                self.session, self.provider, self.model, **self._diagnostics(steps), **self.options
            )
            if self.threads is None:
                step = self._send(request, state)
            else:
                step = self.threads.send(request, partial(self._send, state=state), self.clock)
            reply = step.reply
            steps.append(step)
            self.session.append(reply.message)
            if reply.loaded_tool_names:  # loaded by the provider's server-side search
                self.session.activate_found(reply.loaded_tool_names)
            calls = reply.message.tool_calls
            activate_registered(self.session, request, calls)
            if calls:
                step.results = [self.session.execute(call) for call in calls]
            self._judged(step, text, on_step)  # a "step" event carries its collapse
            self._emit(AgentEvent("step", text, step=step), on_step)
            if not calls:
                return TurnResult(reply.message.text, steps)
        return TurnResult(None, steps, stopped=f"step limit ({self.max_steps}) reached")
