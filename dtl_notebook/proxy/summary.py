"""One terminal line per request: conversation, provider, model, status, the cache figures the
response reported, those predicted from the conversation's earlier requests, the break cause,
and the provider's own diagnosis where the response carries one (`--diagnostics`).

The prediction runs on its own thread (it tokenizes whole contexts), fed by a bounded queue,
so neither forwarding nor storing waits for it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from dtl_notebook.cache.analyze import CacheAnalyzer, Usage, reported_usage
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.context.server_loop import compare_input
from dtl_notebook.proxy.config import GENERATION_PATHS
from dtl_notebook.proxy.store_queue import Event, Finished
from dtl_notebook.proxy.worker import Worker

ANALYZERS_KEPT = 64


def _figures(usage: Usage | None) -> str:
    if usage is None:
        return "-"
    return usage.figures()


class Summary:
    """A recorder listener that writes one line per exchange with `emit`."""

    def __init__(self, emit: Callable[[str], None] = print) -> None:
        self.emit = emit
        self._analyzers: OrderedDict[str, CacheAnalyzer] = OrderedDict()
        # one cache scope for all the proxy's traffic: one organization per proxy (a key is
        # never kept, so two organizations' traffic cannot be told apart)
        self._store = PrefixStore()
        self._worker = Worker(self._line, "dtl-proxy-summary", size=256)

    def __call__(self, event: Event) -> None:
        if isinstance(event, Finished):  # one line per exchange, once it has ended
            self._worker.put(event)

    def close(self) -> None:
        self._worker.close()

    def _line(self, finished: Finished) -> None:
        self.emit(self.line(finished))

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

    def _predict(self, finished: Finished) -> tuple[str, list[str], str | None]:
        """The prediction against the scope's earlier answered requests (the conversation's
        for its breaks): figures; notes on what the reported input covers where the provider
        ran a tool loop inside the request ('loop of 3 calls: first call predicted 1,212'),
        the break (or a new session's lost shared prefix) and a message thread's messages sent
        of those the model sees (`thread continue 1/7`); the provider's own diagnosis
        (agreeing or not) where it gave one."""
        name = finished.conversation or "-"
        provider = str(finished.row.values["provider"])
        analyzer = self._analyzers.get(name)
        if analyzer is None:
            analyzer = self._analyzers[name] = CacheAnalyzer(provider, store=self._store)
            while len(self._analyzers) > ANALYZERS_KEPT:
                self._analyzers.popitem(last=False)
        self._analyzers.move_to_end(name)
        started = float(finished.row.values["started"])
        try:
            entry = analyzer.add(finished.request or {}, finished.response, at=started)
        except Exception as exc:  # a shape the analyzer does not model
            return f"unavailable ({type(exc).__name__})", [], None
        analyzer.entries.clear()  # the summary needs each entry once: keep memory flat
        usage = Usage(entry.cached_tokens, entry.written_tokens, entry.uncached_tokens)
        cause = f"break: {entry.cache_break.cause}" if entry.cache_break else None
        lost = entry.shared_lost
        if lost is not None:  # a new session, never a break: what it lost of the scope's
            cause = f"shared_prefix_lost: {lost.tokens} tokens at {lost.where}"
        diagnosis = entry.diagnosis
        said = f"{diagnosis} ({entry.diagnosis_agreement})" if diagnosis else None
        compared = compare_input(entry.total_tokens, finished.response, provider)
        notes = [f"input: {compared.label}"] if compared.calls.calls > 1 else []
        notes += [cause] if cause else []
        facts = entry.thread
        if facts is not None:
            event = f" {facts.event}" if facts.event else ""
            notes.append(f"thread {facts.kind} {facts.sent}/{facts.whole}{event}")
        return _figures(usage), notes, said
