"""`Proxy`: the forwarding app and its store queue, served on a background thread.

with Proxy(store="traffic.sqlite", port=0) as proxy:
    client = anthropic.Anthropic(base_url=proxy.url)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from dtl_notebook.live.http_server import ThreadedServer
from dtl_notebook.proxy.app import make_app
from dtl_notebook.proxy.config import DEFAULT_PORT, ProxyConfig
from dtl_notebook.proxy.store_queue import Listener, StoreQueue

log = logging.getLogger("dtl_notebook.proxy")


class Proxy:
    """A cache-inspector proxy on `host:port` (port 0: a free one); `start()` / `stop()`.
    `listeners` hear of each request as it arrives and as it finishes (`Arrived`,
    `Finished`, on the store queue's thread); `diagnostics=True` adds the providers'
    cache-diagnostics request fields (proxy/diagnostics.py), the one edit it ever makes.
    Other keyword arguments are ProxyConfig.make's (upstream_anthropic, upstream_openai,
    max_body, max_stored_response)."""

    def __init__(
        self,
        store: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        listeners: list[Listener] | None = None,
        diagnostics: bool = False,
        **settings: Any,
    ) -> None:
        self.config = ProxyConfig.make(host=host, port=port, store=store, **settings)
        self.listeners = list(listeners or [])
        self.diagnostics = bool(diagnostics)
        self.store_queue: StoreQueue | None = None
        self._server: ThreadedServer | None = None

    @property
    def port(self) -> int:
        return self._server.port if self._server is not None else self.config.port

    @property
    def url(self) -> str:
        """The base URL to give a client (an OpenAI client wants `url + "/v1"`)."""
        if self._server is not None:
            return self._server.url
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.running

    def start(self) -> Proxy:
        if self.running:
            return self
        if self.config.exposed:
            log.warning(
                "listening on %s, beyond this machine: anyone who reaches the port can use "
                "the API keys its clients send",
                self.config.host,
            )
        store_queue = StoreQueue(self.config.store, self.listeners, self.diagnostics)
        server = ThreadedServer(make_app(self.config, store_queue), self.config.host, self.port)
        try:
            server.start()
        except BaseException:
            store_queue.close()
            raise
        self.store_queue, self._server = store_queue, server
        return self

    def stop(self) -> None:
        """Stop serving, then finish storing what has been forwarded."""
        if self._server is not None:
            self._server.stop()
        if self.store_queue is not None:
            self.store_queue.close()
        self._server = None

    def status(self) -> str:
        if not self.running:
            return "stopped"
        stored = self.store_queue.stored if self.store_queue else 0
        problem = self.store_queue.problem if self.store_queue else None
        where = f", store {self.config.store}" if self.config.store else ", no store"
        asked = ", adding the providers' cache-diagnostics fields" if self.diagnostics else ""
        return f"running on {self.url}{where}, {stored} exchanges stored{asked}" + (
            f" (problem: {problem})" if problem else ""
        )

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Proxy({self.status()})"
