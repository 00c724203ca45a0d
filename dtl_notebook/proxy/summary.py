"""One terminal line per request: conversation, provider, model, status, the cache figures the
response reported, those predicted from the conversation's earlier requests, what it left warm
and until when, the conversation's hit rate and money against all-uncached, the break cause,
a new session's lost shared prefix, a message thread's share sent, and the provider's own
diagnosis where the response carries one (`--diagnostics`). A collapse
(`cache.collapse`) adds an alert line under it, starting `  ! `.

The prediction runs on its own thread (it tokenizes whole contexts), fed by a bounded queue,
so neither forwarding nor storing waits for it; so does each request's telemetry span, where
telemetry is configured (`--otlp-endpoint`), which the SDK then exports on a thread of its own.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from dtl_notebook.cache.analyze import CacheAnalyzer, Usage, reported_usage
from dtl_notebook.cache.collapse import MissThresholds, detect_miss
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.glance import health_words, miss_words, warmth_words
from dtl_notebook.cache.health import RunningHealth
from dtl_notebook.cache.prefix_rules import cache_rule
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.context.server_loop import compare_input
from dtl_notebook.live.span_attributes import SpanFacts
from dtl_notebook.live.telemetry import Telemetry
from dtl_notebook.proxy.config import GENERATION_PATHS
from dtl_notebook.proxy.store_queue import Event, Finished
from dtl_notebook.proxy.worker import Worker

ANALYZERS_KEPT = 64


@dataclass
class Watched:
    """One conversation as the summary follows it: its analyzer, its latest entry (what the
    next request is judged against) and its running health."""

    analyzer: CacheAnalyzer
    latest: CacheEntry | None = None
    health: RunningHealth = field(default_factory=RunningHealth)


def _figures(usage: Usage | None) -> str:
    if usage is None:
        return "-"
    return usage.figures()


class Summary:
    """A store-queue listener that writes one line per exchange with `emit`."""

    def __init__(
        self,
        emit: Callable[[str], None] = print,
        telemetry: Telemetry | None = None,
        thresholds: MissThresholds | None = None,
    ) -> None:
        self.emit, self.telemetry = emit, telemetry
        self.thresholds = thresholds or MissThresholds()
        self.watched: OrderedDict[str, Watched] = OrderedDict()
        # one cache scope for all the proxy's traffic: one organization per proxy (a key is
        # never kept, so two organizations' traffic cannot be told apart)
        self._store = PrefixStore()
        self._alerts: list[str] = []
        self._worker = Worker(self._line, "dtl-proxy-summary", size=256)
        # spans on a worker of their own: each waits until no request is being forwarded
        self._spans = Worker(self._span, "dtl-proxy-spans") if telemetry else None

    def __call__(self, event: Event) -> None:
        if isinstance(event, Finished):  # one line per exchange, once it has ended
            self._worker.put(event)

    def close(self) -> None:
        self._worker.close()
        if self._spans is not None:
            self._spans.close()

    def _span(self, item: tuple[SpanFacts, int, int]) -> None:
        if self.telemetry is not None:
            self.telemetry.record(*item)

    def _line(self, finished: Finished) -> None:
        self.emit(self.line(finished))
        for alert in self._alerts:
            self.emit(f"  ! {alert}")
        self._alerts.clear()

    def line(self, finished: Finished) -> str:
        """`#3 c1 anthropic claude-sonnet-4-5 200 reported 1200/300/20 predicted 1200/300/20`,
        figures as cached/written/uncached tokens, then the predicted break cause and the
        provider's diagnosis (`provider: system_changed (1200 tokens) (agree)`)."""
        values = finished.row.values
        request = finished.request or {}
        head = f"#{values['number']} {finished.conversation or '-'} {values['provider']}"
        model = request.get("model") if isinstance(request.get("model"), str) else "?"
        status = values["status"] if values["status"] is not None else "---"
        parts = [head, str(model), str(status)]
        if values["path"] not in GENERATION_PATHS:
            return " ".join([*parts, values["path"]])
        if values["failure"]:
            return " ".join([*parts, str(values["failure"]).splitlines()[0][:160]])
        if finished.response is None:
            return " ".join([*parts, "no readable response"])
        reported = reported_usage(finished.response, str(values["provider"]))
        predicted, notes, diagnosis = self._predict(finished)
        parts += [f"reported {_figures(reported)}", f"predicted {predicted}", *notes]
        return " ".join(parts + ([f"provider: {diagnosis}"] if diagnosis else []))

    def _watched(self, name: str, provider: str) -> Watched:
        watched = self.watched.get(name)
        if watched is None:
            watched = self.watched[name] = Watched(CacheAnalyzer(provider, store=self._store))
            while len(self.watched) > ANALYZERS_KEPT:
                self.watched.popitem(last=False)
        self.watched.move_to_end(name)
        return watched

    def _predict(self, finished: Finished) -> tuple[str, list[str], str | None]:
        """The prediction against the scope's earlier answered requests (the conversation's
        for its breaks): figures; notes (what the reported input covers where the provider ran
        a tool loop inside the request, the warmth and health words, the break or a new
        session's lost shared prefix, a message thread's messages sent of those the model
        sees); the provider's own diagnosis (agreeing or not) where it gave one. A collapse is
        queued as an alert line."""
        name = finished.conversation or "-"
        values = finished.row.values
        watched = self._watched(name, str(values["provider"]))
        started = float(values["started"])
        try:
            entry = watched.analyzer.add(finished.request or {}, finished.response, at=started)
        except Exception as exc:  # a shape the analyzer does not model
            return f"unavailable ({type(exc).__name__})", [], None
        watched.analyzer.entries.clear()  # the summary needs each entry once: keep memory flat
        rule = cache_rule(entry.provider, entry.model)
        miss = detect_miss(watched.latest, entry, rule, self.thresholds)
        watched.latest = entry
        watched.health.add(entry)
        if miss is not None:
            self._alerts.append(f"#{values['number']} {name} {miss_words(miss)}")
        if self._spans is not None:
            ended = values.get("ended")
            end = float(ended) if isinstance(ended, int | float) else time.time()
            facts = SpanFacts(
                entry,
                finished.response,
                conversation=name,
                miss=miss,
                status=values["status"],
                request=finished.request,
            )
            self._spans.put((facts, int(started * 1e9), int(end * 1e9)))
        usage = Usage(entry.cached_tokens, entry.written_tokens, entry.uncached_tokens)
        diagnosis = entry.diagnosis
        said = f"{diagnosis} ({entry.diagnosis_agreement})" if diagnosis else None
        return _figures(usage), _notes(entry, finished, watched), said


def _notes(entry: CacheEntry, finished: Finished, watched: Watched) -> list[str]:
    """The words after the figures: a provider-run loop's comparison, warmth and health, the
    break (or a new session's lost shared prefix) and a message thread's or a Responses
    continuation's share sent."""
    provider = str(finished.row.values["provider"])
    compared = compare_input(entry.total_tokens, finished.response, provider)
    notes = [f"input: {compared.label}"] if compared.calls.calls > 1 else []
    glance = [health_words(watched.health.result())]
    if entry.warmth is not None:
        glance.insert(0, warmth_words(entry.warmth.at_time(time.time())))
    notes += [f"| {words}" for words in glance]
    if entry.cache_break is not None:
        notes.append(f"break: {entry.cache_break.cause}")
    lost = entry.shared_lost
    if lost is not None:  # a new session, never a break: what it lost of the scope's
        notes.append(f"shared_prefix_lost: {lost.tokens} tokens at {lost.where}")
    facts = entry.thread
    if facts is not None:
        event = f" {facts.event}" if facts.event else ""
        notes.append(f"thread {facts.kind} {facts.sent}/{facts.whole}{event}")
    continued = entry.continued
    if continued is not None:  # a Responses continuation: items sent of those the model sees
        unseen = " (unseen)" if continued.note else ""
        notes.append(f"continues {continued.sent}/{continued.whole}{unseen}")
    return notes
