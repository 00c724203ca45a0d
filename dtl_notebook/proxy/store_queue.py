"""From the forwarding path to the store, off the forwarding path.

`StoreQueue.arrive(record)` (a request has come in) and `StoreQueue.put(record)` (its exchange
has ended) never block: they go into a bounded queue that one thread drains in order. On
arrival the request is grouped into its conversation and the listeners get an `Arrived`; at
the end the exchange is masked, written (one transaction) and the listeners get a `Finished`.
A store that cannot be opened or written, or a full queue, is reported once (a log line, and
`StoreQueue.problem`); a store deleted or replaced under the running proxy each time, and a new
one started; forwarding carries on regardless.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtl_notebook.agent.secrets import Secrets
from dtl_notebook.cache.conversation_key import Conversations
from dtl_notebook.proxy.config import GENERATION_PATHS
from dtl_notebook.proxy.diagnostics import with_diagnostics
from dtl_notebook.proxy.headers import learn_credentials
from dtl_notebook.proxy.record import ExchangeRecord
from dtl_notebook.proxy.store import StoredRow, StoreWriter, request_text, stored_row
from dtl_notebook.proxy.worker import Worker
from dtl_notebook.wire.stream import response_body

log = logging.getLogger("dtl_notebook.proxy")


@dataclass
class Arrived:
    """A request as it reaches the proxy, before it is forwarded: its number, conversation
    and body as an object (keys masked) where it parses. `edited` names what the proxy added
    (with diagnostics on)."""

    number: int
    provider: str
    path: str
    conversation: str | None
    request: dict[str, Any] | None
    started: float
    edited: str | None = None


@dataclass
class Finished:
    """An exchange after the proxy is done with it: the stored row (masked) and its bodies
    as objects where they parse."""

    row: StoredRow
    request: dict[str, Any] | None
    response: dict[str, Any] | None

    @property
    def conversation(self) -> str | None:
        value = self.row.values["conversation"]
        return str(value) if value is not None else None

    @property
    def number(self) -> int:
        return int(self.row.values["number"])


Event = Arrived | Finished
# called on the store queue's thread with each request as it arrives, then as it finishes
Listener = Callable[[Event], None]
PENDING_KEPT = 4096  # arrivals whose exchange has not finished yet, at most
# a response's own id comes first: `{"id": ...}`, or message_start / response.created
_RESPONSE_ID = re.compile(rb'"id"\s*:\s*"((?:msg|resp|chatcmpl)[A-Za-z0-9_-]*)"')
_ID_WINDOW = 4096  # bytes of a response's head searched for its id
RequestText = tuple[str, str | None]  # a request body fit to keep, and why it was not decoded
# what an arrival worked out for its exchange: its text, body object and conversation
Pending = tuple[RequestText, dict[str, Any] | None, str | None]


class StoreQueue:
    """Groups, masks and stores exchanges on its own thread, in arrival order: each request
    is assigned its conversation when it arrives (listeners get an `Arrived`), and stored
    when it has finished (listeners get a `Finished`)."""

    def __init__(
        self,
        store: str | Path | None,
        listeners: list[Listener] | None = None,
        diagnostics: bool = False,
    ) -> None:
        self.listeners = list(listeners or [])
        self.conversations = Conversations()
        self.diagnostics = diagnostics
        self.problem: str | None = None
        self.stored = 0
        self.handled = 0
        self._lock = threading.Lock()  # conversations: this thread, and the forwarding path
        self._pending: OrderedDict[int, Pending] = OrderedDict()
        self.on_handled: Callable[[], None] | None = None  # after each exchange is handled
        self.secrets = Secrets()  # the credentials clients sent: masked wherever they reappear
        self._handled_changed = threading.Condition()
        self._writer: StoreWriter | None = None
        if store is not None:
            try:
                self._writer = StoreWriter(store)
            except Exception as exc:
                self._report(f"store {store} cannot be opened ({exc}); nothing is stored")
        self._worker = Worker(self._handle, "dtl-proxy-store")

    def arrive(self, record: ExchangeRecord) -> None:
        """A request has arrived (before forwarding); never blocks. With diagnostics on, the
        request is first given the providers' cache-diagnostics field (see `diagnose`)."""
        if self.diagnostics and record.path in GENERATION_PATHS:
            self._diagnose(record)
        self._worker.put(("arrived", record))

    def put(self, record: ExchangeRecord) -> None:
        """An exchange has ended, whatever happened; never blocks."""
        if self.diagnostics and record.conversation is not None:
            self._answered_early(record)
        self._worker.put(("finished", record))

    def _answered_early(self, record: ExchangeRecord) -> None:
        """With diagnostics on, the conversation learns its response id at once (the client
        may send the next request before this thread has stored the exchange): the first id
        in the body's head, where the response is not compressed."""
        if record.status != 200 or record.failure or record.header("content-encoding"):
            return
        found = _RESPONSE_ID.search(record.response_body[:_ID_WINDOW])
        if found is not None and record.conversation is not None:
            with self._lock:
                self.conversations.answered(record.conversation, found.group(1).decode())

    def flush(self) -> None:
        """Wait until every exchange handed over so far is stored."""
        self._worker.drain()

    def wait(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until `count` exchanges in all have been handled (an exchange is handed over
        once its response has ended, a moment after the client has read the last byte)."""
        with self._handled_changed:
            return self._handled_changed.wait_for(lambda: self.handled >= count, timeout)

    def _handle(self, item: tuple[str, ExchangeRecord]) -> None:
        kind, record = item
        if kind == "arrived":
            self._arrived(record)
        else:
            self._record(record)

    def _assign(self, record: ExchangeRecord, request: dict[str, Any] | None) -> None:
        if record.conversation is None and request is not None and record.path in GENERATION_PATHS:
            with self._lock:
                record.conversation = self.conversations.assign(record.provider, request)

    def _read_request(self, record: ExchangeRecord) -> tuple[RequestText, dict[str, Any] | None]:
        learn_credentials(self.secrets, record.request_headers, record.query)
        text = request_text(record, self.secrets)
        request = _json_object(text[0])
        self._assign(record, request)
        return text, request

    def _arrived(self, record: ExchangeRecord) -> None:
        text, request = self._read_request(record)
        self._pending[record.number] = (text, request, record.conversation)
        while len(self._pending) > PENDING_KEPT:
            self._pending.popitem(last=False)
        event = Arrived(
            record.number,
            record.provider,
            record.path,
            record.conversation,
            request,
            record.started,
            record.edited,
        )
        for listener in self.listeners:
            listener(event)

    def _diagnose(self, record: ExchangeRecord) -> None:
        """Add the cache-diagnostics field against the conversation's latest response, on the
        forwarding path (the body must be edited before it goes out)."""
        request = _json_object(record.request_body.decode("utf-8", "replace"))
        if request is None or record.header("content-encoding", False):
            return
        self._assign(record, request)
        with self._lock:
            previous = self.conversations.latest_response(record.conversation)
        edited = with_diagnostics(request, record.provider, previous)
        if edited is not None:
            body, record.edited = edited
            record.request_body = json.dumps(body, ensure_ascii=False).encode()

    def _record(self, record: ExchangeRecord) -> None:
        pending = self._pending.pop(record.number, None)
        if pending is None:
            text, request = self._read_request(record)
        else:  # the finished record may be a copy of the arrived one (another process)
            text, request, conversation = pending
            record.conversation = record.conversation or conversation
        row = stored_row(record, self.secrets, record.conversation, text)
        conversation = record.conversation
        response = None
        if record.status is not None and record.status < 400 and record.failure is None:
            try:
                parsed = response_body(row.response, record.provider)
            except Exception:  # an answer this package cannot read is still stored
                parsed = None
            response = parsed if isinstance(parsed, dict) else None
        if conversation is not None and response is not None and "id" in response:
            with self._lock:
                self.conversations.answered(conversation, str(response["id"]))
        self._store(row)
        try:
            for listener in self.listeners:
                listener(Finished(row, request, response))
        finally:
            with self._handled_changed:
                self.handled += 1
                self._handled_changed.notify_all()
            if self.on_handled is not None:
                self.on_handled()

    def _store(self, row: StoredRow) -> None:
        if self._writer is None:
            return
        path = self._writer.path
        try:
            if self._writer.gone():
                self._start_anew()
            self._writer.write(row)
            self.stored += 1
        except Exception as exc:
            self._report(f"store {path} cannot be written ({exc})")

    def _start_anew(self) -> None:
        """The store was deleted or replaced under the running proxy (SQLite would go on
        writing into the deleted file, and lose everything): say so, and start a new one."""
        assert self._writer is not None
        path, lost = self._writer.path, self.stored
        self._writer.close()
        self._writer, self.stored = None, 0
        self._report(
            f"store {path} was deleted or replaced while the proxy ran: the {lost} exchanges "
            "stored in it went with it; storing again in a new file",
            again=True,
        )
        self._writer = StoreWriter(path)

    def _report(self, problem: str, again: bool = False) -> None:
        """Log `problem` and show it in `problem`: the first one, or each when `again`."""
        if self.problem is None or again:
            self.problem = problem
            log.warning("%s; requests are still forwarded", problem)

    def close(self) -> None:
        self._worker.close()
        if self._worker.dropped:
            log.warning("%d exchanges were not stored (queue full)", self._worker.dropped)
        if self._writer is not None:
            self._writer.close()


def _json_object(body: str) -> dict[str, Any] | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
