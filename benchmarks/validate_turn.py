"""Validation cost of one new turn: `validate_payload` on request N+1 after request N.

Run with `.venv/bin/python benchmarks/validate_turn.py` (10,000 registered tools, 500 and 5,000
messages, anthropic default and openai-responses `load_mode="additional_tools"`).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import catalog, long_session

from dtl_notebook.wire import build_request, validate_payload

MODES = (
    ("anthropic", "claude-opus-4-8", {}),
    ("openai-responses", "gpt-5.4", {"load_mode": "additional_tools"}),
)


def one_turn_timings(messages: int, repeat: int = 21) -> list[tuple[str, float, float, int]]:
    tools = catalog(10_000)
    session = long_session(tools, messages // 4)
    rows = []
    for provider, model, options in MODES:
        runs = []
        for i in range(repeat):
            previous = build_request(session, provider, model, validate=False, **options)
            validate_payload(previous.payload, provider)
            session.user(f"one more {i}")
            current = build_request(session, provider, model, validate=False, **options)
            start = time.perf_counter()
            validate_payload(current.payload, provider)
            runs.append(time.perf_counter() - start)
            session.messages.pop()
        runs.sort()
        p95 = runs[min(len(runs) - 1, round(0.95 * (len(runs) - 1)))]
        size = len(current.payload.get("messages") or current.payload.get("input") or [])
        rows.append((provider, statistics.median(runs) * 1000, p95 * 1000, size))
    return rows


def main() -> None:
    print(f"{'messages':>8}  {'provider':<17} {'items':>6} {'median ms':>10} {'p95 ms':>8}")
    for messages in (500, 5_000):
        for provider, median, p95, size in one_turn_timings(messages):
            print(f"{messages:>8}  {provider:<17} {size:>6} {median:>10.2f} {p95:>8.2f}")


if __name__ == "__main__":
    main()
