"""Upstreams for the proxy tests, served over real HTTP on loopback.

`FaultUpstream` answers provider paths the way a struggling provider does, picked per request
by the `x-test-fault` header (forwarded like any end-to-end header): `500`, `429`, `401` (the
credentials it was sent, echoed in its error), `cut` (an
event stream that breaks off mid-body), `gate` (one event, then the rest only once the test
opens `gate`), `encoded` (a JSON body compressed as `x-test-encoding` names), `junk`
(bytes that are not in the encoding they claim), `echo` (the request body and a cookie back).
Everything sent is kept in `sent`, byte for byte. `PacedEmulator` is the emulator over HTTP
streaming its answers one event at a time, to see what a proxy does with a stream a client
leaves.
"""

from __future__ import annotations

import asyncio
import gzip
import importlib
import json
import threading
import zlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.live.http_server import ThreadedServer

PATHS = ["/v1/messages", "/v1/messages/count_tokens", "/v1/responses", "/v1/chat/completions"]
EVENT = b'event: ping\ndata: {"type":"ping"}\n\n'
ANTHROPIC_OVERLOADED = (
    b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
    b'"request_id":"req_011"}'
)
OPENAI_RATE_LIMIT = (
    b'{"error":{"message":"Rate limit reached for gpt-5.4","type":"requests",'
    b'"param":null,"code":"rate_limit_exceeded"}}'
)


def compressed(plain: bytes, encoding: str) -> bytes:
    """`plain` in a content-encoding: gzip, deflate, br or zstd (the last two need their
    packages, as the proxy does to read them)."""
    if encoding == "gzip":
        return gzip.compress(plain)
    if encoding == "deflate":
        return zlib.compress(plain)
    if encoding == "br":
        return bytes(importlib.import_module("brotli").compress(plain))
    return bytes(importlib.import_module("backports.zstd").compress(plain))


class FaultUpstream(ThreadedServer):
    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.targets: list[str] = []  # the URLs requested, query included
        self.gate = threading.Event()
        routes = [Route(p, self._handle, methods=["POST"]) for p in PATHS]
        super().__init__(Starlette(routes=routes))

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        self.received.append((dict(request.headers), body))
        self.targets.append(str(request.url))
        fault = request.headers.get("x-test-fault", "echo")
        if fault == "500":
            return self._bytes(ANTHROPIC_OVERLOADED, 500, {"request-id": "req_011"})
        if fault == "401":  # an error that echoes what it was given, as some gateways do
            given = f"{request.url.query} {dict(request.headers)}"
            error = {"type": "authentication_error", "message": f"invalid credentials: {given}"}
            return self._bytes(json.dumps({"type": "error", "error": error}).encode(), 401, {})
        if fault == "429":
            return self._bytes(OPENAI_RATE_LIMIT, 429, {"retry-after": "7"})
        if fault in ("encoded", "junk"):
            encoding = request.headers.get("x-test-encoding", "gzip")
            plain = json.dumps({"id": "msg_gz", "echo": body.decode()}).encode()
            packed = compressed(plain, encoding) if fault != "junk" else b"not compressed"
            self.sent.append(packed)
            return Response(packed, 200, {"content-encoding": encoding}, "application/json")
        if fault in ("cut", "gate"):
            return StreamingResponse(self._events(fault), media_type="text/event-stream")
        echo: dict[str, Any] = {"id": "echo", "body": body.decode("utf-8", "replace")}
        echo["headers"] = dict(request.headers)
        cookie = {"set-cookie": f"session={request.headers.get('x-test-cookie', 'none')}"}
        return self._bytes(json.dumps(echo).encode(), 200, cookie)

    def _bytes(self, body: bytes, status: int, headers: dict[str, str]) -> Response:
        self.sent.append(body)
        return Response(body, status, headers, "application/json")

    async def _events(self, fault: str) -> AsyncIterator[bytes]:
        self.sent.append(EVENT)
        yield EVENT
        if fault == "cut":
            raise ConnectionAbortedError("upstream breaks off mid-stream")  # drops the socket
        while not self.gate.is_set():
            await asyncio.sleep(0.005)
        self.sent.append(EVENT)
        yield EVENT


class PacedEmulator(EmulatorServer):
    """The emulator whose streamed answers send `head` events at once and each further one
    only once the test sets `more`. `closed` is set when its connection is closed before the
    last event (the stream is cancelled), `events` counts the events it sent."""

    def __init__(self, head: int = 2) -> None:
        super().__init__()
        self.head, self.events = head, 0
        self.more, self.closed = threading.Event(), threading.Event()

    async def stream(self, frames: list[bytes]) -> AsyncIterator[bytes]:
        try:
            for number, frame in enumerate(frames):
                while number >= self.head and not self.more.is_set():
                    await asyncio.sleep(0.005)
                self.events += 1
                yield frame
        except BaseException:  # cancelled: the other side closed the connection
            self.closed.set()
            raise
