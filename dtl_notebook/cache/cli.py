"""`python -m dtl_notebook audit | lint | codes`: cache findings from a terminal and in CI.

`audit FILE...` reads captures (HAR, JSONL, SDK pairs, the proxy's SQLite store) and reports
every finding per provider; `--fail-on` takes codes or a severity, a threshold as in a
linter (`warning` fails on warnings and errors), comma-separated. `lint REQUEST.json` checks
one request body. `codes` lists the vocabulary. `--json` prints machine-readable output.
Exit status: 0 clean, 1 a --fail-on finding, 2 bad input (the file and the field named).

Each command imports only what it runs: `codes` reads the finding table alone, and none of
them loads the SDKs' types or the JSON Schema validator before it needs them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtl_notebook.cache.codes import CODES
from dtl_notebook.cache.fail_on import FailOnError, failing_codes

if TYPE_CHECKING:
    from dtl_notebook.cache.conversation import ConversationFindings
    from dtl_notebook.cache.findings import Finding

BAD_INPUT = 2


class BadInput(ValueError):
    """A command line or input file the commands cannot take; names the file and field."""


def add_arguments(commands: Any) -> None:
    """The three subcommands, on an argparse subparsers object."""
    fail_help = "codes, or a severity: fail on it and anything more severe"
    audit = commands.add_parser("audit", help="cache findings in captured traffic")
    audit.add_argument("files", nargs="+", metavar="FILE")
    audit.add_argument("--json", action="store_true", help="machine-readable output")
    audit.add_argument("--fail-on", default="", metavar="CODES", help=fail_help)
    check = commands.add_parser("lint", help="static cache checks of one request body")
    check.add_argument("request", metavar="REQUEST.json")
    check.add_argument("--provider", help="default: detected from the body")
    check.add_argument("--json", action="store_true")
    check.add_argument("--fail-on", default="", metavar="CODES", help=fail_help)
    listing = commands.add_parser("codes", help="the finding codes")
    listing.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    """Run a parsed subcommand; returns the exit status."""
    if args.command == "codes":
        return _codes(args.json)
    try:
        failing = failing_codes(args.fail_on, "--fail-on")
        groups = _audit(args.files) if args.command == "audit" else [_lint(args)]
    except (BadInput, FailOnError) as error:
        return _bad(str(error))
    if args.json:
        print(json.dumps([_group_json(g) for g in groups], indent=2))
    else:
        _print(groups)
    return 1 if any(f.code in failing for g in groups for f in g.findings) else 0


def _audit(files: list[str]) -> list[ConversationFindings]:
    from dtl_notebook.cache.stream_audit import audit_stream

    groups = []
    for path in files:
        with _named(path):
            groups += audit_stream(path)
    return groups


def _lint(args: argparse.Namespace) -> ConversationFindings:
    from dtl_notebook.cache.capture import request_file
    from dtl_notebook.cache.capture_request import detect_provider
    from dtl_notebook.cache.conversation import ConversationFindings
    from dtl_notebook.cache.lint import lint
    from dtl_notebook.wire.modes import PROVIDERS

    if args.provider is not None and args.provider not in PROVIDERS:
        known = ", ".join(PROVIDERS)
        raise BadInput(f"--provider: unknown provider {args.provider!r} (one of {known})")
    with _named(args.request):
        payload = request_file(args.request)
        provider = args.provider or detect_provider(payload, None)
        found = lint(payload, provider)
    return ConversationFindings(f"{args.request} [{provider}]", found)


@contextmanager
def _named(path: str) -> Iterator[None]:
    """Bad input met while reading `path` (a CaptureError is a ValueError) becomes BadInput
    naming the file."""
    try:
        yield
    except (OSError, ValueError, TypeError, RecursionError) as error:
        if isinstance(error, OSError):
            text = f"{path}: cannot read: {error.strerror or error}"
        elif isinstance(error, RecursionError):
            text = f"{path}: nested too deep to read"
        else:
            text = str(error)
        if not text.startswith(path) and Path(path).name not in text:
            text = f"{path}: {text}"
        raise BadInput(text) from None


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return BAD_INPUT


def _group_json(group: ConversationFindings) -> dict[str, Any]:
    return {
        "conversation": group.name,
        "hit_ratio": round(group.hit_ratio, 4),
        "hit_ratio_reported": group.reported,
        "findings": [f.to_dict() for f in group.findings],
        "left_out": group.left_out,
    }


def _codes(as_json: bool) -> int:
    if as_json:
        rows = [
            {
                "code": c.code,
                "severity": c.severity,
                "kind": c.kind,
                "invalidates": list(c.invalidates),
                "message": c.message,
                "fix": c.fix,
                "fix_by_capability": dict(c.fixes),
                "expected": c.expected,
            }
            for c in CODES.values()
        ]
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("code", "severity", "invalidates", "meaning", "fix", title="finding codes")
    for c in CODES.values():
        table.add_row(c.code, c.severity, ", ".join(c.invalidates) or "-", c.message, c.fix)
    Console().print(table)
    return 0


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _print(groups: list[ConversationFindings]) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    for group in groups:
        ratio = f"hit ratio {100 * group.hit_ratio:.0f}%"
        ratio += " (reported)" if group.reported else " (predicted)"
        console.print(f"[bold]{escape(group.name or '')}[/bold]  {ratio}")
        if not group.findings:
            console.print("  no findings")
        for f in group.findings:
            console.print(_line(f), highlight=False)
        for left in group.left_out:
            console.print(f"  [dim]left out: {escape(left)}[/dim]", highlight=False)


def _line(f: Finding) -> str:
    from rich.markup import escape

    at = f"#{f.index} " if f.index is not None else ""
    where = f" at {f.where}" if f.where else ""
    what = f" ({', '.join(f.involved)})" if f.involved else ""
    style = _STYLE[f.severity]
    text = escape(f"{f.message}{what}{where}")
    return f"  {at}[{style}]{f.code}[/{style}] {text}\n      fix: {escape(f.fix)}"
