"""What the view shows per request, from an agent's steps or from a captured request log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dtl_notebook.agent.messages import Message
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.capture import Exchange, load_capture
from dtl_notebook.cache.collapse import CacheMiss
from dtl_notebook.cache.conversation_key import conversation_names
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.keep_warm import RefreshDecision
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.live.agent import Agent, Step, StepState
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.prices import shipped_prices
from dtl_notebook.wire.request import LoadPoint, WireRequest


@dataclass
class RequestRecord:
    """One request and everything the three panes need about it."""

    index: int
    turn: int
    provider: str
    model: str
    mode: str
    payload: dict[str, Any]  # secrets already masked
    load_points: list[LoadPoint]
    notes: list[str]
    cache: CacheEntry
    label: str  # where the request went, for display: `transport_caption`, "captured"...
    state: StepState | None = None
    messages: list[Message] = field(default_factory=list)  # the transcript the request saw
    calls: list[str] = field(default_factory=list)  # tool calls the reply made
    reply_text: str | None = None
    new_loads: int = 0  # tools at load points this request adds to the previous one's
    switched_from: str | None = None  # the previous request's provider, when it was another
    spent: float | None = None  # the session's input cost up to this request (listed prices)
    keep_warm: RefreshDecision | None = None  # a keep-warm refresh: why, its cost and saving
    miss: CacheMiss | None = None  # it read clearly less than the previous request left warm
    entered: dict[str, int] = field(default_factory=dict)  # tool -> its load point's message

    def follow(self, previous: RequestRecord | None) -> None:
        """What this request adds to the previous one: the session's cost so far, and the
        tools at load points the previous request did not have. After a provider switch the
        history is re-serialized, not loaded again: tools it held before are not new."""
        self.add_cost(previous)
        self.switched_from = None
        if previous is not None and previous.provider != self.provider:
            self.switched_from = previous.provider
        if previous is None:
            self.new_loads = sum(len(lp.tools) for lp in self.load_points)
        elif previous.provider == self.provider:
            seen = {(lp.path, t) for lp in previous.load_points for t in lp.tools}
            self.new_loads = sum(
                (lp.path, t) not in seen for lp in self.load_points for t in lp.tools
            )
        else:
            held = {t for lp in previous.load_points for t in lp.tools}
            self.new_loads = len({t for lp in self.load_points for t in lp.tools} - held)

    def add_cost(self, previous: RequestRecord | None) -> None:
        """The session's input cost up to this request: the previous one's plus this one's."""
        self.spent = previous.spent if previous is not None else None
        price = shipped_prices().find(self.model)
        if price is not None:
            self.spent = (self.spent or 0.0) + price.input_cost(self.cache)

    @property
    def context(self) -> Any:
        return self.cache.context


def from_request(
    request: WireRequest,
    entry: CacheEntry | None = None,
    *,
    label: str = "built, not sent",
    index: int = 0,
    turn: int = 0,
    **more: Any,
) -> RequestRecord:
    """A record of one request, secrets masked; without `entry` it is analyzed on its own."""
    return RequestRecord(
        index=index,
        turn=turn,
        provider=request.provider,
        model=request.model,
        mode=request.mode,
        payload=redact(request.payload),
        load_points=list(request.load_points),
        notes=[redact(n) for n in request.notes],
        cache=entry or CacheAnalyzer(request.provider, request.model).add(request),
        label=label,
        **more,
    )


_CAPTIONS = {"emulator": "emulated, not an LLM", "live": "live"}


def transport_caption(agent: Agent) -> str:
    """Where an agent's requests go, in words for the view; the agent's transport is the state
    (a user's own transport is shown by its name)."""
    name = agent.transport.name
    return _CAPTIONS.get(name, f"through {name}")


def entered_before(session: Session, count: int) -> dict[str, int]:
    """Where each tool entered (`Session.entered`) among the first `count` messages."""
    return {name: at for name, at in session.entered().items() if at < count}


def from_step(
    index: int, step: Step, agent: Agent, previous: RequestRecord | None = None
) -> RequestRecord:
    count = step.state.message_count if step.state else len(agent.session.messages)
    record = from_request(
        step.request,
        step.cache,
        label=transport_caption(agent),
        index=index,
        turn=step.turn,
        state=step.state,
        messages=agent.session.messages[:count],
        calls=[c.name for c in step.reply.message.tool_calls],
        reply_text=step.reply.message.text,
    )
    record.keep_warm, record.miss = step.keep_warm, step.cache_miss
    record.entered = entered_before(agent.session, count)
    record.follow(previous)
    return record


def step_records(agent: Agent, steps: Sequence[Step]) -> list[RequestRecord]:
    """Records for consecutive steps, each compared with the one before."""
    records: list[RequestRecord] = []
    for i, step in enumerate(steps):
        records.append(from_step(i, step, agent, records[-1] if records else None))
    return records


def from_capture(path: str | Path, provider: str | None = None) -> list[RequestRecord]:
    """Records for every request of a capture file (any format load_capture reads).

    Each entry's provider is the one load_capture detected (the audit's), unless `provider`
    overrides it; the answered requests of each conversation (`conversation_key`) are analyzed
    as their own sequence (a mixed log or interleaved sessions are never analyzed as one). A
    refused request (an error, or any status outside 2xx) stays in the listing, labelled
    refused, and outside the sequence: the provider wrote no cache for it.
    """
    records: list[RequestRecord] = []
    analyzers: dict[str, CacheAnalyzer] = {}
    store = PrefixStore()  # the cache is the scope's: a session reads what another wrote
    exchanges = load_capture(path)
    answered = [e for e in exchanges if e.error is None]
    conversations = conversation_names(
        (provider or e.provider, e.request, e.response) for e in answered
    )
    for index, exchange in enumerate(exchanges):
        name = provider or exchange.provider
        model = exchange.request.get("model")
        model = model if isinstance(model, str) and model.strip() else "(no model)"
        if exchange.error is None:
            conversation = next(conversations)
            analyzer = analyzers.get(conversation) or CacheAnalyzer(name, model, store=store)
            analyzers[conversation] = analyzer
            entry = analyzer.add(exchange.request, exchange.response)
        else:
            entry = _refused_entry(exchange, name, model)
        record = RequestRecord(
            index=index,
            turn=index,
            provider=name,
            model=model,
            mode="captured",
            payload=redact(exchange.request),
            load_points=[],
            notes=_capture_notes(exchange, entry),
            cache=entry,
            label="captured" if exchange.error is None else "captured, refused",
        )
        record.add_cost(records[-1] if records else None)
        records.append(record)
    return records


def _refused_entry(exchange: Exchange, provider: str, model: str) -> CacheEntry:
    """The request's context on its own, with nothing cached or written: it was refused."""
    entry = CacheAnalyzer(provider, model).add(exchange.request)
    thread = entry.thread
    lost = exchange.error is not None and exchange.error.code == "thread_not_found"
    if thread is not None and lost:  # the provider did not hold the thread
        thread = replace(thread, event="thread_not_found")
    return replace(
        entry,
        cached_tokens=0,
        written_tokens=0,
        uncached_tokens=entry.total_tokens,
        best_cached_tokens=0,
        cache_break=None,
        thread=thread,
    )


def _capture_notes(exchange: Exchange, entry: CacheEntry) -> list[str]:
    notes = [redact(n) for n in [*exchange.notes, *entry.context.notes]]
    if exchange.error is not None:
        notes.insert(0, f"refused, left out of the cache sequence: {exchange.error}")
    return notes


def preview_record(
    agent: Agent, provider: str, model: str, options: dict[str, Any] | None = None
) -> RequestRecord:
    """The agent's session as it stands, serialized for `provider` (with `options`, default
    the agent's) but not sent."""
    from dtl_notebook.wire import build_request

    session = agent.session
    chosen = agent.options if options is None else options
    request = build_request(session, provider, model, **chosen)
    state = StepState(
        len(session.messages),
        tuple(session.active_tools),
        len(session.registry),
        session.held_sections(),
    )
    record = from_request(
        request,
        label="preview, not sent",
        index=-1,
        turn=agent.turns,
        state=state,
        messages=list(session.messages),
    )
    record.entered = session.entered()
    return record
