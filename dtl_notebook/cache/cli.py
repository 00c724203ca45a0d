"""`python -m dtl_notebook audit | lint | codes`: cache findings from a terminal and in CI.

`audit FILE...` reads captures (HAR, JSONL, SDK pairs, the proxy's SQLite store) and reports
every finding per provider; `--fail-on CODES` (comma-separated codes, or a severity: `error`,
`warning`, `info`) makes the exit status 1 when one is found. `lint REQUEST.json` checks one
request body. `codes` lists the vocabulary. `--json` prints machine-readable output. Exit
status: 0 clean, 1 a --fail-on finding, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dtl_notebook.cache.audit import audit_capture
from dtl_notebook.cache.capture import CaptureError
from dtl_notebook.cache.codes import CODES
from dtl_notebook.cache.conversation import ConversationFindings, conversation_findings
from dtl_notebook.cache.findings import Finding
from dtl_notebook.cache.lint import lint
from dtl_notebook.wire.modes import PROVIDERS

SEVERITIES = ("error", "warning", "info")


def add_arguments(commands: Any) -> None:
    """The three subcommands, on an argparse subparsers object."""
    audit = commands.add_parser("audit", help="cache findings in captured traffic")
    audit.add_argument("files", nargs="+", metavar="FILE")
    audit.add_argument("--json", action="store_true", help="machine-readable output")
    audit.add_argument("--fail-on", default="", metavar="CODES", help="codes or severities")
    check = commands.add_parser("lint", help="static cache checks of one request body")
    check.add_argument("request", metavar="REQUEST.json")
    check.add_argument("--provider", choices=PROVIDERS, help="default: detected")
    check.add_argument("--json", action="store_true")
    check.add_argument("--fail-on", default="", metavar="CODES", help="codes or severities")
    listing = commands.add_parser("codes", help="the finding codes")
    listing.add_argument("--json", action="store_true")


def fail_set(text: str) -> set[str]:
    """The codes a --fail-on value names; an unknown one exits with status 2."""
    wanted: set[str] = set()
    for name in filter(None, (p.strip() for p in text.split(","))):
        if name in SEVERITIES:
            wanted |= {c for c, e in CODES.items() if e.severity == name}
        elif name in CODES:
            wanted.add(name)
        else:
            raise SystemExit(_bad(f"--fail-on: unknown code {name!r} (see `codes`)"))
    return wanted


def run(args: argparse.Namespace) -> int:
    """Run a parsed subcommand; returns the exit status."""
    if args.command == "codes":
        return _codes(args.json)
    failing = fail_set(args.fail_on)
    try:
        groups = _audit(args.files) if args.command == "audit" else _lint(args)
    except (CaptureError, OSError, ValueError, TypeError) as error:
        return _bad(str(error))
    if args.json:
        print(json.dumps([_group_json(g) for g in groups], indent=2))
    else:
        _print(groups)
    return 1 if any(f.code in failing for g in groups for f in g.findings) else 0


def _audit(files: list[str]) -> list[ConversationFindings]:
    groups = []
    for path in files:
        audit = audit_capture(path)
        for provider, report in audit.reports.items():
            requests = audit.requests(provider)
            groups.append(conversation_findings(report, requests, name=f"{path} [{provider}]"))
    return groups


def _lint(args: argparse.Namespace) -> list[ConversationFindings]:
    from dtl_notebook.cache.capture import detect_provider

    with open(args.request, encoding="utf-8") as f:
        payload = json.load(f)
    if not isinstance(payload, dict):
        raise ValueError(f"{args.request}: a request body must be a JSON object")
    provider = args.provider or detect_provider(payload, None)
    return [ConversationFindings(f"{args.request} [{provider}]", lint(payload, provider))]


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _group_json(group: ConversationFindings) -> dict[str, Any]:
    return {
        "conversation": group.name,
        "hit_ratio": round(group.hit_ratio, 4),
        "hit_ratio_reported": group.reported,
        "findings": [f.to_dict() for f in group.findings],
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


def _line(f: Finding) -> str:
    from rich.markup import escape

    at = f"#{f.index} " if f.index is not None else ""
    where = f" at {f.where}" if f.where else ""
    what = f" ({', '.join(f.involved)})" if f.involved else ""
    style = _STYLE[f.severity]
    text = escape(f"{f.message}{what}{where}")
    return f"  {at}[{style}]{f.code}[/{style}] {text}\n      fix: {escape(f.fix)}"
