"""The cache workload's tables (text for the terminal, markdown for RESULTS.md)."""

from __future__ import annotations

import os
import platform
import sys
from datetime import date
from typing import Any

COLUMNS = (
    ("strategy", "strategy", "{}"),
    ("requests", "requests", "{:,}"),
    ("first_tokens", "first-request tokens", "{:,}"),
    ("input_tokens", "total input tokens", "{:,}"),
    ("uncached_tokens", "uncached tokens", "{:,}"),
    ("retention_bytes", "retention (bytes)", "{:.1%}"),
    ("retention_analyzer", "retention (analyzer)", "{:.1%}"),
    ("breaks_bytes", "breaks (bytes)", "{}"),
    ("breaks_analyzer", "breaks (analyzer)", "{}"),
    ("breaks_raw_bytes", "breaks (raw bytes)", "{}"),
    ("request_bytes", "request bytes", "{:,}"),
    ("refused", "refused calls", "{}"),
    ("emulator", "cached: predicted vs emulator", "{}"),
    ("flag", "disagreement", "{}"),
)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({cpu}), Python {sys.version.split()[0]}, "
        f"{platform.system()}, {date.today().isoformat()}"
    )


def load() -> str:
    """The machine's load average (1 and 5 minutes), printed beside every timed table: a
    figure measured while something else ran says so."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def markdown(title: str, rows: list[dict[str, Any]]) -> str:
    head = "| " + " | ".join(c[1] for c in COLUMNS) + " |"
    rule = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(fmt.format(r[key]) for key, _, fmt in COLUMNS) + " |" for r in rows]
    return "\n".join([f"### {title}", "", head, rule, *body, ""])
