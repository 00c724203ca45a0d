"""The Responses WebSocket transport relayed: `GET /v1/responses` with `Upgrade: websocket`.

Codex opens this socket first (codex-rs `codex-api`, `endpoint/responses_websocket.rs`) and
sends one text message per request: `{"type": "response.create", ...the HTTP body's fields}`;
the server answers each with the Responses stream's events, one text message each, up to
`response.completed` (or `response.failed`, `response.incomplete`, an `error` event). The
upgrade is relayed to the upstream as a WebSocket handshake with the client's end-to-end
headers; an upstream that refuses it gives the client its refusal (status, headers and body)
and nothing is stored. Each `response.create` and the events answering it are one exchange,
stored like an SSE stream's (its request the message as sent, its response the events as
`event:`/`data:` frames), grouped into conversations like HTTP ones. Other messages
(`response.processed` acknowledgements) are relayed and not stored.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import anyio
from starlette.responses import Response
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from dtl_notebook.agent.secrets import redact
from dtl_notebook.proxy.config import ROUTES, ProxyConfig
from dtl_notebook.proxy.headers import RawHeaders, end_to_end
from dtl_notebook.proxy.record import ExchangeRecord
from dtl_notebook.proxy.store_queue import StoreQueue
from dtl_notebook.proxy.worker import FORWARDING
from dtl_notebook.wire.providers import spec

log = logging.getLogger("dtl_notebook.proxy")
OPEN_TIMEOUT_S = 10.0
# the handshake's own fields: each side of the relay negotiates its connection itself
_HANDSHAKE = frozenset(
    {
        b"host",
        b"content-length",
        b"sec-websocket-key",
        b"sec-websocket-version",
        b"sec-websocket-extensions",
        b"sec-websocket-accept",
        b"sec-websocket-protocol",
        b"date",
        b"server",
    }
)
_LAST_EVENTS = frozenset({"response.completed", "response.failed", "response.incomplete", "error"})
ErrorBody = Callable[[str, int, str], bytes]  # family, status, message -> the error body
CLOSED_EARLY = "the WebSocket closed before the response ended"
OVERTAKEN = "the client sent its next response.create before this response ended"


def websocket_routes(
    config: ProxyConfig, store_queue: StoreQueue, numbers: Iterator[int], error_body: ErrorBody
) -> list[WebSocketRoute]:
    """The WebSocket routes: each Responses path the proxy forwards, relayed to its upstream;
    `numbers` numbers exchanges with the HTTP ones, `error_body` writes the HTTP path's
    errors (the proxy's 502 for an unreachable upstream)."""
    paths = [path for path, (_, provider) in ROUTES.items() if spec(provider).serves_socket]

    async def relay(websocket: WebSocket) -> None:
        await _Socket(config, store_queue, numbers, websocket).run(error_body)

    return [WebSocketRoute(path, relay) for path in paths]


def _websocket_origin(origin: str) -> str:
    return "ws" + origin.removeprefix("http")  # http -> ws, https -> wss


class _Socket:
    """One relayed WebSocket: the client's side, the upstream's, and the exchange open now."""

    def __init__(
        self,
        config: ProxyConfig,
        store_queue: StoreQueue,
        numbers: Iterator[int],
        client: WebSocket,
    ) -> None:
        self.config, self.store_queue = config, store_queue
        self.numbers, self.client = numbers, client
        self.family, self.provider = ROUTES[client.url.path]
        self.origin = config.upstreams[self.family]
        self.query = client.scope.get("query_string", b"").decode("latin-1")
        self.headers: RawHeaders = end_to_end(client.headers.raw, drop=_HANDSHAKE)
        self.open: ExchangeRecord | None = None
        self.waiting = False  # the open exchange has had no event yet (FORWARDING holds)

    async def run(self, error_body: ErrorBody) -> None:
        upstream = await self._connect(error_body)
        if upstream is None:
            return
        handshake = upstream.response.headers.raw_items() if upstream.response else iter(())
        accepted = end_to_end(_raw(handshake), drop=_HANDSHAKE)
        await self.client.accept(headers=accepted)
        try:
            async with anyio.create_task_group() as group:

                async def both(side: Callable[[ClientConnection], Any]) -> None:
                    try:
                        await side(upstream)
                    finally:
                        group.cancel_scope.cancel()

                group.start_soon(both, self._client_to_upstream)
                group.start_soon(both, self._upstream_to_client)
        finally:
            self._settle(CLOSED_EARLY)
            with anyio.CancelScope(shield=True):
                await upstream.close()
                await _close_quietly(self.client, upstream.close_code)

    async def _connect(self, error_body: ErrorBody) -> ClientConnection | None:
        """The upstream's WebSocket, or None once the client has been given the refusal."""
        path = self.client.url.path
        target = _websocket_origin(self.origin) + path + (f"?{self.query}" if self.query else "")
        headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in self.headers]
        try:
            return await connect(
                target,
                additional_headers=headers,
                user_agent_header=None,  # the client's own User-Agent goes on
                open_timeout=OPEN_TIMEOUT_S,
                max_size=None,
                ping_interval=None,  # the client keeps its connection alive, not the relay
            )
        except InvalidStatus as exc:
            refusal = exc.response
            log.warning(
                "WebSocket %s refused by %s: %d (nothing stored)",
                path,
                self.origin,
                refusal.status_code,
            )
            body = bytes(refusal.body or b"")
            reply = Response(body, refusal.status_code)
            kept = end_to_end(_raw(refusal.headers.raw_items()), drop=_HANDSHAKE)
            reply.raw_headers = [*kept, (b"content-length", str(len(body)).encode())]
            await self.client.send_denial_response(reply)
        except (OSError, TimeoutError, WebSocketException) as exc:
            reason = redact(f"upstream {self.origin} unreachable: {type(exc).__name__}: {exc}")
            log.warning("WebSocket %s: %s (nothing stored)", path, reason)
            body = error_body(self.family, 502, reason.splitlines()[0])
            await self.client.send_denial_response(
                Response(body, 502, media_type="application/json")
            )
        return None

    async def _client_to_upstream(self, upstream: ClientConnection) -> None:
        try:
            while True:
                message = await self.client.receive()
                if message["type"] == "websocket.disconnect":
                    return
                text, data = message.get("text"), message.get("bytes")
                if text is not None:
                    await upstream.send(self._request(text))
                elif data is not None:
                    await upstream.send(data)
        except (WebSocketDisconnect, ConnectionClosed):
            return

    def _request(self, text: str) -> str:
        """The message to send on: a `response.create` opens an exchange (the store queue may
        add the cache-diagnostics field to it, as to an HTTP body)."""
        try:
            body = json.loads(text)
        except ValueError:
            return text
        if not (isinstance(body, dict) and body.get("type") == "response.create"):
            return text
        self._settle(OVERTAKEN)
        record = ExchangeRecord(
            next(self.numbers),
            "WEBSOCKET",
            self.client.url.path,
            self.query,
            self.family,
            self.provider,
            self.origin,
            self.headers,
            text.encode(),
            self.config.max_stored_response,
        )
        self.store_queue.arrive(record)
        self.open, self.waiting = record, True
        FORWARDING.begin()  # background work holds back until its first event
        return record.request_body.decode("utf-8", "replace") if record.edited else text

    async def _upstream_to_client(self, upstream: ClientConnection) -> None:
        try:
            async for message in upstream:
                last = isinstance(message, str) and self._event(message)
                if last:  # handed over before the client can send its next request
                    self._settle("")
                if isinstance(message, str):
                    await self.client.send_text(message)
                else:
                    await self.client.send_bytes(message)
        except (WebSocketDisconnect, ConnectionClosed, OSError):
            return

    def _event(self, text: str) -> bool:
        """Add one event to the open exchange; whether it ends the response."""
        record = self.open
        if record is None:
            return False
        try:
            event = json.loads(text)
        except ValueError:
            event = None
        kind = event.get("type") if isinstance(event, dict) else None
        if record.status is None:
            record.response(_status(kind, event), [(b"content-type", b"text/event-stream")])
        record.chunk(_frame(kind, text))
        self._first_event()
        return kind in _LAST_EVENTS

    def _first_event(self) -> None:
        if self.waiting:
            self.waiting = False
            FORWARDING.end()

    def _settle(self, failure: str) -> None:
        """Hand the open exchange over, once ('' when its response ended)."""
        record, self.open = self.open, None
        self._first_event()
        if record is not None:
            record.finish(failure or None)
            self.store_queue.put(record)


def _status(kind: str | None, event: Any) -> int:
    """The exchange's status: 200 for a response's events, an `error` event's own status
    (Codex reads `status` or `status_code` there), else 500."""
    if kind != "error":
        return 200
    status = event.get("status", event.get("status_code"))
    return status if isinstance(status, int) and 400 <= status <= 599 else 500


def _frame(kind: str | None, text: str) -> bytes:
    """One event as the SSE frame an HTTP stream would have carried it in."""
    head = f"event: {kind}\n" if kind else ""
    data = "\n".join(f"data: {line}" for line in text.splitlines() or [""])
    return f"{head}{data}\n\n".encode()


def _raw(items: Iterator[tuple[str, str]]) -> RawHeaders:
    return [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in items]


async def _close_quietly(client: WebSocket, code: int | None) -> None:
    if client.client_state is WebSocketState.DISCONNECTED:
        return
    try:
        await client.close(code or 1000)
    except (WebSocketDisconnect, RuntimeError, OSError):  # the client left meanwhile
        return
