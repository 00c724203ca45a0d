"""The proxy's cost, measured in one run against direct calls to the same upstream.

The upstream is a small server on loopback answering a fixed Messages response (JSON, or as
server-sent events when streamed), so what is measured is the proxy, not a model. The proxy
is `python -m dtl_notebook proxy` in its own process, as an agent would use it, with its
store and its terminal summary. Direct and proxied calls alternate, one at a time, from one
keep-alive client; the added latency is the difference of the two percentiles. Then requests
per second with parallel clients, store bytes per request, and the proxy process's memory
growth over 10,000 requests (after a warm-up).

    python benchmarks/proxy.py
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from dtl_notebook.live.http_server import ThreadedServer

LATENCY_CALLS = 300
STREAM_CALLS = 150
PARALLEL = (8, 1_000)  # clients, requests in all
MEMORY_CALLS = 10_000
WARMUP = 500
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 256,
    "system": "You are a careful logistics assistant. " * 200,  # ~8 KB, like a real prompt
    "messages": [{"role": "user", "content": "where is order 7?"}],
}
REPLY = {
    "id": "msg_bench",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Order 7 ships tomorrow."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 12,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1800,
    },
}


def _events() -> list[bytes]:
    start = {**REPLY, "content": [], "stop_reason": None}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Order 7 ships tomorrow."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 7},
        },
        {"type": "message_stop"},
    ]
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


class Upstream(ThreadedServer):
    """A provider that answers at once: what remains is the cost of the hops."""

    def __init__(self) -> None:
        self.reply, self.frames = json.dumps(REPLY).encode(), _events()
        route = Route("/v1/messages", self._handle, methods=["POST"])
        super().__init__(Starlette(routes=[route]))

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        if b'"stream":true' not in body.replace(b" ", b""):
            return Response(self.reply, media_type="application/json")

        async def frames() -> Any:
            for frame in self.frames:
                yield frame

        return StreamingResponse(frames(), media_type="text/event-stream")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_proxy(origin: str, store: Path) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    command = [sys.executable, "-m", "dtl_notebook", "proxy", "--port", str(port)]
    command += ["--store", str(store), "--upstream-anthropic", origin]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if "proxy on" not in first:
        process.kill()
        raise RuntimeError(f"the proxy did not start: {first!r}")
    drain = ThreadPoolExecutor(1)  # the summary lines: read, so the pipe never fills
    drain.submit(lambda: [None for _ in process.stdout or []])
    return process, f"http://127.0.0.1:{port}"


def _rss(pid: int) -> int:
    """Resident bytes of process `pid` (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def _call(client: httpx2.Client, url: str, body: bytes) -> float:
    start = time.perf_counter()
    reply = client.post(url, content=body, headers=_HEADERS)
    reply.read()
    assert reply.status_code == 200, reply.text[:200]
    return time.perf_counter() - start


def _first_byte(client: httpx2.Client, url: str, body: bytes) -> float:
    start = time.perf_counter()
    with client.stream("POST", url, content=body, headers=_HEADERS) as reply:
        chunks = reply.iter_raw()
        next(chunks)
        elapsed = time.perf_counter() - start
        for _ in chunks:
            pass
    return elapsed


_HEADERS = {"content-type": "application/json", "x-api-key": "sk-ant-bench-0000000000000000"}


def _latency(
    client: httpx2.Client, direct: str, proxied: str, body: bytes, calls: int, stream: bool
) -> tuple[list[float], list[float]]:
    measure = _first_byte if stream else _call
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(calls):
        theirs.append(measure(client, direct, body))
        ours.append(measure(client, proxied, body))
    return theirs, ours


def _parallel(url: str, body: bytes, clients: int, total: int) -> float:
    def work(count: int) -> None:
        with httpx2.Client(timeout=30) as client:
            for _ in range(count):
                _call(client, url, body)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(work, [total // clients] * clients))
    return (total // clients * clients) / (time.perf_counter() - start)


def _store_size(store: Path) -> int:
    return sum(p.stat().st_size for p in store.parent.glob(store.name + "*"))


def proxy_rows() -> list[tuple[str, str, str]]:
    """(label, value, target) rows: the proxy against direct calls."""
    rows: list[tuple[str, str, str]] = []
    body = json.dumps(REQUEST).encode()
    streamed = json.dumps({**REQUEST, "stream": True}).encode()
    with Upstream() as upstream, tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "bench.sqlite"
        process, base = _start_proxy(upstream.url, store)
        try:
            direct, proxied = f"{upstream.url}/v1/messages", f"{base}/v1/messages"
            with httpx2.Client(timeout=30) as client:
                _latency(client, direct, proxied, body, 30, stream=False)  # warm both paths
                for label, payload, calls, stream in (
                    ("added latency, non-streaming", body, LATENCY_CALLS, False),
                    ("added time to first byte, streaming", streamed, STREAM_CALLS, True),
                ):
                    theirs, ours = _latency(client, direct, proxied, payload, calls, stream)
                    (d50, d95), (p50, p95) = _percentiles(theirs), _percentiles(ours)
                    rows.append((f"proxy: {label}, p50", f"{(p50 - d50) * 1e3:.2f} ms", "< 2 ms"))
                    rows.append((f"proxy: {label}, p95", f"{(p95 - d95) * 1e3:.2f} ms", "-"))
                    rows.append(
                        (
                            f"  (direct p50 {d50 * 1e3:.2f} ms, proxied p50 {p50 * 1e3:.2f} ms)",
                            "",
                            "",
                        )
                    )
            clients, total = PARALLEL
            rate = _parallel(proxied, body, clients, total)
            rows.append((f"proxy: requests per second, {clients} clients", f"{rate:,.0f}", "-"))
            with httpx2.Client(timeout=30) as client:
                for _ in range(WARMUP):
                    _call(client, proxied, body)
                before, stored_before = _rss(process.pid), _store_size(store)
                for _ in range(MEMORY_CALLS):
                    _call(client, proxied, body)
                after = _rss(process.pid)
            time.sleep(1.0)  # the last exchanges reach the store
            per_request = (_store_size(store) - stored_before) / MEMORY_CALLS
            rows.append(
                (
                    f"proxy: store bytes per request ({len(body):,} B body)",
                    f"{per_request:,.0f} B",
                    "-",
                )
            )
            growth = (after - before) / 2**20
            rows.append(
                (
                    f"proxy: memory growth over {MEMORY_CALLS:,} requests",
                    f"{growth:.1f} MB",
                    "<= 50 MB",
                )
            )
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    return rows


def proxy_table(rows: list[tuple[str, str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"{'proxy against direct calls':<{width}}  {'value':>10}  target", "-" * (width + 30)]
    lines += [f"{label:<{width}}  {value:>10}  {target}" for label, value, target in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    print(proxy_table(proxy_rows()))
