"""The `%dtl` command line: one argparse parser per subcommand, each with `--session`."""

from __future__ import annotations

import argparse

from dtl_notebook.notebook.args import Parser, bounded_int, choice_of, session_name
from dtl_notebook.notebook.proxy_commands import add_proxy_parser
from dtl_notebook.wire.modes import PROVIDERS


def command_parser() -> tuple[Parser, dict[str, Parser]]:
    """The `%dtl` parser and its subcommands' parsers, by name."""
    root = Parser(prog="%dtl", add_help=True, description="Look inside an agent session.")
    sub = root.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=Parser)
    parsers: dict[str, Parser] = {}

    def add(name: str, help_text: str) -> Parser:
        parser = sub.add_parser(name, help=help_text, description=help_text, prog=f"%dtl {name}")
        parser.add_argument(
            "--session", default="agent", type=session_name, help="Agent name (default: agent)"
        )
        parsers[name] = parser
        return parser

    add("tools", "The registry: active tools marked with where they entered.").add_argument(
        "query", nargs="?", help="Only tools whose name or description contains this"
    )
    p = add("search", "Run the session's search engine without activating anything.")
    p.add_argument("query", nargs="+", metavar="QUERY")
    p.add_argument("--limit", type=bounded_int(1, 50), default=10, help="Hits to show, 1 to 50")
    add("activate", "Activate tools outside a tool run (writes no load point).").add_argument(
        "names", nargs="+", metavar="NAME"
    )
    p = add("provider", "Switch provider: the same session, re-serialized.")
    p.add_argument("provider", type=choice_of(PROVIDERS), help=", ".join(PROVIDERS))
    p.add_argument("--model")
    add("compare", "The current session serialized for all four providers, side by side.")
    add("show", "Show one request (default: the newest) in the view.").add_argument(
        "step", nargs="?", type=request_number, help="Request number, from 1"
    )
    p = add("diff", "Diff two requests (A B), or one request on two providers (N P1 P2).")
    p.add_argument("items", nargs="+", help="A B | N PROVIDER PROVIDER")
    add("inspect", "Show a captured request log (JSONL) of any agent.").add_argument(
        "path", metavar="PATH"
    )
    add("save", "Save the session as JSON.").add_argument("path", metavar="PATH")
    add("load", "Load a session written by the save subcommand.").add_argument(
        "path", metavar="PATH"
    )
    add("export", "Write the whole session to one self-contained HTML file.").add_argument(
        "path", metavar="PATH"
    )
    add("reset", "Start the session afresh on the demo catalog.")
    add("status", "What is warm in the cache and for how long, hit rate and money, keep-warm.")
    parsers["proxy"] = add_proxy_parser(sub)
    return root, parsers


def request_number(value: str) -> int:
    """An argparse type: a request's number (the session checks that it has it)."""
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"must be a request number from 1, got {value!r}")
    return int(value)
