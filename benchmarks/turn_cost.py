"""What one new turn costs: build + strict validation, model context, cache analysis.

Per mode, at 50 / 500 / 5,000 messages over a 10,000-tool registry, a session grows by one
user message per measured turn (and an assistant reply after it, untimed); each turn is built
and validated, turned into its model context, and fed to a CacheAnalyzer that saw the earlier
turns. Prints medians and p95 in milliseconds, the 5,000/500 ratio and whether each target is
met, then the search engines' query medians. `rows()` returns the same rows for other scripts.
Run with `PYTHONPATH=. python benchmarks/turn_cost.py` from the repository root (without it, an
installed `dtl_notebook` elsewhere may be the one measured).
"""

from __future__ import annotations

import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from dtl_notebook import Session
from dtl_notebook.agent import make_engine
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.context.model import model_context
from dtl_notebook.wire import build_request

sys.path.insert(0, str(Path(__file__).parent))
from results_table import load
from workloads import catalog, long_session

TOOLS = 10_000
SIZES = (50, 500, 5_000)
TURNS = 42  # measured turns per mode and size, in ROUNDS rounds
ROUNDS = 7
CLIENT_TARGET_MS, NATIVE_TARGET_MS, RATIO_TARGET = 5.0, 20.0, 1.2
# one query over 10,000 tools: BM25 scores in numpy; regex and keyword read compiled indexes
QUERY_TARGET_MS = {"bm25": 1.0, "regex": 2.0, "keyword": 2.0}
MODES: tuple[tuple[str, str, str, dict[str, Any], float], ...] = (
    ("anthropic tool_reference", "anthropic", "claude-opus-4-8", {}, CLIENT_TARGET_MS),
    (
        "responses additional_tools",
        "openai-responses",
        "gpt-5.4",
        {"load_mode": "additional_tools"},
        CLIENT_TARGET_MS,
    ),
    (
        "responses tool_search",
        "openai-responses",
        "gpt-5.4",
        {"load_mode": "tool_search"},
        CLIENT_TARGET_MS,
    ),
    ("openai-chat", "openai-chat", "gpt-5.4", {}, CLIENT_TARGET_MS),
    ("kimi", "kimi", "kimi-k2.5", {}, CLIENT_TARGET_MS),
    (
        "anthropic native-bm25",
        "anthropic",
        "claude-opus-4-8",
        {"search": "native-bm25"},
        NATIVE_TARGET_MS,
    ),
    ("responses hosted", "openai-responses", "gpt-5.4", {"search": "hosted"}, NATIVE_TARGET_MS),
)
Row = dict[str, Any]


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1e3, p95 * 1e3


def turn_samples(
    session: Session, provider: str, model: str, options: dict[str, Any], turns: int
) -> dict[str, list[float]]:
    """Seconds per stage of `turns` new turns appended to `session` (after two warm-up turns:
    the renderer and analyzer start from this session's own previous request)."""
    analyzer = CacheAnalyzer(provider)
    analyzer.add(build_request(session, provider, model, **options))  # the turn before
    stages: dict[str, list[float]] = {"build": [], "context": [], "analyze": [], "total": []}
    for k in range(turns + 2):
        session.user(f"next step {k}: check the order eta")
        t0 = time.perf_counter()
        request = build_request(session, provider, model, **options)
        t1 = time.perf_counter()
        context = model_context(request)
        t2 = time.perf_counter()
        analyzer.add(request, context=context)
        t3 = time.perf_counter()
        session.assistant(f"checked {k}")
        if k < 2:  # warm-up turns
            continue
        for stage, seconds in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
            stages[stage].append(seconds)
    return stages


def mode_rows(mode: int) -> list[Row]:
    """One mode's rows, one per size. The sizes take turns, ROUNDS times (50, 500, 5,000, 50,
    ...), so a slow spell of the machine weighs on every size alike; each round gives one
    median per size, and a row is met only when every round's median (and the 5,000/500
    ratio of every round) is within its target: the spread, not one lucky run."""
    label, provider, model, options, target = MODES[mode]
    tools = catalog(TOOLS)
    sessions = {n: long_session(tools, max(1, n // 4)) for n in SIZES}
    samples: dict[int, dict[str, list[float]]] = {n: {} for n in SIZES}
    round_totals: dict[int, list[float]] = {n: [] for n in SIZES}
    for _ in range(ROUNDS):
        for n, session in sessions.items():
            start = len(session.messages)
            stages = turn_samples(session, provider, model, options, TURNS // ROUNDS)
            del session.messages[start:]  # every round starts from one transcript
            for stage, seconds in stages.items():
                samples[n].setdefault(stage, []).extend(seconds)
            round_totals[n].append(statistics.median(stages["total"]) * 1e3)
    big, small = round_totals[SIZES[-1]], round_totals[500]
    ratios = [b / a for a, b in zip(small, big, strict=True)]
    out: list[Row] = []
    for n in SIZES:
        row: Row = {"mode": label, "messages": n, "target_ms": target}
        for stage, seconds in samples[n].items():
            row[f"{stage}_median_ms"], row[f"{stage}_p95_ms"] = _stats(seconds)
        row["spread_ms"] = (min(round_totals[n]), max(round_totals[n]))
        row["ratio"] = statistics.median(ratios) if n == SIZES[-1] else None
        row["ratio_spread"] = (min(ratios), max(ratios)) if n == SIZES[-1] else None
        row["met"] = max(round_totals[n]) <= target and (
            row["ratio_spread"] is None or max(ratios) <= RATIO_TARGET
        )
        out.append(row)
    return out


def query_rows() -> list[Row]:
    """One row per search engine: one query over the 10,000-tool registry."""
    tools = [t.spec() for t in catalog(TOOLS)]
    out: list[Row] = []
    for name, query in (("bm25", "shipping eta order"), ("regex", "ship.*eta"), ("keyword", "eta")):
        engine = make_engine(name)
        engine.index(tools)
        samples = []
        for _ in range(50):
            start_time = time.perf_counter()
            engine.search(query, 5)
            samples.append(time.perf_counter() - start_time)
        median, p95 = _stats(samples)
        out.append(
            {
                "mode": f"{name} query",
                "messages": None,
                "target_ms": QUERY_TARGET_MS[name],
                "total_median_ms": median,
                "total_p95_ms": p95,
                "met": p95 <= QUERY_TARGET_MS[name],
            }
        )
    return out


def rows() -> list[Row]:
    """Every mode's rows, each mode in a fresh process (nothing one mode kept in its memos
    helps or burdens the next), then the search engines' rows."""
    out: list[Row] = []
    for mode in range(len(MODES)):
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as fresh:
            out.extend(fresh.submit(mode_rows, mode).result())
    return out + query_rows()


def table(results: list[Row]) -> str:
    """The rows as a fixed-width text table."""
    head = (
        f"{'mode':28} {'msgs':>5}  {'build+validate':>15} {'model_context':>15} "
        f"{'analyze':>15} {'total':>15} {'ratio':>6}  target"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        if r["messages"] is None:
            cell = f"{r['total_median_ms']:7.3f} /{r['total_p95_ms']:7.3f}"
            verdict = f"<= {r['target_ms']} ms: {'met' if r['met'] else 'MISSED'}"
            lines.append(
                f"{r['mode']:28} {'':>5}  {'':>15} {'':>15} {'':>15} {cell:>15} {'':>6}  {verdict}"
            )
            continue
        cells = [
            f"{r[f'{s}_median_ms']:7.2f} /{r[f'{s}_p95_ms']:7.2f}"
            for s in ("build", "context", "analyze", "total")
        ]
        ratio = ""
        if r["ratio"] is not None:
            low, high = r["ratio_spread"]
            ratio = f"{r['ratio']:.2f} ({low:.2f}-{high:.2f})"
        verdict = f"<= {r['target_ms']:g} ms" + (f", <= {RATIO_TARGET}x" if ratio else "")
        lines.append(
            f"{r['mode']:28} {r['messages']:>5}  "
            + " ".join(f"{c:>15}" for c in cells)
            + f" {ratio:>6}  {verdict}: {'met' if r['met'] else 'MISSED'}"
        )
    return "\n".join(lines) + (
        f"\n(each cell: median / p95 in ms; ratio: median of {ROUNDS} rounds (lowest-highest);"
        " met: every round within the target)"
    )


def main() -> None:
    before = load()
    text = table(rows())
    print(text)
    print(f"machine: {before} before, {load()} after")


if __name__ == "__main__":
    main()
