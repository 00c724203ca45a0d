"""`python -m dtl_notebook proxy`: the proxy in the foreground, one line per request."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass

from dtl_notebook.live.agent_settings import settings_lines
from dtl_notebook.live.http_server import wait_until_stopped
from dtl_notebook.live.telemetry import Telemetry, configured_telemetry
from dtl_notebook.proxy.config import (
    DEFAULT_ANTHROPIC,
    DEFAULT_OPENAI,
    DEFAULT_PORT,
    MAX_BODY_BYTES,
    ProxyConfigError,
)
from dtl_notebook.proxy.server import Proxy
from dtl_notebook.proxy.store_queue import Listener
from dtl_notebook.proxy.summary import Summary

DEFAULT_STORE = "dtl_proxy.sqlite"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--store", default=DEFAULT_STORE, help="SQLite file for the exchanges")
    parser.add_argument("--upstream-anthropic", default=DEFAULT_ANTHROPIC, metavar="ORIGIN")
    parser.add_argument(
        "--upstream-openai",
        default=DEFAULT_OPENAI,
        metavar="ORIGIN",
        help="any OpenAI-compatible server (vLLM, SGLang, Ollama, Kimi)",
    )
    parser.add_argument("--max-body", type=int, default=MAX_BODY_BYTES, metavar="BYTES")
    parser.add_argument(
        "--diagnostics",
        action="store_true",
        help="add the providers' cache-diagnostics request fields (the one edit it makes)",
    )
    parser.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="export one OpenTelemetry span per request over OTLP/HTTP to this collector "
        "(e.g. http://127.0.0.1:4318); the OTEL_EXPORTER_OTLP_* variables work too",
    )


# how long a thread may hold the interpreter while another waits for it (Python's default:
# 5 ms): the forwarding process's own threads (and, with --diagnostics, storing and analysing)
# make forwarding wait at most this
SWITCH_INTERVAL_S = 0.0002


@dataclass(frozen=True)
class TerminalSummary:
    """The terminal line per request and, where configured, a telemetry span each: built
    where the exchanges are recorded (the recorder's process, unless --diagnostics)."""

    otlp_endpoint: str | None

    def telemetry(self) -> Telemetry | None:
        return configured_telemetry(self.otlp_endpoint, service="dtl_notebook-proxy")

    def __call__(self) -> tuple[list[Listener], Callable[[], None]]:
        telemetry = self.telemetry()
        summary = Summary(lambda line: print(line, flush=True), telemetry)

        def close() -> None:
            summary.close()
            if telemetry is not None:
                telemetry.shutdown()  # what is still batched goes out

        return [summary], close


def run(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # this process is the proxy: forwarding first
    terminal = TerminalSummary(args.otlp_endpoint)
    try:
        telemetry = terminal.telemetry()  # here to check it, and to say so
    except ValueError as exc:
        sys.exit(f"proxy: --otlp-endpoint: {exc}")
    # --diagnostics edits requests against their conversation: recorded in this process
    listeners, close = terminal() if args.diagnostics else ([], lambda: None)
    try:
        proxy = Proxy(
            store=args.store,
            host=args.host,
            port=args.port,
            listeners=listeners,
            upstream_anthropic=args.upstream_anthropic,
            upstream_openai=args.upstream_openai,
            max_body=args.max_body,
            diagnostics=args.diagnostics,
            recorder_process=None if args.diagnostics else terminal,
        )
        proxy.start()
    except (ProxyConfigError, OSError) as exc:
        close()
        sys.exit(f"proxy: {exc}")
    print(f"dtl_notebook proxy on {proxy.url} -> {proxy.config.upstreams}", flush=True)
    print(f"  store: {args.store}   Ctrl-C stops it", flush=True)
    if telemetry is not None:
        telemetry.shutdown()
        print("  OpenTelemetry: one span per request, over OTLP/HTTP", flush=True)
    print("\n".join(["Agents pointed here:", *settings_lines(proxy.url)]), flush=True)
    if args.diagnostics:
        print(
            "  --diagnostics: each request gets the provider's cache-diagnostics field "
            "(Anthropic diagnostics, OpenAI prompt_cache_options) before it is forwarded",
            flush=True,
        )
    try:
        wait_until_stopped()
    finally:
        proxy.stop()
        close()
