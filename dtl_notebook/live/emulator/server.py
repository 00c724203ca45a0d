"""The emulator served over real HTTP on loopback: an upstream for the proxy and for SDK
clients pointed at a base URL.

One Emulator per endpoint (`/v1/messages`, `/v1/responses`, `/v1/chat/completions`), each
with its own cache; a body with `"stream": true` is answered as server-sent events
(`stream`), any other as JSON. Requests are handled one at a time on the server's
loop, as the Emulator keeps per-endpoint state.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from dtl_notebook.live.emulator import PATHS, Emulator
from dtl_notebook.live.emulator.stream import sse_events
from dtl_notebook.live.http_server import ThreadedServer


class EmulatorServer(ThreadedServer):
    """`EmulatorServer().start()`; then `.url` is the origin to send provider requests to.
    `received` and `sent` keep the raw bodies, in order, as they crossed the wire."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **cache_overrides: Any) -> None:
        self.emulators = {path: Emulator(p, **cache_overrides) for path, p in PATHS.items()}
        self.received: list[bytes] = []
        self.sent: list[bytes] = []
        routes = [Route(path, self._handle, methods=["POST"]) for path in PATHS]
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
