"""What a turn costs in a user's own loop: `build_request` + `model_context`, no Agent.

The library use without the agent loop: a fresh process that never builds an Agent (so no
warm-up, no rehearsal), one session per size over a 10,000-tool registry, each turn one user
message, its request built and validated and its model context rendered (then a reply,
untimed). Per mode: the median at 500 and 5,000 messages, their ratio in every round (client
modes: <= 1.2x in each), and for the server-search modes the multiple of the same provider's
client turn (<= 10x).
Run with `PYTHONPATH=. python benchmarks/plain_api.py` from the repository root.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from turn_cost import MODES, RATIO_TARGET, ROUNDS, TOOLS, TURNS
from workloads import catalog, long_session

from dtl_notebook import Session
from dtl_notebook.context.model import model_context
from dtl_notebook.wire import build_request

SIZES = (500, 5_000)
SERVER_MULTIPLE_TARGET = 10.0
CLIENT_OF = {  # a server-search mode and the client turn of the same provider it is held to
    "anthropic native-bm25": "anthropic tool_reference",
    "responses hosted": "responses additional_tools",
}
Row = dict[str, Any]


def _turns(session: Session, provider: str, model: str, options: dict[str, Any]) -> list[float]:
    """Seconds per turn of TURNS // ROUNDS turns in a user's loop (after two untimed ones)."""
    samples = []
    for k in range(TURNS // ROUNDS + 2):
        session.user(f"next step {k}: check the order eta")
        start = time.perf_counter()
        model_context(build_request(session, provider, model, **options))
        seconds = time.perf_counter() - start
        session.assistant(f"checked {k}")
        if k >= 2:
            samples.append(seconds)
    return samples


def measure() -> list[Row]:
    """The rows, measured in this process (see `rows` for a fresh one)."""
    tools = catalog(TOOLS)
    sessions = {n: long_session(tools, n // 4) for n in SIZES}
    medians: dict[tuple[str, int], float] = {}
    ratios: dict[str, list[float]] = {}
    for label, provider, model, options, _ in MODES:
        samples: dict[int, list[float]] = {n: [] for n in SIZES}
        per_round: dict[int, list[float]] = {n: [] for n in SIZES}
        for _ in range(ROUNDS):  # 500 and 5,000 alternate: a slow spell weighs on both
            for n, session in sessions.items():
                start = len(session.messages)
                turns = _turns(session, provider, model, options)
                del session.messages[start:]
                samples[n] += turns
                per_round[n].append(statistics.median(turns))
        for n in SIZES:
            medians[label, n] = statistics.median(samples[n]) * 1e3
        small, big = per_round[SIZES[0]], per_round[SIZES[-1]]
        ratios[label] = [b / a for a, b in zip(small, big, strict=True)]
    out = []
    for label, *_ in MODES:
        row: Row = {"mode": label, **{f"ms_{n}": medians[label, n] for n in SIZES}}
        row["ratio"] = statistics.median(ratios[label])
        row["ratio_spread"] = (min(ratios[label]), max(ratios[label]))
        client = CLIENT_OF.get(label)
        if client is None:
            row["multiple"] = None
            row["met"] = max(ratios[label]) <= RATIO_TARGET  # every round, not the median
        else:
            row["multiple"] = max(medians[label, n] / medians[client, n] for n in SIZES)
            row["met"] = row["multiple"] <= SERVER_MULTIPLE_TARGET
        out.append(row)
    return out


def rows() -> list[Row]:
    """The rows, measured in a fresh process that never builds an Agent."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(measure).result()


def table(results: list[Row]) -> str:
    head = (
        f"{'mode (build_request + model_context)':38} {'500 msgs':>9} {'5,000':>9} "
        f"{'ratio (lowest-highest)':>22}"
    )
    lines = [head + "  target", "-" * (len(head) + 30)]
    for r in results:
        if r["multiple"] is None:
            verdict = f"5,000/500 <= {RATIO_TARGET}x"
        else:
            verdict = f"{r['multiple']:.1f}x the client turn, <= {SERVER_MULTIPLE_TARGET:g}x"
        low, high = r["ratio_spread"]
        ratio = f"{r['ratio']:.2f} ({low:.2f}-{high:.2f})"
        lines.append(
            f"{r['mode']:38} {r['ms_500']:9.2f} {r['ms_5000']:9.2f} {ratio:>22}  "
            f"{verdict}: {'met' if r['met'] else 'MISSED'}"
        )
    return "\n".join(lines) + "\n(medians in ms, a fresh process without an Agent)"


if __name__ == "__main__":
    print(table(rows()))
