"""An agent's watch over its cache, on the live path: each request's send time (the agent's
`clock`), what is warm and until when (`warmth`), a collapse against what the previous request
left warm (`on_cache_miss`, a "cache_miss" event, `Step.cache_miss`), keep-warm refreshes while
the user is idle (`keep_warm`), and the hit rate and money so far (`cache_health`). The rules
are the cache layer's; this drives them.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.collapse import CacheMiss, MissThresholds, detect_miss
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.health import CacheHealth, conversation_health
from dtl_notebook.cache.keep_warm import KeepWarm, RefreshDecision
from dtl_notebook.cache.prefix_rules import cache_rule
from dtl_notebook.cache.prices import Price, PriceTable, shipped_prices
from dtl_notebook.cache.warmth import GAPS_KEPT, WarmNow, with_warning
from dtl_notebook.context.model import model_context
from dtl_notebook.live.keep_warmer import KeepWarmer, keep_warm_policy, refresh_request
from dtl_notebook.live.span_attributes import SpanFacts
from dtl_notebook.live.steps import AgentEvent, Listener, Step, StepState
from dtl_notebook.live.telemetry import Telemetry
from dtl_notebook.live.transport import Transport
from dtl_notebook.wire import WireRequest, parse_response

__all__ = ["CacheWatch", "MissCallback"]

MissCallback = Callable[[CacheMiss], None]


class CacheWatch:
    """The cache-watching part of an `Agent`.

    `keep_warm`: a `KeepWarm` (or True for its defaults) refreshes the prefix while the user is
    idle where that pays, on a background timer unless `KeepWarm(background=False)`;
    `agent.keep_warm.tick(now)` judges one moment. `on_cache_miss(miss)` is called for each
    collapse; `miss_thresholds` sets how big a drop is one (5 % and 2,000 tokens by default).
    """

    provider: str
    model: str
    clock: Callable[[], float]
    lock: threading.RLock
    cache: CacheAnalyzer
    transport: Transport
    steps: list[Step]
    turns: int
    listeners: list[Listener]
    telemetry: Telemetry | None

    def _watch(
        self,
        keep_warm: KeepWarm | bool | None,
        on_cache_miss: MissCallback | None,
        miss_thresholds: MissThresholds | None,
    ) -> None:
        if on_cache_miss is not None and not callable(on_cache_miss):
            raise checks.type_error("on_cache_miss", "a callable or None", on_cache_miss)
        if miss_thresholds is not None and not isinstance(miss_thresholds, MissThresholds):
            raise checks.type_error("miss_thresholds", "a MissThresholds or None", miss_thresholds)
        self.on_cache_miss = on_cache_miss
        self.miss_thresholds = miss_thresholds or MissThresholds()
        self.turn_starts: list[float] = []  # the latest, for the next likely user turn
        self.turn_span: Any = None  # the running turn's telemetry span, if any
        self.keep_warm: KeepWarmer | None = None
        self.set_keep_warm(keep_warm)

    def set_keep_warm(self, keep_warm: KeepWarm | bool | None) -> None:
        """Keep the prefix warm from now on by `keep_warm` (a KeepWarm, True for its
        defaults), or stop (None/False); a timer already running is stopped first."""
        policy = keep_warm_policy(keep_warm)
        if self.keep_warm is not None:
            self.keep_warm.stop()
        self.keep_warm = None
        if policy is not None:
            self.keep_warm = KeepWarmer(
                policy, self.lock, self.clock, self._last_entry, self._price, self._refresh
            )
            if policy.background:
                self.keep_warm.start()

    def _emit(self, event: AgentEvent, on_step: Listener | None) -> None:
        for listener in [*self.listeners, *([on_step] if on_step else [])]:
            listener(event)

    def _send(self, request: WireRequest, state: StepState | None) -> Step:
        """Send `request` at the clock's time and analyze it: the step, not yet kept."""
        at, start_ns = self.clock(), time.time_ns()
        response = self.transport.send(request)
        end_ns = time.time_ns()
        reply = parse_response(response, self.provider, self.model, request.aliases)
        # a thread continuation's model context is the whole thread, rebuilt by the analyzer
        context = None if "thread" in request.payload else model_context(request)
        entry = self.cache.add(request, response, at, context=context)
        context = context or entry.context
        step = Step(self.turns, request, response, reply, context, entry, state=state)
        step.sent_ns = (start_ns, end_ns)
        return step

    def _judged(self, step: Step, text: str, on_step: Listener | None) -> None:
        """Name the collapse of `step`, if any (on the step, as an event, to the callback),
        then write its span where telemetry is configured."""
        entries = self.cache.entries
        previous = entries[-2] if len(entries) >= 2 else None
        rule = cache_rule(step.cache.provider, step.cache.model)
        miss = detect_miss(previous, step.cache, rule, self.miss_thresholds)
        if miss is not None:
            step.cache_miss = miss
            self._emit(AgentEvent("cache_miss", text, step=step), on_step)
            if self.on_cache_miss is not None:
                self.on_cache_miss(miss)
        if self.telemetry is not None and step.sent_ns is not None:
            facts = SpanFacts(
                step.cache,
                step.response,
                step.request.load_points,
                step.request.mode,
                miss=miss,
                keep_warm=step.keep_warm,
                request=step.request.payload,
            )
            self.telemetry.record(facts, *step.sent_ns, parent=self.turn_span)

    def _turn_started(self) -> None:
        self.turn_starts = [*self.turn_starts[-GAPS_KEPT:], self.clock()]

    def _turn_ended(self) -> None:
        if self.keep_warm is not None:
            self.keep_warm.turn_ended(self.clock())

    def _last_entry(self) -> CacheEntry | None:
        return self.cache.entries[-1] if self.cache.entries else None

    def _price(self) -> Price | None:
        return shipped_prices().find(self.model)

    def _refresh(self, decision: RefreshDecision, now: float) -> None:
        """Send the keep-warm refresh `decision` asked for at `now`: the last request again,
        answered as briefly as the API allows, kept as a step (its turn: the next one; its
        state: the repeated request's)."""
        last = self.steps[-1]
        step = self._send(refresh_request(last.request), last.state)
        step.keep_warm = decision
        self.steps.append(step)
        self._emit(AgentEvent("keep_warm", step=step), None)
        self._judged(step, "", None)

    def warmth(self, now: float | None = None) -> WarmNow:
        """What is warm in the provider's cache at `now` (the clock's time by default), how
        many tokens, until when, and a warning where it expires before the next likely user
        turn (the median gap between the latest turns' starts)."""
        at = self.clock() if now is None else now
        entry = self._last_entry()
        if entry is None or entry.warmth is None:
            return WarmNow(0, None, 0.0, False, "nothing sent yet", None)
        gaps = [b - a for a, b in itertools.pairwise(self.turn_starts)]
        return with_warning(entry.warmth, entry.model, gaps).at_time(at)

    def cache_health(self, prices: PriceTable | None = None) -> CacheHealth:
        """The conversation's hit rate, and its input cost against sending it all uncached
        (prices: the shipped table unless given), keep-warm refreshes included and counted."""
        refreshes = {k for k, step in enumerate(self.steps) if step.keep_warm is not None}
        return conversation_health([s.cache for s in self.steps], prices, refreshes)
