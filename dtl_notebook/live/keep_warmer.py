"""Keeping an agent's prefix warm while its user is idle: `tick(now)` judges a refresh by the
cache rules (`cache.keep_warm`) and sends it through the agent; a background timer calls it
for real use. A refresh never runs during a turn: it takes the agent's lock only if it is
free, so a turn in progress skips it, and a turn waits for at most one small request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.keep_warm import KeepWarm, RefreshDecision, refresh_decision
from dtl_notebook.cache.prices import Price
from dtl_notebook.live.transport import redact
from dtl_notebook.wire import WireRequest
from dtl_notebook.wire.providers import spec

__all__ = ["KeepWarmer", "keep_warm_policy", "refresh_request"]


def keep_warm_policy(value: Any) -> KeepWarm | None:
    """`keep_warm=` as given to an Agent: a KeepWarm, True (the defaults) or None/False."""
    if value is None or value is False:
        return None
    if value is True:
        return KeepWarm()
    if isinstance(value, KeepWarm):
        return value
    raise TypeError(f"keep_warm must be a KeepWarm, True or None, got {value!r:.60}")


def refresh_request(request: WireRequest) -> WireRequest:
    """`request` again, asking for the smallest answer: it reads the same prefix."""
    payload = request.plain()
    row = spec(request.provider)  # the smallest answer it takes: only the prompt is read
    field, smallest = row.smallest_answer
    older = row.older_answer_field
    if older is not None and older in payload:  # the body's own name for the field
        field = older
    payload[field] = smallest
    return replace(request, payload=payload, load_points=[], notes=["keep-warm refresh"])


class KeepWarmer:
    """Refreshes one agent's prefix when it pays, within the policy's caps."""

    def __init__(
        self,
        policy: KeepWarm,
        lock: threading.RLock,
        clock: Callable[[], float],
        last_entry: Callable[[], CacheEntry | None],
        price: Callable[[], Price | None],
        send: Callable[[RefreshDecision, float], None],
    ) -> None:
        self.policy, self._lock, self.clock = policy, lock, clock
        self._last_entry, self._price, self._send = last_entry, price, send
        self.idle_since: float | None = None  # the end of the last turn
        self.spent = 0.0  # dollars on refreshes since then
        self.decisions: list[tuple[float, RefreshDecision]] = []  # the refreshes sent
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def turn_ended(self, now: float) -> None:
        """A turn ended at `now`: a new idle stretch, with its own caps."""
        self.idle_since, self.spent = now, 0.0

    def tick(self, now: float | None = None) -> RefreshDecision:
        """Refresh at `now` (the agent's clock by default) where it pays; the decision."""
        if not self._lock.acquire(blocking=False):
            return RefreshDecision(False, "a turn is in progress")
        try:
            at = self.clock() if now is None else now
            entry = self._last_entry()
            if entry is None or self.idle_since is None:
                return RefreshDecision(False, "no turn has ended yet")
            decision = refresh_decision(
                self.policy,
                entry.warmth,
                entry.total_tokens,
                self._price(),
                at,
                self.idle_since,
                self.spent,
            )
            if decision.refresh:
                try:
                    self._send(decision, at)
                except DtlError as exc:  # the provider refused: no refresh, nothing changed
                    return replace(decision, refresh=False, reason=redact(f"refresh failed: {exc}"))
                self.spent += decision.cost or 0.0
                self.decisions.append((at, decision))
            return decision
        finally:
            self._lock.release()

    def start(self) -> None:
        """Tick every `interval_seconds` on a background thread, until `stop()`."""
        if self._timer is not None and self._timer.is_alive():
            return
        self._stop.clear()
        self._timer = threading.Thread(target=self._run, name="keep-warm", daemon=True)
        self._timer.start()

    def stop(self) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
            self._timer = None

    def _run(self) -> None:
        while not self._stop.wait(self.policy.interval_seconds):
            self.tick()
