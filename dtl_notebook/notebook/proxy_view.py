"""`ProxyView`: the three-pane view over a proxy's traffic, filling in as requests flow.

A proxy listener: each request is predicted the moment it arrives (its conversation's cache
so far against its context), and completed with what the provider reported, its own
diagnosis and the tool calls once the response has ended. Events are handled on the view's
own thread, in batches (at most one trait update per batch, about `COALESCE_S` apart), so
neither forwarding nor storing waits for the analysis; comm messages may be sent from any
thread (ipykernel's iopub socket is thread-safe). A picker chooses the conversation shown;
by default the view follows the newest traffic.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import traitlets

from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.document import timeline_item
from dtl_notebook.notebook.health_view import records_health, records_miss
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.view_assets import proxy_esm
from dtl_notebook.notebook.widget import AgentView
from dtl_notebook.proxy import Arrived, Event, Finished, Proxy
from dtl_notebook.proxy.config import GENERATION_PATHS
from dtl_notebook.wire import parse_response
from dtl_notebook.wire.lenient import captured_findings

COALESCE_S = 0.05
QUEUE_SIZE = 4096
CONVERSATIONS_KEPT = 50  # the least recently active beyond these are forgotten (not the shown)


@dataclass
class _Conversation:
    name: str
    provider: str
    model: str
    analyzer: CacheAnalyzer
    records: list[RequestRecord] = field(default_factory=list)
    awaiting: dict[int, int] = field(default_factory=dict)  # exchange number -> record index

    @property
    def label(self) -> str:
        count = len(self.records)
        breaks = sum(r.cache.cache_break is not None for r in self.records)
        return (
            f"{self.name} · {self.provider} · {self.model} · {count} request"
            f"{'s' if count != 1 else ''}" + (f" · {breaks} break(s)" if breaks else "")
        )


class ProxyView(AgentView):
    """`ProxyView(proxy)`; pass it as one of the proxy's listeners (`%dtl proxy start` does)."""

    _esm = proxy_esm()
    panes_settle = False  # a request's figures arrive with its response: panes built afresh

    conversations = traitlets.List(traitlets.Dict()).tag(sync=True)
    conversation = traitlets.Unicode("").tag(sync=True)  # "" follows the newest traffic

    def __init__(self, proxy: Proxy | None = None, title: str = "dtl_notebook proxy") -> None:
        self.proxy = proxy
        self._lock = threading.RLock()
        self._finished_changed = threading.Condition(self._lock)
        self._known: OrderedDict[str, _Conversation] = OrderedDict()  # least recent first
        self._store = PrefixStore()  # the proxy's cache scope, shared by its conversations
        self._where: dict[int, _Conversation] = {}
        self._shown: str | None = None
        self.finished = 0  # exchanges handled to the end
        self.dropped = 0
        self._problem: str | None = None
        self._queue: queue.Queue[Event | None] = queue.Queue(QUEUE_SIZE)
        super().__init__(records=[], title=title)
        self.observe(self._on_conversation, "conversation")
        self._thread = threading.Thread(target=self._run, daemon=True, name="dtl-proxy-view")
        self._thread.start()

    # -- the listener (the store queue's thread): never blocks ------------------------------------
    def __call__(self, event: Event) -> None:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1

    def close(self, timeout: float = 10.0) -> None:
        """Handle what is queued, then stop following."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)

    def wait(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until `count` exchanges in all have been shown with their responses."""
        with self._finished_changed:
            return self._finished_changed.wait_for(lambda: self.finished >= count, timeout)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            batch = [item]
            stop = False
            while not stop:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                stop = more is None
                if more is not None:
                    batch.append(more)
            with self._lock:
                changed: dict[str, int] = {}
                for event in batch:
                    try:
                        self._apply(event, changed)
                    except Exception as exc:  # one odd exchange must not stop the view
                        self._problem = redact(f"{type(exc).__name__}: {exc}")[:300]
                    if isinstance(event, Finished):
                        self.finished += 1
                self._publish(changed)
                self._finished_changed.notify_all()
            if stop:
                return
            time.sleep(COALESCE_S)

    # -- the analysis ---------------------------------------------------------------------
    def _apply(self, event: Event, changed: dict[str, int]) -> None:
        if isinstance(event, Arrived):
            if event.path in GENERATION_PATHS and event.request and event.conversation:
                self._predict(
                    event.number, event.conversation, event.provider, event.request, event.edited
                )
                self._mark(self._where[event.number], changed)
            return
        values = event.row.values
        conversation = self._where.pop(event.number, None)
        if conversation is None:  # its arrival was not seen: the view started later
            if values["path"] not in GENERATION_PATHS or not event.request:
                return
            if event.conversation is None:
                return
            provider = str(values["provider"])
            self._predict(event.number, event.conversation, provider, event.request)
            conversation = self._where.pop(event.number)
        index = conversation.awaiting.pop(event.number)
        record = conversation.records[index]
        status, failure = values["status"], values["failure"]
        if event.response is not None and status is not None and status < 400 and not failure:
            conversation.analyzer.answer(record.cache, event.response, event.request or {})
            record.label = "proxied"
            record.miss = records_miss(conversation.records, index)
            try:
                message = parse_response(event.response, record.provider).message
                record.calls = [c.name for c in message.tool_calls]
                record.reply_text = message.text
            except Exception:  # the figures are shown all the same
                pass
        elif status is not None and status < 400 and not failure:
            record.label = "proxied, response not readable"
        else:
            reason = str(failure or f"HTTP {status}").splitlines()[0][:200]
            record.label = "proxied, refused"
            record.notes.insert(0, redact(f"refused: {reason} (no cache written for it)"))
        self._mark(conversation, changed, index)

    def _predict(
        self,
        number: int,
        name: str,
        provider: str,
        request: dict[str, Any],
        edited: str | None = None,
    ) -> None:
        model = str(request.get("model", ""))
        conversation = self._known.get(name)
        if conversation is None:
            analyzer = CacheAnalyzer(provider, model or None, store=self._store)
            conversation = self._known[name] = _Conversation(name, provider, model, analyzer)
            self._forget_old()
        self._known.move_to_end(name)
        entry = conversation.analyzer.add(request, at=time.time())
        index = len(conversation.records)
        notes = [*captured_findings(request, provider), *entry.context.notes]
        if edited:
            notes.insert(0, edited)
        conversation.records.append(
            RequestRecord(
                index=index,
                turn=index,
                provider=provider,
                model=model,
                mode="proxied",
                payload=redact(request),
                load_points=[],
                notes=[redact(n) for n in notes],
                cache=entry,
                label="proxied, awaiting the response",
            )
        )
        conversation.model = model or conversation.model
        conversation.awaiting[number] = index
        self._where[number] = conversation

    def _forget_old(self) -> None:
        for name in list(self._known)[: max(0, len(self._known) - CONVERSATIONS_KEPT)]:
            if name != self._shown:
                gone = self._known.pop(name)
                for number in gone.awaiting:
                    self._where.pop(number, None)

    @staticmethod
    def _mark(conversation: _Conversation, changed: dict[str, int], index: int = -1) -> None:
        at = index if index >= 0 else len(conversation.records) - 1
        changed[conversation.name] = min(changed.get(conversation.name, at), at)

    # -- what the front end gets ------------------------------------------------------------
    def _pick(self) -> str | None:
        chosen = self.conversation
        if chosen and chosen in self._known:
            return chosen
        return next(reversed(self._known), None)

    def _publish(self, changed: dict[str, int]) -> None:
        if changed:
            self.conversations = [
                {"name": c.name, "label": c.label} for c in reversed(self._known.values())
            ]
        shown = self._pick()
        if shown != self._shown:
            self._show(shown)
            return
        start = changed.get(shown) if shown is not None else None
        with self.hold_sync():
            self.header = self.header_data()
            if start is not None:
                self.count = len(self.records)
                items = [timeline_item(r) for r in self.records[start:]]
                self.tail = {"start": start, "items": items}
                if self.selected < 0 or self.selected >= start:
                    self.panes = self._panes_for(self.selected)

    def _show(self, name: str | None) -> None:
        self._shown = name
        self.records = self._known[name].records if name is not None else []
        self._committed = len(self.records)
        self.selected = -1
        self._sync_all()

    def header_data(self) -> dict[str, Any]:
        known = getattr(self, "_known", {})
        shown = known.get(getattr(self, "_shown", None))
        proxy = getattr(self, "proxy", None)
        status = f"running on {proxy.url}" if proxy is not None and proxy.running else "stopped"
        if shown is not None and shown.awaiting:
            status += f" · {len(shown.awaiting)} awaiting a response"
        tools = shown.records[-1].payload.get("tools") if shown and shown.records else None
        return {
            "title": f"{self.title} · {shown.name}" if shown else self.title,
            "provider": shown.provider if shown else "-",
            "model": shown.model if shown else "-",
            "label": "proxy",
            "tools": str(len(tools)) if isinstance(tools, list) else "-",
            "status": status,
            "error": getattr(self, "_problem", None),
            "live": False,
            **records_health(shown.records if shown else []),
        }

    # -- what the front end asks (the kernel's thread) ------------------------------------------
    def _on_conversation(self, change: dict[str, Any]) -> None:
        with self._lock:
            self._show(self._pick())

    def _on_selected(self, change: dict[str, Any]) -> None:
        with self._lock:
            super()._on_selected(change)

    def _on_message(self, widget: Any, content: Any, buffers: Any) -> None:
        with self._lock:
            super()._on_message(widget, content, buffers)

    def refresh(self) -> None:
        with self._lock:
            self._show(self._pick())

    def __repr__(self) -> str:
        with self._lock:
            header = self.header_data()
            breaks = sum(r.cache.cache_break is not None for r in self.records)
            return (
                f"ProxyView({header['status']}, conversations={len(self._known)}, "
                f"shown={self._shown}, requests={len(self.records)}, breaks={breaks})"
            )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        with self._lock:
            return super()._repr_mimebundle_(**kwargs)
