"""A bounded queue drained by one daemon thread: how work leaves the forwarding path."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("dtl_notebook.proxy")
QUEUE_SIZE = 1024


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
