"""Cache-break findings on the generated ground-truth corpus, dtl_notebook beside promptcachelint.

Per later request of each case: a break is *found* when the truth has a cause and the tool
reports a break there; the *cause* is right when the code matches (dtl_notebook) or the peer's
code is the one for that kind of change (its vocabulary is coarser); the *place* is right when
the reported path lies under the truth's place (causes without a place count the cause);
a *false break* is one reported where the truth has none. Time: all requests of a case.

`python benchmarks/cache_findings.py [--cases N]` (what `make bench` runs).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cache_corpus import Case, cases

from dtl_notebook.cache import analyze

Prediction = tuple[str | None, str | None]  # (code or family, where) per later request

# the peer's codes for each kind of change (promptcachelint 0.1.0's documented list)
PEER_FAMILY = {
    "CL001": {"system_changed", "history_rewritten", "media_changed"},
    "CL002": {"tool_set_changed", "tool_order_changed"},
    "CL003": {
        "model_changed",
        "thinking_changed",
        "thinking_budget_changed",
        "effort_changed",
        "tool_choice_changed",
        "parallel_tool_use_changed",
        "reasoning_effort_changed",
        "parallel_tool_calls_changed",
        "text_format_changed",
        "verbosity_changed",
        "cache_key_changed",
    },
    "CL004": {"breakpoint_moved_back"},
    "CL006": {"expired"},
    "CL007": {"breakpoint_out_of_lookback"},
    "CL010": {"no_breakpoint"},
}
PEER_BREAKS = set(PEER_FAMILY) | {"CL005"}


def dtl(case: Case) -> list[Prediction]:
    times = case.times or None
    report = analyze(case.requests, provider=case.provider, times=times)
    out: list[Prediction] = []
    for entry in report.entries[1:]:
        brk = entry.cache_break
        if brk is None:
            out.append((None, None))
            continue
        where = brk.diff[0].path if brk.diff else brk.where
        out.append((str(brk.cause), where))
    return out


def peer(case: Case) -> list[Prediction]:
    import promptcachelint as pcl

    provider = "anthropic" if case.provider == "anthropic" else "openai"
    times = case.times or [float(i) for i in range(len(case.requests))]
    analyzer = pcl.Analyzer()
    out: list[Prediction] = []
    for i, body in enumerate(case.requests):
        record = pcl.Record(provider, body, at=1_000_000.0 + times[i], session_id=case.name)
        record.session_explicit = True
        report = analyzer.step(record)
        if i == 0:
            continue
        hits = [f for f in report.findings if f.code in PEER_BREAKS]
        out.append((hits[0].code, hits[0].path) if hits else (None, None))
    return out


def _path(where: str | None) -> str:
    return re.sub(r"\[(\d+)\]", r".\1", (where or "").split("@")[0]).strip(".")


def score(
    run: Callable[[Case], list[Prediction]], corpus: list[Case], exact: bool
) -> dict[str, float]:
    breaks = found = cause = place = quiet = false = 0
    times: list[float] = []
    for case in corpus:
        start = time.perf_counter()
        predicted = run(case)
        times.append(1000 * (time.perf_counter() - start))
        for (truth, at), (code, where) in zip(case.truth, predicted, strict=True):
            if truth is None:
                quiet += 1
                false += code is not None
                continue
            breaks += 1
            if code is None:
                continue
            found += 1
            right = code == truth if exact else truth in PEER_FAMILY.get(code, set())
            cause += right
            place += right and (at is None or _path(where).startswith(at))
    times.sort()
    return {
        "found": 100 * found / breaks,
        "cause": 100 * cause / breaks,
        "place": 100 * place / breaks,
        "false": 100 * false / max(quiet, 1),
        "median": statistics.median(times),
        "p90": times[int(0.9 * (len(times) - 1))],
        "max": times[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=3, help="cases per kind of change")
    args = parser.parse_args()
    corpus = cases(args.cases)
    pairs = sum(len(c.truth) for c in corpus)
    print(
        f"corpus: {len(corpus)} cases, {pairs} request pairs, "
        f"{sum(1 for c in corpus for t, _ in c.truth if t)} with a documented break"
    )
    for case in corpus[:2]:  # warm both (tokenizer load, imports)
        dtl(case), peer(case)
    rows = {"dtl_notebook": score(dtl, corpus, True), "promptcachelint": score(peer, corpus, False)}
    columns = ("found", "cause", "place", "false", "median", "p90", "max")
    print(f"{'':<16} " + " ".join(f"{c:>6}" for c in columns))
    for name, r in rows.items():
        print(
            f"{name:<16} {r['found']:>5.1f}% {r['cause']:>5.1f}% {r['place']:>5.1f}% "
            f"{r['false']:>5.1f}% {r['median']:>5.1f}ms {r['p90']:>4.0f}ms {r['max']:>4.0f}ms"
        )


if __name__ == "__main__":
    main()
