"""Calibrate the Claude and OpenAI token estimates against input tokens the APIs reported.

Prints, per real recorded request with tools, the `model_context` total against the reported input
(input + cache_read + cache_creation), the median and 90th-percentile absolute error, then refits
the constants of `dtl_notebook/context/data/calibration.json` by least squares on relative error
(in-sample, and leave-one-conversation-out so the figure is not only a fit to itself).
The OpenAI part does the same for per-message framing, the function-section framing and the
client tool-search prompt (function definitions count as the declarations the model sees).
Last, the error per kind of request (`calibrate_kinds.table`).
Run: `python benchmarks/calibrate.py` from the repository root.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.calibrate_kinds import table
from dtl_notebook.context import model_context
from dtl_notebook.context.calibration import anthropic_tool_prompt, calibration
from dtl_notebook.context.model import FRAMED_KINDS
from dtl_notebook.context.tokens import get_encoding
from tests.usage_pairs import (
    UsagePair,
    calibration_pairs,
    openai_calibration_pairs,
    openai_pairs,
    summary,
)

OPENAI_PARAMETERS = ("per_message", "functions_end", "client_tool_search_prompt")
PARAMETERS = ("factor", "unpublished auto", "unpublished any", "per_block", "bm25", "regex")


def features(pair: UsagePair) -> tuple[list[float], float]:
    """(the linear features of one request, its published tool-prompt tokens)."""
    ctx = model_context(pair.body, provider="anthropic")
    encoding = get_encoding("o200k_base")
    raw = sum(len(encoding.encode_ordinary(s.text)) for s in ctx if s.kind != "hidden")
    choice = str((pair.body.get("tool_choice") or {}).get("type", "auto"))
    forced = choice in ("any", "tool")
    kinds = [str(t.get("type", "")) for t in pair.body.get("tools") or []]
    published = anthropic_tool_prompt(pair.body["model"], choice)[0] or 0
    return [
        raw,
        float(not forced),
        float(forced),
        sum(1 for s in ctx if s.kind in FRAMED_KINDS),
        float(any(k.startswith("tool_search_tool_bm25") for k in kinds)),
        float(any(k.startswith("tool_search_tool_regex") for k in kinds)),
    ], published


def fit(rows: list[list[float]], targets: list[float]) -> np.ndarray:
    x, y = np.array(rows), np.array(targets)
    weights = 1 / y
    coefficients, *_ = np.linalg.lstsq(x * weights[:, None], y * weights, rcond=None)
    return coefficients


def main() -> list[float]:
    """The Claude tool-run fit; returns its leave-one-conversation-out signed errors (%)."""
    pairs = calibration_pairs()
    print(f"{'request':70} predicted reported  error")
    for p in pairs:
        print(f"{p.source[-70:]:70} {p.predicted():9,} {p.reported:8,} {100 * p.error():5.1f} %")
    median, p90 = summary(pairs)
    distinct = len({repr(p.body) for p in pairs})
    print(
        f"\nshipped constants: median |error| {median:.1f} %, p90 {p90:.1f} % "
        f"on {len(pairs)} requests ({distinct} distinct)"
    )
    shipped = calibration()["anthropic"]["fit"]
    print(
        f"calibration.json says: median {shipped['median_abs_error_pct']} %, "
        f"p90 {shipped['p90_abs_error_pct']} % on {shipped['requests']}"
    )

    rows, targets, groups = [], [], []
    for p in pairs:
        row, published = features(p)
        rows.append(row)
        targets.append(p.reported - published)
        groups.append(p.source.split(" [")[0].split("#")[0])
    coefficients = fit(rows, targets)
    pairs_text = (f"{n} {c:.2f}" for n, c in zip(PARAMETERS, coefficients, strict=True))
    print("\nrefit:", ", ".join(pairs_text))
    # Leave one conversation out, skipping those that alone carry a feature (the only
    # tool_choice "any" conversation, each tool-search request): nothing else can fit it.
    errors = []
    for group in dict.fromkeys(groups):
        train = [i for i, g in enumerate(groups) if g != group]
        test = [i for i, g in enumerate(groups) if g == group]
        seen = [any(rows[i][k] for i in train) for k in range(len(PARAMETERS))]
        if any(rows[i][k] and not seen[k] for i in test for k in range(len(PARAMETERS))):
            continue
        c = fit([rows[i] for i in train], [targets[i] for i in train])
        for i in test:
            published = pairs[i].reported - targets[i]
            predicted = float(np.dot(c, rows[i])) + published
            errors.append(100 * (predicted - pairs[i].reported) / pairs[i].reported)
    absolute = [abs(e) for e in errors]
    print(
        f"leave-one-conversation-out: median |error| {statistics.median(absolute):.1f} %, "
        f"max {max(absolute):.1f} % on {len(errors)} requests"
    )
    return errors


def openai_features(pair: UsagePair) -> tuple[list[float], float]:
    """(the fitted features of one OpenAI request, the tokens of everything not fitted)."""
    ctx = model_context(pair.body, provider=pair.provider)
    framed = sum(1 for s in ctx if s.kind in FRAMED_KINDS)
    per_message = calibration()["openai"]["per_message"]
    fixed = sum(s.tokens for s in ctx if s.kind != "hidden") - per_message * framed
    tools = pair.body.get("tools") or []
    client = any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in tools)
    return [framed, float(bool(tools)), float(client)], fixed


def openai_main() -> list[float]:
    """The OpenAI fit; returns its leave-one-conversation-out signed errors (%)."""
    every = openai_pairs()
    print(f"\nOpenAI\n{'request':70} predicted reported  error")
    for p in every:
        note = f"  (left out: {p.unmodelled[:40]}...)" if p.unmodelled else ""
        print(
            f"{p.source[-70:]:70} {p.predicted():9,} {p.reported:8,} {100 * p.error():5.1f} %{note}"
        )
    pairs = openai_calibration_pairs()
    median, p90 = summary(pairs)
    worst = max(100 * p.error() for p in pairs)
    print(f"\nshipped: median {median:.1f} %, p90 {p90:.1f} %, worst {worst:.1f} % on {len(pairs)}")
    every_tools = [p for p in every if p.with_tools]
    print(
        "with the left-out gpt-4o Responses recordings: median {:.1f} %, p90 {:.1f} % on {}".format(
            *summary(every_tools), len(every_tools)
        )
    )
    rows, targets, groups = [], [], []
    for p in pairs:
        row, fixed = openai_features(p)
        rows.append(row)
        targets.append(p.reported - fixed)
        groups.append(p.source.split(" (")[0].split(" [")[0])
    coefficients = fit(rows, targets)
    pairs_text = (f"{n} {c:.2f}" for n, c in zip(OPENAI_PARAMETERS, coefficients, strict=True))
    print("refit:", ", ".join(pairs_text))
    errors = []
    for group in dict.fromkeys(groups):
        train = [i for i, g in enumerate(groups) if g != group]
        seen = [any(rows[i][k] for i in train) for k in range(len(OPENAI_PARAMETERS))]
        test = [i for i, g in enumerate(groups) if g == group]
        if any(rows[i][k] and not seen[k] for i in test for k in range(len(OPENAI_PARAMETERS))):
            continue  # the only conversation with client tool search: nothing else can fit it
        c = fit([rows[i] for i in train], [targets[i] for i in train])
        for i in test:
            predicted = float(np.dot(c, rows[i])) + pairs[i].reported - targets[i]
            errors.append(100 * (predicted - pairs[i].reported) / pairs[i].reported)
    absolute = sorted(abs(e) for e in errors)
    print(
        f"leave-one-conversation-out: median |error| {statistics.median(absolute):.1f} %, "
        f"p90 {absolute[round(0.9 * (len(absolute) - 1))]:.1f} %, max {max(absolute):.1f} % "
        f"on {len(errors)} requests"
    )
    return errors


if __name__ == "__main__":
    table(main(), openai_main())
