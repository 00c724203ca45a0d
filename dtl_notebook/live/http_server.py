"""An ASGI app served by uvicorn on a background thread with its own event loop.

The socket is bound in the caller's thread, so a port that is taken fails at `start()` with a
clear error, and port 0 picks a free one that `.port` then names.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
import time
from typing import Any

import uvicorn

# a hang guard, not a wait: start() returns as soon as the server is up, and a server that
# fails to start ends its thread at once; on a loaded machine a start can take seconds
START_TIMEOUT_S = 60.0


class _IncompleteResponseFilter(logging.Filter):
    """Drops uvicorn's line for a response left unfinished on purpose (a relayed stream that
    the upstream cut: the client must see the cut too); the app reports that itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing response" not in record.getMessage()


logging.getLogger("uvicorn.error").addFilter(_IncompleteResponseFilter())


class ThreadedServer:
    """`app` on http://host:port, served from a daemon thread until `stop()`."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ValueError(f"port must be a number from 0 to 65535, got {port!r}")
        self.app, self.host, self._asked_port = app, host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._bound_port = 0

    @property
    def port(self) -> int:
        return self._bound_port or self._asked_port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> ThreadedServer:
        if self.running:
            return self
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # inherited by accepted connections: a response's head and body go out at once, not
        # held back by Nagle's algorithm until the client's delayed ACK (~40 ms a request)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((self.host, self._asked_port))
        except OSError as exc:
            sock.close()
            raise OSError(f"cannot listen on {self.host}:{self._asked_port}: {exc}") from None
        sock.listen(1024)
        self._bound_port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="auto", access_log=False, timeout_keep_alive=30
        )
        self._server, self._socket = uvicorn.Server(config), sock
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True, name="dtl-http"
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=START_TIMEOUT_S)
        if self._socket is not None:
            self._socket.close()
        self._server, self._thread, self._socket = None, None, None

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_until_stopped() -> None:
    """Block a foreground command (`emulator`, `proxy`) until SIGTERM or Ctrl-C."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
