"""How work leaves the forwarding path: bounded queues, each drained by one daemon thread that
holds back while a request is being forwarded.

Python runs one thread at a time: a worker busy masking, storing or analysing when a request
comes in delays it (up to the interpreter's switch interval at each wait for the network).
So a worker takes its next item only once no request is between its arrival and its first
response byte (`FORWARDING`), waiting at most `PATIENCE_S`, and not at all once its queue is
half full: the queues stay bounded under any load.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from dtl_notebook.agent.secrets import redact

log = logging.getLogger("dtl_notebook.proxy")
QUEUE_SIZE = 1024
PATIENCE_S = 0.5


class InFlight:
    """The requests between their arrival and their first response byte. `begin` and `end`
    are called from the forwarding loop only; workers `wait_quiet`."""

    def __init__(self) -> None:
        self._count = 0
        self._quiet = threading.Event()
        self._quiet.set()

    def begin(self) -> None:
        self._count += 1
        if self._count == 1:
            self._quiet.clear()

    def end(self) -> None:
        self._count -= 1
        if self._count == 0:
            self._quiet.set()

    def wait_quiet(self, timeout: float) -> None:
        self._quiet.wait(timeout)


FORWARDING = InFlight()  # one per process: every worker yields to any forwarding in it


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
            if self._queue.qsize() < self._queue.maxsize // 2:
                FORWARDING.wait_quiet(PATIENCE_S)
            try:
                self._handle(item)
            except Exception as exc:  # a bad exchange must not stop the thread
                log.warning("%s: %s: %s", self._name, type(exc).__name__, redact(str(exc)))
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
