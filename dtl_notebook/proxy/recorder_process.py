"""The recorder in a process of its own: the forwarding process only pickles each exchange
and writes it to a pipe.

Masking, parsing, grouping, storing and the per-request analysis cost milliseconds of CPU per
agent-sized exchange; on threads of the forwarding process they compete with forwarding for
the interpreter. `RecorderProcess` offers what the proxy uses of `StoreQueue` (`arrive`, `put`,
`flush`, `wait`, `close`, `stored`, `problem`) and runs a `StoreQueue` in a spawned child,
whose listeners are built there by a picklable factory (the terminal summary: `cli.py`).
Exchanges leave the forwarding process unmasked only through this pipe, to the child, which
masks them before anything is stored or printed. The child ends once the pipe closes: at
`close`, after storing all it was sent, or when the forwarding process dies.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import pickle
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from dtl_notebook.proxy.record import ExchangeRecord
from dtl_notebook.proxy.store_queue import Listener, StoreQueue
from dtl_notebook.proxy.worker import Worker

log = logging.getLogger("dtl_notebook.proxy")
# built in the child: its listeners, and what closes them once everything is handled
ListenerFactory = Callable[[], tuple[list[Listener], Callable[[], None]]]
# what the child tells: exchanges handled, stored, its problem, the last flush it finished
News = tuple[int, int, str | None, int]
CLOSE_TIMEOUT_S = 60.0


class RecorderProcess:
    """A `StoreQueue` in a child process; `arrive` and `put` never block (a bounded queue
    and a sender thread feed the pipe; a full queue drops and is reported once)."""

    def __init__(self, store: str | Path | None, listeners: ListenerFactory | None = None) -> None:
        self.problem: str | None = None
        self.stored = self.handled = self._flushed = 0
        self._parent_problem: str | None = None
        self._ready = False
        self._changed = threading.Condition()
        self._flushes = itertools.count(1)
        context = multiprocessing.get_context("spawn")  # no forked copy of a running server
        inbox, self._inbox = context.Pipe(duplex=False)
        self._news, news = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve, args=(inbox, news, store, listeners), name="dtl-proxy-recorder"
        )
        self._process.start()
        inbox.close()  # the child's ends: its copies alone, so each side sees the other end
        news.close()
        self._sender = Worker(self._send, "dtl-proxy-sender")
        self._reader = threading.Thread(target=self._read, daemon=True, name="dtl-proxy-news")
        self._reader.start()
        with self._changed:  # the store is open (or known not to open) before serving
            self._changed.wait_for(lambda: self._ready or not self._reader.is_alive(), 60)
        if not self._ready:
            self._process.join(10)  # it is ending: its end of the pipe has closed
            code = self._process.exitcode
            self._report(
                f"the recorder process did not start (exit code {code}); nothing is stored"
            )

    def arrive(self, record: ExchangeRecord) -> None:
        """A request has arrived; pickled now (the record goes on changing), sent later."""
        self._sender.put(pickle.dumps(("arrived", record), pickle.HIGHEST_PROTOCOL))

    def put(self, record: ExchangeRecord) -> None:
        """An exchange has ended, whatever happened; never blocks."""
        self._sender.put(pickle.dumps(("finished", record), pickle.HIGHEST_PROTOCOL))

    def flush(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Wait until every exchange handed over so far is stored."""
        self._sender.drain()
        token = next(self._flushes)
        self._sender.put(pickle.dumps(("flush", token)))
        with self._changed:
            self._changed.wait_for(
                lambda: self._flushed >= token or not self._reader.is_alive(), timeout
            )

    def wait(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until `count` exchanges in all have been handled."""
        with self._changed:
            return self._changed.wait_for(lambda: self.handled >= count, timeout)

    def close(self) -> None:
        """Send what is queued, let the child store it all, and wait for it to end."""
        self._sender.close()
        if self._sender.dropped:
            log.warning("%d exchanges were not stored (queue full)", self._sender.dropped)
        self._inbox.close()
        self._process.join(CLOSE_TIMEOUT_S)
        if self._process.is_alive():
            log.warning("the recorder process did not finish in time; stopped")
            self._process.terminate()
            self._process.join()
        self._reader.join(CLOSE_TIMEOUT_S)

    def _send(self, payload: bytes) -> None:
        try:
            self._inbox.send_bytes(payload)
        except (OSError, ValueError) as exc:  # the child is gone (or the pipe closed)
            self._report(f"the recorder process is gone ({exc}); nothing more is stored")

    def _report(self, problem: str) -> None:
        if self._parent_problem is None:
            self._parent_problem = self.problem = problem
            log.warning("%s; requests are still forwarded", problem)

    def _read(self) -> None:
        while True:
            try:
                news: News = self._news.recv()
            except (EOFError, OSError):
                break
            with self._changed:
                self.handled, self.stored, problem, self._flushed = news
                self.problem = self._parent_problem or problem
                self._ready = True
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()


def _serve(
    inbox: Connection, news: Connection, store: str | Path | None, make: ListenerFactory | None
) -> None:
    """The child: a `StoreQueue` fed from `inbox`, telling its progress on `news`."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    listeners, close_listeners = make() if make is not None else ([], lambda: None)
    recorder = StoreQueue(store, listeners)
    lock, flushed = threading.Lock(), 0

    def tell() -> None:
        # the forwarding process may be gone: store on regardless
        with lock, contextlib.suppress(OSError):
            news.send((recorder.handled, recorder.stored, recorder.problem, flushed))

    recorder.on_handled = tell
    tell()  # a store that cannot be opened is known at once
    try:
        while True:
            try:
                kind, value = pickle.loads(inbox.recv_bytes())
            except EOFError:
                break
            if kind == "arrived":
                recorder.arrive(value)
            elif kind == "finished":
                recorder.put(value)
            else:
                recorder.flush()
                flushed = value
                tell()
    finally:
        recorder.close()
        close_listeners()
        tell()
