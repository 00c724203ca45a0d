"""What exporting OpenTelemetry spans costs a request through the proxy.

Proxies (`python -m dtl_notebook proxy`) in front of the same loopback upstream as
benchmarks/proxy.py: one plain, one with `--otlp-endpoint` pointing at a collector on loopback
(a small OTLP/HTTP receiver that decodes each export and counts its spans; `--collector URL`
sends to a real one instead, e.g. Arize Phoenix), and a second plain one as a control: the
difference between the two plain proxies is the machine's noise. Direct calls and the three
proxies alternate, one at a time, from one keep-alive client, in rounds, the proxies' order
rotated each call. The table puts each proxy's added latency side by side (the median over
rounds of each round's percentile); the export's own cost is the exporting proxy's p50 less
the plain one's, round by round.

    python benchmarks/proxy_telemetry.py [--collector URL] [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

import httpx2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from proxy import REQUEST, Upstream, _call, _percentiles, _start_proxy
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dtl_notebook.live.http_server import ThreadedServer

CALLS = 200
ROUNDS = 5
TARGET_MS = 0.2


class Collector(ThreadedServer):
    """An OTLP/HTTP traces receiver that decodes every export and counts its spans."""

    def __init__(self) -> None:
        self.spans = 0
        super().__init__(Starlette(routes=[Route("/v1/traces", self._take, methods=["POST"])]))

    async def _take(self, request: Request) -> Response:
        export = ExportTraceServiceRequest.FromString(await request.body())
        self.spans += sum(len(s.spans) for r in export.resource_spans for s in r.scope_spans)
        return Response(b"", media_type="application/x-protobuf")


def _alternating(
    client: httpx2.Client, urls: dict[str, str], body: bytes, calls: int
) -> dict[str, list[float]]:
    """Samples per URL: direct first, then the proxies in turns, their order rotated each call
    (a call right after another proxy's shares the CPU with that proxy's analysis of it)."""
    samples: dict[str, list[float]] = {name: [] for name in urls}
    names, proxies = list(urls)[:1], list(urls)[1:]
    for k in range(calls):
        turn = k % len(proxies)
        order = [*names, *proxies[turn:], *proxies[:turn]]
        for name in order:
            samples[name].append(_call(client, urls[name], body))
    return samples


def _spans_seen(collector: Collector | None, expected: int) -> str:
    if collector is None:
        return "sent to the given collector"
    deadline = time.monotonic() + 30
    while collector.spans < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return f"{collector.spans:,} of {expected:,}"


def measure(collector_url: str | None, calls: int, rounds: int) -> list[tuple[str, str, str, str]]:
    """(label, plain proxy, exporting proxy, target) rows."""
    body = json.dumps(REQUEST).encode()
    own = Collector() if collector_url is None else None
    with Upstream() as upstream, tempfile.TemporaryDirectory() as folder:
        if own is not None:
            own.__enter__()
        endpoint = collector_url or (own.url if own else "")
        plain = _start_proxy(upstream.url, Path(folder) / "plain.sqlite")
        control = _start_proxy(upstream.url, Path(folder) / "control.sqlite")
        exporting = _start_proxy(
            upstream.url, Path(folder) / "otel.sqlite", extra=("--otlp-endpoint", endpoint)
        )
        urls = {
            "direct": f"{upstream.url}/v1/messages",
            "plain": f"{plain[1]}/v1/messages",
            "otel": f"{exporting[1]}/v1/messages",
            "control": f"{control[1]}/v1/messages",
        }
        try:
            with httpx2.Client(timeout=30) as client:
                _alternating(client, urls, body, 50)  # warm every path
                samples = [_alternating(client, urls, body, calls) for _ in range(rounds)]
        finally:
            for process, _ in (plain, exporting, control):
                process.send_signal(signal.SIGTERM)
                process.wait(60)
            seen = _spans_seen(own, 50 + calls * rounds)
            if own is not None:
                own.__exit__(None, None, None)
    per_round = [{name: _percentiles(got) for name, got in one.items()} for one in samples]

    def added(name: str, which: int, base: str = "direct") -> float:
        return statistics.median(r[name][which] - r[base][which] for r in per_round) * 1e3

    d50 = statistics.median(r["direct"][0] for r in per_round) * 1e3
    return [
        ("added latency, p50", f"{added('plain', 0):.3f} ms", f"{added('otel', 0):.3f} ms", "-"),
        ("added latency, p99", f"{added('plain', 1):.3f} ms", f"{added('otel', 1):.3f} ms", "-"),
        ("export's own cost, p50", "", f"{added('otel', 0, 'plain'):.3f} ms", f"<= {TARGET_MS} ms"),
        (
            "two plain proxies' difference, p50",
            f"{added('control', 0, 'plain'):.3f} ms",
            "",
            "noise",
        ),
        ("spans the collector decoded", "-", seen, "all"),
        (f"(direct p50 {d50:.2f} ms; {rounds} rounds of {calls} calls each)", "", "", ""),
    ]


def table(rows: list[tuple[str, str, str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    head = (
        f"{'proxy, OpenTelemetry export':<{width}}  {'plain':>10}  {'--otlp-endpoint':>15}  target"
    )
    lines = [head, "-" * len(head)]
    lines += [f"{a:<{width}}  {b:>10}  {c:>15}  {d}" for a, b, c, d in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collector", metavar="URL", help="a real OTLP/HTTP collector")
    parser.add_argument("--calls", type=int, default=CALLS, help="calls per path and round")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    arguments = parser.parse_args()
    print(table(measure(arguments.collector, arguments.calls, arguments.rounds)))
