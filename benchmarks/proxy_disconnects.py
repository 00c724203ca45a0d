"""The proxy under concurrent streaming clients of which a third leave midway.

A loopback upstream streams 36 server-sent events per request, one every 10 ms, and counts
the streams it has open, finished and had stopped under it. Twenty clients stream through
`python -m dtl_notebook proxy` at once; every third reads two chunks and closes its
connection. Then: every exchange is in the store (nothing lost), each one cut by its client
is stored as cut by the client and the others as complete, and no upstream stream is still
running (a generation nobody reads is stopped, not paid for to its end).

    python benchmarks/proxy_disconnects.py
"""

from __future__ import annotations

import json
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).parent))
from proxy import _HEADERS, REQUEST, _start_proxy

from dtl_notebook.cache.store_reader import iter_rows
from dtl_notebook.live.http_server import ThreadedServer
from dtl_notebook.proxy.app import CLIENT_LEFT

CLIENTS, LEAVING_EVERY, EVENTS, GAP_S = 20, 3, 36, 0.01
SETTLE_S = 30.0  # at most this long for the store and the upstream to settle


def _frames() -> list[bytes]:
    start = {"id": "msg_cut", "type": "message", "role": "assistant", "content": []}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}})
    delta = {"type": "text_delta", "text": "word "}
    events += [{"type": "content_block_delta", "index": 0, "delta": delta}] * (EVENTS - 5)
    events += [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


class SlowUpstream(ThreadedServer):
    """A provider streaming slowly, counting its streams: open, finished, stopped."""

    def __init__(self) -> None:
        self.frames = _frames()
        self.open = self.finished = self.stopped = 0
        self._lock = threading.Lock()
        super().__init__(Starlette(routes=[Route("/v1/messages", self._handle, methods=["POST"])]))

    def _count(self, field: str, step: int) -> None:
        with self._lock:
            setattr(self, field, getattr(self, field) + step)

    async def _handle(self, request: Request) -> Response:
        await request.body()

        async def frames() -> Any:
            self._count("open", 1)
            try:
                for frame in self.frames:
                    yield frame
                    await anyio.sleep(GAP_S)
                self._count("finished", 1)
            except BaseException:  # closed or cancelled under it: the reader left
                self._count("stopped", 1)
                raise
            finally:
                self._count("open", -1)

        return StreamingResponse(frames(), media_type="text/event-stream")


def _client(url: str, body: bytes, leaves: bool) -> int:
    """Stream one response; a leaving client closes after two chunks. Returns chunks read."""
    read = 0
    with (
        httpx2.Client(timeout=30) as client,
        client.stream("POST", url, content=body, headers=_HEADERS) as reply,
    ):
        for _ in reply.iter_raw():
            read += 1
            if leaves and read == 2:
                break
    return read


def _settled(upstream: SlowUpstream, store: Path) -> list[dict[str, Any]]:
    """The stored rows once all CLIENTS are stored and no upstream stream is open (or the
    rows found after SETTLE_S)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        rows = list(iter_rows(store)) if store.exists() else []
        if (len(rows) >= CLIENTS and upstream.open == 0) or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def run() -> list[tuple[str, str, str]]:
    body = json.dumps({**REQUEST, "stream": True}).encode()
    with SlowUpstream() as upstream, tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "cut.sqlite"
        process, origin = _start_proxy(upstream.url, store)
        try:
            leaving = [n % LEAVING_EVERY == 0 for n in range(CLIENTS)]
            start = time.perf_counter()
            with ThreadPoolExecutor(CLIENTS) as pool:
                list(pool.map(lambda x: _client(f"{origin}/v1/messages", body, x), leaving))
            seconds = time.perf_counter() - start
            rows = _settled(upstream, store)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    cut = sum(1 for r in rows if CLIENT_LEFT in (r["failure"] or ""))
    whole = sum(1 for r in rows if not r["failure"] and b"message_stop" in _bytes(r))
    left = sum(leaving)
    return [
        (f"clients streaming at once ({left} leave after 2 chunks)", str(CLIENTS), "-"),
        ("exchanges stored", str(len(rows)), f"= {CLIENTS} (nothing lost)"),
        ("stored as cut by the client", str(cut), f"= {left}"),
        ("stored complete", str(whole), f"= {CLIENTS - left}"),
        ("upstream streams finished / stopped", f"{upstream.finished} / {upstream.stopped}", "-"),
        ("upstream streams still open", str(upstream.open), "= 0"),
        ("wall time of the 20 clients", f"{seconds:.2f} s", "-"),
    ]


def _bytes(row: dict[str, Any]) -> bytes:
    value = row["response_body"] or b""
    return value.encode() if isinstance(value, str) else bytes(value)


if __name__ == "__main__":
    rows = run()
    width = max(len(r[0]) for r in rows)
    print(f"{'proxy, clients that leave':<{width}}  {'value':>10}  target")
    for label, value, target in rows:
        print(f"{label:<{width}}  {value:>10}  {target}")
