"""The proxy's cost, measured in one run against direct calls to the same upstream.

The upstream is a small server on loopback answering a fixed Messages response (JSON, or as
server-sent events when streamed), so what is measured is the proxy, not a model. The proxy
is `python -m dtl_notebook proxy` in its own process, as an agent would use it, with its
store and its terminal summary. Direct and proxied calls alternate, one at a time, from one
keep-alive client, with an 8 KB body and an agent-sized one (60 tools, ~50 KB, whose analysis
is real work); the added latency is the difference of the percentiles. Then requests per
second with parallel clients, store bytes per request, and the memory growth of the proxy
and its recorder process over 10,000 agent-sized requests (after a warm-up of 2,000, in which
the recorder's analysis memos fill: ~110 MB, then flat). CPU per request is given for the
forwarding process and for its recorder process apart.

    python benchmarks/proxy.py [--baseline DIR]

`--baseline DIR`: another checkout of the project, whose proxy runs beside this one and is
measured in the same rounds (before/after from one run).
"""

from __future__ import annotations

import argparse
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
STREAM_CALLS = 200
AGENT_CALLS = 150
PARALLEL = (8, 1_000)  # clients, requests in all
MEMORY_CALLS = 10_000
WARMUP = 2_000  # the recorder's memos fill within the first ~1,000 agent-sized requests
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 256,
    "system": "You are a careful logistics assistant. " * 200,  # ~8 KB, like a real prompt
    "messages": [{"role": "user", "content": "where is order 7?"}],
}
# an agent-sized body: 60 tools with descriptions and schemas, as coding agents send
AGENT_REQUEST = {
    **REQUEST,
    "tools": [
        {
            "name": f"tool_{n}",
            "description": f"Tool {n} reads, edits and searches the workspace. " * 12,
            "input_schema": {
                "type": "object",
                "properties": {
                    f"arg_{a}": {"type": "string", "description": f"argument {a} of tool {n}"}
                    for a in range(6)
                },
                "required": ["arg_0"],
            },
        }
        for n in range(60)
    ],
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


def _start_proxy(
    origin: str, store: Path, source: str | None = None, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[str], str]:
    """`python -m dtl_notebook proxy` of this checkout, or of the one at `source`; `extra`:
    more of its options."""
    port = _free_port()
    command = [sys.executable, "-m", "dtl_notebook", "proxy", "--port", str(port)]
    command += ["--store", str(store), "--upstream-anthropic", origin, *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"PYTHONPATH": source} if source else {})
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if "proxy on" not in first:
        process.kill()
        raise RuntimeError(f"the proxy did not start: {first!r}")
    drain = ThreadPoolExecutor(1)  # the summary lines: read, so the pipe never fills
    drain.submit(lambda: [None for _ in process.stdout or []])
    return process, f"http://127.0.0.1:{port}"


def _children(pid: int) -> list[int]:
    """The processes `pid` started (its recorder's, where it has one), and theirs (Linux)."""
    try:
        found = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return [grand for child in found for grand in [child, *_children(child)]]


def _rss(pid: int) -> int:
    """Resident bytes of process `pid` and its children (Linux /proc)."""
    total = 0
    for each in [pid, *_children(pid)]:
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_of_children(pid: int) -> float:
    return sum(_cpu(child) for child in _children(pid))


def _percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99."""
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.99 * (len(ordered) - 1))]


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
    client: httpx2.Client, urls: dict[str, str], body: bytes, calls: int, stream: bool
) -> dict[str, list[float]]:
    """Samples per URL, the URLs called in turn in each round."""
    measure = _first_byte if stream else _call
    samples: dict[str, list[float]] = {name: [] for name in urls}
    for _ in range(calls):
        for name, url in urls.items():
            samples[name].append(measure(client, url, body))
    return samples


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


Row = tuple[str, str, str]


def _latency_rows(client: httpx2.Client, urls: dict[str, str], pid: int) -> list[Row]:
    """Added latency per body, and the proxy process's CPU per request (forwarding, and the
    masking, grouping and storing its own threads do off the path)."""
    rows: list[Row] = []
    plain, agent = json.dumps(REQUEST).encode(), json.dumps(AGENT_REQUEST).encode()
    streamed = json.dumps({**REQUEST, "stream": True}).encode()
    _latency(client, urls, plain, 30, stream=False)  # warm every path
    for label, payload, calls, stream in (
        ("added latency, non-streaming", plain, LATENCY_CALLS, False),
        (f"added latency, {len(agent) // 1000} KB agent body", agent, AGENT_CALLS, False),
        ("added time to first byte, streaming", streamed, STREAM_CALLS, True),
    ):
        used, used_aside = _cpu(pid), _cpu_of_children(pid)
        samples = _latency(client, urls, payload, calls, stream)
        time.sleep(0.5)  # the last exchanges are stored
        cpu = (_cpu(pid) - used) / calls
        aside = (_cpu_of_children(pid) - used_aside) / calls
        d50, d99 = _percentiles(samples.pop("direct"))
        for name, ours in samples.items():
            p50, p99 = _percentiles(ours)
            rows.append((f"{name}: {label}, p50", f"{(p50 - d50) * 1e3:.2f} ms", "<= 1 ms"))
            rows.append((f"{name}: {label}, p99", f"{(p99 - d99) * 1e3:.2f} ms", "<= 5 ms"))
        body_kind = label.split(", ", 1)[1]
        rows.append((f"proxy: CPU per request, {body_kind}", f"{cpu * 1e3:.2f} ms", "-"))
        label = f"proxy: CPU per request in its recorder process, {body_kind}"
        rows.append((label, f"{aside * 1e3:.2f} ms", "-"))
        rows.append((f"  (direct p50 {d50 * 1e3:.2f} ms, p99 {d99 * 1e3:.2f} ms)", "", ""))
    return rows


def proxy_rows(baseline: str | None = None, latency_only: bool = False) -> list[Row]:
    """(label, value, target) rows: the proxy against direct calls (and, given `baseline`,
    that checkout's proxy in the same rounds)."""
    rows: list[Row] = []
    body = json.dumps(REQUEST).encode()
    with Upstream() as upstream, tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "bench.sqlite"
        started = [_start_proxy(upstream.url, store)]
        urls = {"direct": f"{upstream.url}/v1/messages", "proxy": f"{started[0][1]}/v1/messages"}
        try:
            if baseline:
                started.append(_start_proxy(upstream.url, Path(folder) / "base.sqlite", baseline))
                urls["baseline"] = f"{started[1][1]}/v1/messages"
            with httpx2.Client(timeout=30) as client:
                rows += _latency_rows(client, urls, started[0][0].pid)
            clients, total = PARALLEL
            for name, url in urls.items():
                rate = _parallel(url, body, clients, total)
                label = f"{name}: requests per second, {clients} clients"
                rows.append((label, f"{rate:,.0f}", "-"))
            if not latency_only:
                agent = json.dumps(AGENT_REQUEST).encode()  # the agents' real size
                rows += _memory_rows(started[0][0], urls["proxy"], store, agent)
        finally:
            for process, _ in started:
                process.send_signal(signal.SIGTERM)
                process.wait(30)
    return rows


def _memory_rows(
    process: subprocess.Popen[str], proxied: str, store: Path, body: bytes
) -> list[Row]:
    with httpx2.Client(timeout=30) as client:
        for _ in range(WARMUP):
            _call(client, proxied, body)
        before, stored_before = _rss(process.pid), _store_size(store)
        for _ in range(MEMORY_CALLS):
            _call(client, proxied, body)
        after = _rss(process.pid)
    time.sleep(3.0)  # the last exchanges reach the store
    per_request = (_store_size(store) - stored_before) / MEMORY_CALLS
    growth = (after - before) / 2**20
    return [
        (f"proxy: store bytes per request ({len(body):,} B body)", f"{per_request:,.0f} B", "-"),
        (f"proxy: memory growth over {MEMORY_CALLS:,} requests", f"{growth:.1f} MB", "<= 50 MB"),
    ]


def proxy_table(rows: list[tuple[str, str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"{'proxy against direct calls':<{width}}  {'value':>10}  target", "-" * (width + 30)]
    lines += [f"{label:<{width}}  {value:>10}  {target}" for label, value, target in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="DIR", help="another checkout, measured beside")
    parser.add_argument("--latency-only", action="store_true", help="skip the memory rows")
    arguments = parser.parse_args()
    print(proxy_table(proxy_rows(arguments.baseline, arguments.latency_only)))
