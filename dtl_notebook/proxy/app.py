"""The forwarding app: provider paths to their fixed upstream, everything else refused.

Bodies go out byte for byte and come back as they arrive (`aiter_raw`: no decoding, no
buffering), with the upstream's status, compression and headers less the hop-by-hop ones.
The store queue hears of every request as it arrives (`arrive`: it may add the cache-diagnostics
field when asked to, the one edit ever made) and of every exchange once it has ended,
whatever happened (`put`); neither blocks (the store queue queues them for its own thread).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import json
import logging
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from dtl_notebook.proxy.config import ROUTES, ProxyConfig
from dtl_notebook.proxy.headers import end_to_end
from dtl_notebook.proxy.record import ExchangeRecord
from dtl_notebook.proxy.store_queue import StoreQueue
from dtl_notebook.proxy.websocket_relay import websocket_routes
from dtl_notebook.proxy.worker import FORWARDING

Sink = Callable[[ExchangeRecord], None]
TIMEOUT = httpx2.Timeout(connect=10.0, read=600.0, write=60.0, pool=60.0)
CLIENT_LEFT = "cut by the client: it disconnected mid-response, the upstream was closed"
# set by the side that writes the bytes: the host from the upstream URL, the length of the body
_REQUEST_DROP = frozenset({b"host", b"content-length"})


_FORWARDED_TASK: contextvars.ContextVar[bool] = contextvars.ContextVar("forwarded", default=False)


class _ForwardedRequestLine(logging.Filter):
    """Drops the HTTP client's `HTTP Request:` INFO line for a request this proxy forwards:
    the proxy writes its own line per request, and the client's shows the full URL, a key
    in its query included."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _FORWARDED_TASK.get()


logging.getLogger("httpx2").addFilter(_ForwardedRequestLine())


def error_body(family: str, status: int, message: str) -> bytes:
    """An error in the provider's own shape, so its SDK raises its usual error."""
    if family == "anthropic":
        kinds = {400: "invalid_request_error", 404: "not_found_error", 413: "request_too_large"}
        kind = kinds.get(status, "api_error")
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    elif family == "openai":
        kind = "invalid_request_error" if status < 500 else "server_error"
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    else:  # not a provider path: a shape both SDKs read the message from
        body = {"type": "error", "error": {"type": "not_found_error", "message": message}}
    return json.dumps(body).encode()


def _json_error(family: str, status: int, message: str) -> Response:
    return Response(error_body(family, status, message), status, media_type="application/json")


class _Relay(Response):
    """The upstream's response streamed to the client chunk by chunk. An upstream that breaks
    off mid-body leaves this response unfinished too, so the client sees the same cut; a
    client that leaves stops the relay at once and closes the upstream response, so a
    generation nobody reads stops (and stops costing)."""

    def __init__(self, upstream: httpx2.Response, record: ExchangeRecord, sink: Sink) -> None:
        self.upstream, self.record, self.sink = upstream, record, sink
        self.status_code = upstream.status_code
        self.raw_headers = end_to_end(upstream.headers.raw)
        self.background = None
        self._in_flight = True

    def _first_byte_sent(self) -> None:
        if self._in_flight:
            self._in_flight = False
            FORWARDING.end()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        record, outcome = self.record, None  # '' once relayed whole, else what cut it
        record.response(self.status_code, self.raw_headers)
        try:
            async with anyio.create_task_group() as group:

                async def relay() -> None:
                    nonlocal outcome
                    outcome = await self._relay(send)
                    group.cancel_scope.cancel()

                async def watch() -> None:
                    nonlocal outcome
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    if outcome is None:
                        outcome = f"{CLIENT_LEFT} after {record.received} response bytes"
                    group.cancel_scope.cancel()

                group.start_soon(relay)
                group.start_soon(watch)
        finally:
            self._first_byte_sent()
            self._settle("response not completed" if outcome is None else outcome)
            with anyio.CancelScope(shield=True):
                await self.upstream.aclose()

    def _settle(self, failure: str) -> None:
        """Hand the exchange over, once: before the client can have the last byte, so that
        what it sends next already finds this answer (diagnostics, conversations)."""
        if self.record.ended is None:
            self.record.finish(failure or None)
            self.sink(self.record)

    async def _relay(self, send: Send) -> str:
        """Relay the body; '' once complete, else what cut it."""
        try:
            start = {"status": self.status_code, "headers": self.raw_headers}
            await send({"type": "http.response.start", **start})
            # A sized body is whole at its last byte, and a client may send its next request
            # then: the newest chunk waits for the next one, so the last goes out only after
            # the exchange is handed over (what the next request reads of it, diagnostics and
            # conversations, is there). A chunked body ends with its terminator, sent last.
            sized = any(name.lower() == b"content-length" for name, _ in self.raw_headers)
            held = b""
            async for chunk in self.upstream.aiter_raw():
                self.record.chunk(chunk)
                if sized:
                    chunk, held = held, chunk
                    if not chunk:
                        continue
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._first_byte_sent()
            self._settle("")
            await send({"type": "http.response.body", "body": held, "more_body": False})
        except httpx2.HTTPError as exc:
            return f"upstream cut the response mid-body: {type(exc).__name__}: {exc}"
        except OSError as exc:  # the client went away while being written to
            return f"{CLIENT_LEFT}: {exc}"
        return ""


def make_app(config: ProxyConfig, store_queue: StoreQueue) -> Starlette:
    """The ASGI app forwarding to `config`'s upstreams, telling `store_queue` of each exchange."""
    sink: Sink = store_queue.put
    numbers = itertools.count(1)
    clients: dict[str, httpx2.AsyncClient] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        limits = httpx2.Limits(max_connections=512, max_keepalive_connections=64)
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]  # each write goes out at once
        transport = httpx2.AsyncHTTPTransport(limits=limits, socket_options=nodelay)
        async with httpx2.AsyncClient(timeout=TIMEOUT, transport=transport) as upstream:
            clients["upstream"] = upstream  # on the server's own loop
            yield

    def client() -> httpx2.AsyncClient:
        return clients["upstream"]

    async def forward(request: Request) -> Response:
        _FORWARDED_TASK.set(True)  # this request's own task: its relay included
        FORWARDING.begin()  # background work holds back until the first response byte
        try:
            response = await _forward(request)
        except BaseException:
            FORWARDING.end()
            raise
        if not isinstance(response, _Relay):
            FORWARDING.end()
        return response

    async def _forward(request: Request) -> Response:
        route = ROUTES.get(request.url.path)
        if route is None:
            paths = ", ".join(ROUTES)
            return _json_error(
                "", 404, f"{request.url.path} is not forwarded: this proxy serves {paths}"
            )
        family, provider = route
        raw_path = request.scope.get("raw_path", b"").decode("latin-1")
        if raw_path != request.url.path:  # e.g. `%2Fv1%2Fmessages`: not the path it decodes to
            message = f"request target {raw_path!r} is not forwarded: send {request.url.path} as is"
            return _json_error(family, 400, message)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > config.max_body:
            return _json_error(family, 413, _too_large(config.max_body))
        body = bytearray()
        try:
            async for part in request.stream():
                body += part
                if len(body) > config.max_body:
                    return _json_error(family, 413, _too_large(config.max_body))
        except ClientDisconnect:
            return Response(status_code=400)
        origin = config.upstreams[family]
        query = request.scope.get("query_string", b"").decode("latin-1")
        try:
            target = httpx2.URL(origin + raw_path + ("?" + query if query else ""))
        except httpx2.InvalidURL as exc:  # its text may hold the query: to the client only
            return _json_error(family, 400, f"request target cannot be forwarded: {exc}")
        headers = end_to_end(request.headers.raw, drop=_REQUEST_DROP)
        record = ExchangeRecord(
            next(numbers),
            request.method,
            request.url.path,
            query,
            family,
            provider,
            origin,
            headers,
            bytes(body),
            config.max_stored_response,
        )
        store_queue.arrive(record)  # may edit record.request_body (diagnostics, when asked)
        outgoing = httpx2.Request(
            request.method, target, headers=headers, content=record.request_body
        )
        try:
            upstream = await client().send(outgoing, stream=True)
        except httpx2.HTTPError as exc:
            reason = f"upstream {origin} unreachable: {type(exc).__name__}: {exc}".strip(": ")
            reply = error_body(family, 502, reason.splitlines()[0] if reason else "unreachable")
            record.response(502, [(b"content-type", b"application/json")])
            record.chunk(reply)
            record.finish(reason)
            sink(record)
            return Response(reply, 502, media_type="application/json")
        return _Relay(upstream, record, sink)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes: list[BaseRoute] = [*websocket_routes(config, store_queue, numbers, error_body)]
    routes.append(Route("/{path:path}", forward, methods=methods))
    return Starlette(routes=routes, lifespan=lifespan)


def _too_large(limit: int) -> str:
    return f"request body over the proxy's limit of {limit} bytes"
