"""`python -m dtl_notebook emulator`: the offline provider emulator in the foreground.

It serves Anthropic Messages, OpenAI Responses (HTTP and its WebSocket transport) and Chat
Completions on loopback, emulated, not an LLM: a real agent pointed at it, directly or
through `python -m dtl_notebook proxy`, runs its turns with no key and no network.
"""

from __future__ import annotations

import argparse
import sys

from dtl_notebook.live.agent_settings import settings_lines
from dtl_notebook.live.emulator import PATHS
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.live.http_server import wait_until_stopped
from dtl_notebook.wire.providers import spec

DEFAULT_PORT = 8789  # beside the proxy's 8788
# each API's title in the banner, by the shape of the provider served at the path
TITLES = {
    "messages": "Messages",
    "responses": "Responses (HTTP and WebSocket)",
    "chat": "Chat Completions",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")


def banner(url: str) -> list[str]:
    """What the command prints once it serves: its URL first (a script waits for that
    line), the endpoints, then how to point each agent at it."""
    lines = [f"dtl_notebook emulator on {url} (emulated, not an LLM; any key is taken)"]
    lines += [
        f"  {TITLES[spec(provider).shape]:<31} {url}{path}" for path, provider in PATHS.items()
    ]
    lines.append("The proxy in front of it (then give the agents the proxy's URL instead):")
    lines.append(
        f"  python -m dtl_notebook proxy --upstream-anthropic {url} --upstream-openai {url}"
    )
    lines.append("Agents pointed here (any OPENAI_API_KEY / ANTHROPIC_API_KEY value):")
    return lines + settings_lines(url) + ["Ctrl-C stops it."]


def run(args: argparse.Namespace) -> None:
    try:
        server = EmulatorServer(host=args.host, port=args.port).start()
    except (OSError, ValueError) as exc:
        sys.exit(f"emulator: {exc}")
    print("\n".join(banner(server.url)), flush=True)
    try:
        wait_until_stopped()
    finally:
        server.stop()
