"""`%dtl proxy start|stop|status`: the cache-inspector proxy on a thread inside the kernel.

`start` serves the same `Proxy` as `python -m dtl_notebook proxy` and shows its live view;
point any agent at it (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL=<url>/v1`, a Codex model
provider), in this kernel or outside it. One proxy per kernel; `stop` ends it and finishes
storing what was forwarded.
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.core.error import UsageError

from dtl_notebook.live.agent_settings import PROVIDER_ID, codex_provider
from dtl_notebook.notebook.args import Parser, choice_of
from dtl_notebook.notebook.proxy_view import ProxyView
from dtl_notebook.proxy import Proxy, ProxyConfigError
from dtl_notebook.proxy.cli import DEFAULT_STORE
from dtl_notebook.proxy.config import DEFAULT_ANTHROPIC, DEFAULT_OPENAI, DEFAULT_PORT

ACTIONS = ("start", "stop", "status")
_START_ONLY = ("port", "store", "upstream_anthropic", "upstream_openai", "diagnostics")


def _port(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 65535, got {value!r}")
    return number


def add_proxy_parser(sub: Any) -> Parser:
    """The `proxy` subcommand's parser, added to `%dtl`'s subparsers."""
    text = "A local cache-inspector proxy in this kernel, with its live view."
    parser: Parser = sub.add_parser("proxy", help=text, description=text, prog="%dtl proxy")
    parser.add_argument("action", type=choice_of(ACTIONS), help=", ".join(ACTIONS))
    parser.add_argument("--port", type=_port, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    parser.add_argument("--store", help=f"SQLite file for the exchanges (default {DEFAULT_STORE})")
    parser.add_argument("--upstream-anthropic", metavar="ORIGIN", help=DEFAULT_ANTHROPIC)
    parser.add_argument("--upstream-openai", metavar="ORIGIN", help=DEFAULT_OPENAI)
    parser.add_argument(
        "--diagnostics",
        action="store_true",
        help="add the providers' cache-diagnostics request fields (the one edit it makes)",
    )
    return parser


class ProxyControl:
    """The kernel's one proxy and its view."""

    def __init__(self) -> None:
        self.proxy: Proxy | None = None
        self.view: ProxyView | None = None

    def run(self, args: argparse.Namespace) -> ProxyView | None:
        given = [f"--{n.replace('_', '-')}" for n in _START_ONLY if getattr(args, n)]
        if args.action != "start" and given:
            raise UsageError(f"%dtl proxy {args.action} takes no {', '.join(given)}")
        return {"start": self.start, "stop": self.stop, "status": self.status}[args.action](args)

    def start(self, args: argparse.Namespace) -> ProxyView:
        if self.proxy is not None and self.proxy.running:
            print(f"already {self.proxy.status()}; %dtl proxy stop first to change its settings")
            assert self.view is not None
            return self.view
        view = ProxyView()
        try:
            proxy = Proxy(
                store=args.store or DEFAULT_STORE,
                port=DEFAULT_PORT if args.port is None else args.port,
                listeners=[view],
                diagnostics=args.diagnostics,
                upstream_anthropic=args.upstream_anthropic or DEFAULT_ANTHROPIC,
                upstream_openai=args.upstream_openai or DEFAULT_OPENAI,
            )
            view.proxy = proxy
            proxy.start()
        except (ProxyConfigError, OSError, RuntimeError) as exc:
            view.close()
            raise UsageError(f"%dtl proxy start: {exc}") from None
        self.proxy, self.view = proxy, view
        view.refresh()
        upstreams = ", ".join(f"{k} → {v}" for k, v in proxy.config.upstreams.items())
        print(f"proxy on {proxy.url} ({upstreams}); store: {proxy.config.store}")
        print(f"  ANTHROPIC_BASE_URL={proxy.url}   OPENAI_BASE_URL={proxy.url}/v1")
        codex = codex_provider(f"{proxy.url}/v1")
        print(f"  Codex: codex -c model_provider={PROVIDER_ID} -c '{codex}'")
        if args.diagnostics:
            print("  --diagnostics: each request gets the provider's cache-diagnostics field")
        return view

    def stop(self, args: argparse.Namespace) -> None:
        proxy, view = self.proxy, self.view
        if proxy is None or not proxy.running:
            print("no proxy is running (%dtl proxy start)")
            return
        proxy.stop()
        if view is not None:
            view.close()
            view.refresh()
        stored = proxy.store_queue.stored if proxy.store_queue else 0
        print(f"proxy stopped: {stored} exchanges stored in {proxy.config.store}")

    def close(self) -> None:
        """Stop the proxy, if one runs (the extension is being unloaded)."""
        if self.proxy is not None and self.proxy.running:
            self.proxy.stop()
        if self.view is not None:
            self.view.close()
        self.proxy = self.view = None

    def status(self, args: argparse.Namespace) -> None:
        if self.proxy is None:
            print("no proxy is running (%dtl proxy start)")
            return
        print(f"proxy {self.proxy.status()}")
