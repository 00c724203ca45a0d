"""`python -m dtl_notebook`: the offline demo.

`--lab` opens JupyterLab on the tour notebook (what `make demo` runs); without it the demo
prints to the terminal, provider by provider. `python -m dtl_notebook proxy` runs the
cache-inspector proxy instead (`proxy --help`), `emulator` the offline provider emulator that
real agents can be pointed at (`emulator --help`); `audit FILE...`, `lint REQUEST.json` and
`codes` report cache findings (exit status 1 on a `--fail-on` code, for CI).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

TOUR = Path("notebooks") / "01_tour.ipynb"
_SERVERS = {"proxy": "dtl_notebook.proxy.cli", "emulator": "dtl_notebook.live.emulator.cli"}
_SERVER_HELP = {"proxy": "the cache-inspector proxy", "emulator": "the offline provider emulator"}


def lab(port: int) -> None:
    """Replace this process with JupyterLab on the tour, on localhost (it prints the URL)."""
    if not TOUR.is_file():
        sys.exit(f"{TOUR} not found: run this from the repository root")
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--LabApp.default_url=/lab/tree/{TOUR.as_posix()}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")
    print("Starting JupyterLab on", TOUR, "(offline, on the emulator); Ctrl-C stops it.")
    os.execv(sys.executable, argv)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dtl_notebook", description=__doc__)
    parser.add_argument("--lab", action="store_true", help="open the tour in JupyterLab")
    parser.add_argument("--port", type=int, default=8888, help="JupyterLab's port (--lab)")
    names = "{proxy,emulator,audit,lint,codes}"
    commands = parser.add_subparsers(dest="command", metavar=names)
    from dtl_notebook.cache import cli as findings_cli

    servers = {name: commands.add_parser(name, help=text) for name, text in _SERVER_HELP.items()}
    # the servers' modules (the HTTP stack, the SDK types) are imported only to run one:
    # the findings commands start in a fraction of a second
    named = _command(sys.argv[1:] if argv is None else argv)
    server = importlib.import_module(_SERVERS[named]) if named in _SERVERS else None
    if server is not None and named is not None:
        servers[named].description = server.__doc__
        server.add_arguments(servers[named])
    findings_cli.add_arguments(commands)
    args = parser.parse_args(argv)
    if server is not None and args.command == named:
        server.run(args)
        return
    if args.command in ("audit", "lint", "codes"):
        sys.exit(findings_cli.run(args))
    if args.lab:
        lab(args.port)
        return
    terminal()


def _command(argv: list[str]) -> str | None:
    """The subcommand named on a command line (the first word that is not an option)."""
    words = iter(argv)
    for word in words:
        if word == "--port":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def terminal() -> None:
    from dtl_notebook.demo import DEMO_MODELS, DEMO_TURNS, demo_session
    from dtl_notebook.live.agent import Agent

    session = demo_session()
    print(f"{len(session.registry)} tools registered, active: {session.active_tools}\n")
    for provider, model in DEMO_MODELS.items():
        agent = Agent(demo_session(), provider, model)
        print(f"== {provider} ({model}, emulated, not an LLM)")
        for turn in DEMO_TURNS:
            result = agent.run(turn)
            print(f"  user: {turn}")
            for step in result.steps:
                calls = ", ".join(c.name for c in step.reply.message.tool_calls) or "answer"
                loads = "; ".join(f"{lp.tools} at {lp.path}" for lp in step.request.load_points)
                brk = step.cache.cache_break
                print(
                    f"    {step.request.mode:>16}  {calls:<22} cached {step.cache.cached_tokens:>5}"
                    f"/{step.cache.total_tokens:<5}"
                    + (f"  cache break: {brk}" if brk else "")
                    + (f"  loads: {loads}" if loads and step is result.steps[-1] else "")
                )
            print(f"  model: {(result.text or result.stopped or '')[:110]}")
        print()


if __name__ == "__main__":
    main()
