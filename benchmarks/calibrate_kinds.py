"""The token estimate's error on real recorded requests, per kind of request, held out.

Every request is predicted by constants fitted without its own conversation (leave one
conversation out): the fitted constants enter a prediction linearly, so a held-out prediction
is the shipped one plus the request's features times (the fold's constants - the shipped
ones). A conversation that alone carries a fitted feature (the only `tool_choice: any` run,
each tool-search request) cannot be predicted by the others and is listed, not scored. A
server tool's loop is compared like with like: the first model call against the request as
sent; a usage that sums several calls without itemising them is listed, not scored.
Cached tokens: each follow-up that read the cache, the analyzer's prediction over the
conversation against the cached tokens reported, its conversation held out of the fit
(`calibrate.held_out_cached`).
Run: `python benchmarks/calibrate.py` (prints this table last; `--write` stores the bands).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dtl_notebook.context import model_context
from dtl_notebook.context.content_rules import output_schema
from dtl_notebook.context.request_kinds import KINDS, request_kind
from dtl_notebook.context.segments import dump
from dtl_notebook.context.tokens import encoding_for
from tests.support.usage_pairs import (
    UsagePair,
    embedded_pairs,
    followup_pairs,
    openai_pairs,
    sdk_pairs,
)

CALIBRATION = Path(__file__).resolve().parents[1] / "dtl_notebook/context/data/calibration.json"
Features = Callable[[UsagePair], list[float]]

#: the targets of the issue: median and 90th-percentile absolute input-token error per kind,
#: and the median cached-token error on follow-ups that read the cache
TARGET_MEDIAN_PCT, TARGET_P90_PCT, TARGET_CACHED_PCT = 5.0, 15.0, 5.0


def kind_of(pair: UsagePair) -> str:
    """The kind id of a pair (`request_kinds.KINDS`); a server loop is a server-tool request."""
    if pair.provider == "anthropic" and pair.calls > 1:
        return "anthropic_server_tools"
    return request_kind(pair.provider, pair.body) or "other"


def conversation(pair: UsagePair) -> str:
    return pair.source.split(" [")[0].split("#")[0].split(" (")[0]


def all_pairs() -> list[UsagePair]:
    """Every real pair: anth_sdk (where present), the embedded excerpts, the cached follow-ups."""
    return sdk_pairs() + embedded_pairs() + followup_pairs() + openai_pairs()


def fit(rows: list[list[float]], targets: list[float]) -> np.ndarray:
    """Least squares on relative error."""
    x, y = np.array(rows), np.array(targets)
    weights = 1 / y
    coefficients, *_ = np.linalg.lstsq(x * weights[:, None], y * weights, rcond=None)
    return coefficients


def held_out(
    pairs: list[UsagePair],
    train: list[UsagePair],
    features: Features,
    published: Callable[[UsagePair], float],
    shipped: list[float],
) -> dict[str, float]:
    """Signed held-out errors (%) of `pairs` by source: each conversation predicted by a fit
    to the `train` pairs of the other conversations. Unpredictable conversations are left out."""
    rows = {p.source: features(p) for p in {p.source: p for p in pairs + train}.values()}
    errors: dict[str, float] = {}
    for group in dict.fromkeys(conversation(p) for p in pairs):
        fold = [p for p in train if conversation(p) != group]
        mine = [p for p in pairs if conversation(p) == group]
        seen = [any(rows[p.source][k] for p in fold) for k in range(len(shipped))]
        if any(rows[p.source][k] and not seen[k] for p in mine for k in range(len(shipped))):
            continue  # nothing else carries this feature: no held-out fit exists
        c = fit([rows[p.source] for p in fold], [p.reported - published(p) for p in fold])
        for p in mine:
            reported = p.comparable
            assert reported is not None
            delta = float(np.dot(c - np.array(shipped), rows[p.source]))
            errors[p.source] = 100 * (p.predicted() + delta - reported) / reported
    return errors


def structured_loco(pairs: list[UsagePair]) -> dict[str, float]:
    """Refit the structured-output prompt (instruction + copies x schema tokens) without each
    conversation, and predict it: signed errors in percent by source."""
    rows, targets, groups = [], [], []
    for p in pairs:
        ctx = model_context(p.body, provider="anthropic")
        rest = sum(s.tokens for s in ctx if s.label != "structured-output prompt")
        counter = encoding_for("anthropic", p.body["model"])
        rows.append([1.0, float(counter.count(dump(output_schema(p.body))))])
        targets.append(p.reported - rest)
        groups.append(conversation(p))
    errors = {}
    for group in dict.fromkeys(groups):
        train = [i for i, g in enumerate(groups) if g != group]
        x, y = np.array([rows[i] for i in train]), np.array([targets[i] for i in train])
        (instruction, copies), *_ = np.linalg.lstsq(x, y, rcond=None)
        for i in (i for i, g in enumerate(groups) if g == group):
            hidden = math.ceil(copies * rows[i][1]) + round(instruction)
            predicted = pairs[i].reported - targets[i] + hidden
            errors[pairs[i].source] = 100 * (predicted - pairs[i].reported) / pairs[i].reported
    return errors


def fixed_prompt_loco(pairs: list[UsagePair], label: str) -> dict[str, float]:
    """A fixed hidden prompt (the segment named `label`) refit without each conversation as the
    mean of what the others' usage shows beyond the rest of their context: signed errors (%)."""
    gaps, rests = {}, {}
    for p in pairs:
        ctx = model_context(p.body, provider=p.provider)
        rests[p.source] = sum(s.tokens for s in ctx if s.label != label)
        gaps[p.source] = p.reported - rests[p.source]
    errors = {}
    for group in dict.fromkeys(conversation(p) for p in pairs):
        train = [gaps[p.source] for p in pairs if conversation(p) != group]
        if not train:
            continue  # one conversation alone: nothing else to fit it on
        size = round(statistics.mean(train))
        for p in (p for p in pairs if conversation(p) == group):
            errors[p.source] = 100 * (rests[p.source] + size - p.reported) / p.reported
    return errors


def percentile90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def figures(errors: list[float]) -> dict[str, Any]:
    """requests, median / p90 absolute and signed median error (%), or None where empty."""
    if not errors:
        return {"requests": 0, "median": None, "p90": None, "signed": None}
    absolute = [abs(e) for e in errors]
    return {
        "requests": len(errors),
        "median": round(statistics.median(absolute), 1),
        "p90": round(percentile90(absolute), 1),
        "signed": round(statistics.median(errors), 1),
    }


def _cell(value: float | None, signed: bool = False) -> str:
    if value is None:
        return f"{'—':>8}"
    return f"{value:+7.1f}%" if signed else f"{value:7.1f}%"


def measure(loco: dict[str, float], cached: list[float]) -> dict[str, Any]:
    """The per-kind figures, in sample and held out, and the held-out cached-token figures
    (`cached`: signed errors in percent, each conversation held out)."""
    pairs = all_pairs()
    kinds: dict[str, Any] = {}
    for kind, title in KINDS.items():
        mine = [p for p in pairs if kind_of(p) == kind]
        # a recording its data marks as outside the model (`excluded`, with the reason) is
        # listed, not scored
        scored = [p for p in mine if p.comparable is not None and not p.excluded]
        kinds[kind] = {
            "title": title,
            "in_sample": figures([100 * p.signed_error() for p in scored]),
            "held_out": figures([loco[p.source] for p in scored if p.source in loco]),
            "conversations": len({conversation(p) for p in scored if p.source in loco}),
            "not_scored": [
                p.source for p in mine if p.comparable is None or p.excluded or p.source not in loco
            ],
        }
    return {"kinds": kinds, "cached": figures(cached)}


def table(measured: dict[str, Any]) -> None:
    """Print the per-kind table: in sample, then held out (what the bands are)."""
    print(
        f"\n{'kind':64} {'n':>3} {'median':>8} {'p90':>8} {'signed':>8} |"
        f" {'held out':>8} {'median':>8} {'p90':>8} {'signed':>8}"
    )
    for row in measured["kinds"].values():
        a, b = row["in_sample"], row["held_out"]
        print(
            f"{row['title'][:64]:64} {a['requests']:3} {_cell(a['median'])} {_cell(a['p90'])}"
            f" {_cell(a['signed'], True)} | {b['requests']:8} {_cell(b['median'])}"
            f" {_cell(b['p90'])} {_cell(b['signed'], True)}"
        )
        for source in row["not_scored"]:
            print(f"  not scored: {source[-90:]}")
    c = measured["cached"]
    print(
        f"{'cached tokens on follow-ups that read the cache':64} {c['requests']:3}"
        f" {_cell(c['median'])} {_cell(c['p90'])} {_cell(c['signed'], True)}"
    )


def bands(measured: dict[str, Any]) -> dict[str, Any]:
    """The `bands` section of calibration.json: held-out figures per kind."""
    kinds = {}
    for kind, row in measured["kinds"].items():
        b = row["held_out"]
        kinds[kind] = {
            "title": row["title"],
            "requests": b["requests"],
            "conversations": row["conversations"],
            "median_abs_error_pct": b["median"],
            "p90_abs_error_pct": b["p90"],
            "signed_median_error_pct": b["signed"],
        }
    c = measured["cached"]
    return {
        "about": (
            "Written by benchmarks/calibrate.py --write, never by hand: per kind of request "
            "(dtl_notebook/context/request_kinds.py), the absolute input-token error on real "
            "recorded requests, each predicted by constants fitted without its own "
            "conversation (leave one conversation out); p90 is the band the estimate shows. "
            "A kind with no recordings has null figures: no measured band."
        ),
        "kinds": kinds,
        "cached_followups": {
            "requests": c["requests"],
            "median_abs_error_pct": c["median"],
            "p90_abs_error_pct": c["p90"],
            "signed_median_error_pct": c["signed"],
        },
    }


def write_bands(measured: dict[str, Any]) -> None:
    data = json.loads(CALIBRATION.read_text())
    data["bands"] = bands(measured)
    CALIBRATION.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote the bands to {CALIBRATION.name}")
