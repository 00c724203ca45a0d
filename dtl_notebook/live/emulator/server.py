"""The emulator served over real HTTP on loopback: an upstream for the proxy and for SDK
clients pointed at a base URL.

One Emulator per endpoint (`/v1/messages`, `/v1/responses`, `/v1/chat/completions`), each
with its own cache; a body with `"stream": true` is answered as server-sent events
(`stream`), any other as JSON. Responses is served over its WebSocket transport too
(`GET /v1/responses` upgraded, as Codex uses it): each `response.create` message is answered
with the same events as the SSE stream, one text message each, and a refusal with an `error`
event carrying the HTTP status. Requests are handled one at a time on the server's loop, as
the Emulator keeps per-endpoint state.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from dtl_notebook.live.emulator import PATHS, Emulator
from dtl_notebook.live.emulator.stream import sse_events, stream_events
from dtl_notebook.live.http_server import ThreadedServer
from dtl_notebook.wire.providers import spec


class EmulatorServer(ThreadedServer):
    """`EmulatorServer().start()`; then `.url` is the origin to send provider requests to.
    `received` and `sent` keep the raw bodies, in order, as they crossed the wire."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **cache_overrides: Any) -> None:
        self.emulators = {path: Emulator(p, **cache_overrides) for path, p in PATHS.items()}
        self.received: list[bytes] = []
        self.sent: list[bytes] = []
        routes: list[Route | WebSocketRoute] = [
            Route(path, self._handle, methods=["POST"]) for path in PATHS
        ]
        sockets = [p for p, provider in PATHS.items() if spec(provider).serves_socket]
        routes += [WebSocketRoute(path, self._websocket) for path in sockets]
        super().__init__(Starlette(routes=routes), host, port)

    async def _handle(self, request: Request) -> Response:
        content = await request.body()
        self.received.append(content)
        emulator = self.emulators[request.url.path]
        wire = httpx2.Request("POST", str(request.url), content=content)
        answer = emulator.handle(wire)
        streamed = answer.status_code == 200 and _wants_stream(content)
        if not streamed:
            self.sent.append(answer.content)
            media = answer.headers.get("content-type", "application/json")
            return Response(answer.content, answer.status_code, media_type=media)
        frames = list(sse_events(json.loads(answer.content), emulator.provider))
        self.sent.append(b"".join(frames))
        return StreamingResponse(self.stream(frames), media_type="text/event-stream")

    async def _websocket(self, websocket: WebSocket) -> None:
        """The Responses WebSocket transport: `response.create` messages in, events out."""
        await websocket.accept()
        emulator = self.emulators[websocket.url.path]
        try:
            while True:
                text = await websocket.receive_text()
                for event in self._socket_answer(emulator, websocket.url, text):
                    await websocket.send_text(json.dumps(event, separators=(",", ":")))
        except WebSocketDisconnect:
            return

    def _socket_answer(self, emulator: Emulator, url: object, text: str) -> list[Any]:
        """The events answering one client message (none for `response.processed`, an
        acknowledgement)."""
        try:
            message = json.loads(text)
        except ValueError as exc:
            return [_error_event(400, f"message is not JSON: {exc}")]
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "response.processed":
            return []
        if kind != "response.create":
            return [_error_event(400, f"type: {kind!r}: expected 'response.create'")]
        content = text.encode()
        self.received.append(content)
        answer = emulator.handle(httpx2.Request("POST", str(url), content=content))
        if answer.status_code != 200:
            self.sent.append(answer.content)
            return [_error_event(answer.status_code, json.loads(answer.content)["error"])]
        events = [data for data, _ in stream_events(json.loads(answer.content), emulator.provider)]
        self.sent.append(b"".join(json.dumps(e).encode() + b"\n" for e in events))
        return events

    async def stream(self, frames: list[bytes]) -> AsyncIterator[bytes]:
        """The event frames of one streamed answer, as they go out (all at once here)."""
        for frame in frames:
            yield frame


def _wants_stream(content: bytes) -> bool:
    try:
        body = json.loads(content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("stream") is True


def _error_event(status: int, error: dict[str, Any] | str) -> dict[str, Any]:
    """A refusal over the WebSocket: the HTTP status and the error body's `error`."""
    if isinstance(error, str):
        error = {"type": "invalid_request_error", "message": error, "param": None, "code": None}
    return {"type": "error", "status": status, "error": error}
