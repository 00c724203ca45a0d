"""From the forwarding path to the store, off the forwarding path.

`Recorder.put(record)` never blocks: the exchange goes into a bounded queue that one thread
drains, in arrival order: it groups the exchange into its conversation, masks it, writes it
(one transaction) and hands the result to the listeners. A store that cannot be opened or
written, or a full queue, is reported once (a log line, and `Recorder.problem`); forwarding
carries on regardless.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtl_notebook.proxy.config import GENERATION_PATHS
from dtl_notebook.proxy.conversations import Conversations
from dtl_notebook.proxy.record import ExchangeRecord
from dtl_notebook.proxy.store import StoredRow, StoreWriter, stored_row
from dtl_notebook.wire.stream import response_body

log = logging.getLogger("dtl_notebook.proxy")
QUEUE_SIZE = 1024


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


Listener = Callable[[Finished], None]


class Worker:
    """A bounded queue drained by one daemon thread; `put` drops (and reports once) when full."""

    def __init__(self, handle: Callable[[Any], None], name: str, size: int = QUEUE_SIZE) -> None:
        self._handle, self.dropped = handle, 0
        self._queue: queue.Queue[Any] = queue.Queue(size)
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)
        self._thread.start()

    def put(self, item: Any) -> None:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("%s: queue full, exchanges dropped (forwarding goes on)", self._name)

    @property
    def _name(self) -> str:
        return self._thread.name

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._handle(item)
            except Exception as exc:  # a bad exchange must not stop the thread
                log.warning("%s: %s: %s", self._name, type(exc).__name__, exc)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def drain(self) -> None:
        """Wait until everything queued so far is handled."""
        self._queue.join()

    def close(self, timeout: float = 10.0) -> None:
        """Finish what is queued, then stop."""
        self._queue.put(None)
        self._thread.join(timeout)


class Recorder:
    """Groups, masks and stores finished exchanges on its own thread."""

    def __init__(self, store: str | Path | None, listeners: list[Listener] | None = None) -> None:
        self.listeners = list(listeners or [])
        self.conversations = Conversations()
        self.problem: str | None = None
        self.stored = 0
        self.handled = 0
        self._handled_changed = threading.Condition()
        self._writer: StoreWriter | None = None
        if store is not None:
            try:
                self._writer = StoreWriter(store)
            except Exception as exc:
                self._report(f"store {store} cannot be opened ({exc}); nothing is stored")
        self._worker = Worker(self._record, "dtl-proxy-store")

    def put(self, record: ExchangeRecord) -> None:
        self._worker.put(record)

    def flush(self) -> None:
        """Wait until every exchange handed over so far is stored."""
        self._worker.drain()

    def wait(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until `count` exchanges in all have been handled (an exchange is handed over
        once its response has ended, a moment after the client has read the last byte)."""
        with self._handled_changed:
            return self._handled_changed.wait_for(lambda: self.handled >= count, timeout)

    def _record(self, record: ExchangeRecord) -> None:
        row = stored_row(record)
        request = _json_object(row.request)
        conversation = None
        if request is not None and record.path in GENERATION_PATHS:
            conversation = self.conversations.assign(record.provider, request)
            row.values["conversation"] = conversation
        response = None
        if record.status is not None and record.status < 400 and record.failure is None:
            try:
                parsed = response_body(row.response, record.provider)
            except Exception:  # an answer this package cannot read is still stored
                parsed = None
            response = parsed if isinstance(parsed, dict) else None
        if conversation is not None and response is not None and "id" in response:
            self.conversations.answered(conversation, str(response["id"]))
        if self._writer is not None:
            try:
                self._writer.write(row)
                self.stored += 1
            except Exception as exc:
                self._report(f"store {self._writer.path} cannot be written ({exc})")
        try:
            for listener in self.listeners:
                listener(Finished(row, request, response))
        finally:
            with self._handled_changed:
                self.handled += 1
                self._handled_changed.notify_all()

    def _report(self, problem: str) -> None:
        if self.problem is None:
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
