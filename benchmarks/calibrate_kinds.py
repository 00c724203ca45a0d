"""The token estimate's error on real recorded requests, per kind of request.

Each kind gets: requests, median and 90th-percentile absolute input-token error, the signed
median (negative: the estimate is low), and where a kind's own constants are fitted, the same
figures leave-one-conversation-out (each conversation predicted by a fit to the others).
A server tool's loop is compared like with like: the first model call against the request as
sent; a usage that sums several calls without itemising them is listed, not scored.
Run: `python benchmarks/calibrate.py` (prints this table last).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

import numpy as np

from dtl_notebook.context import model_context
from dtl_notebook.context.content_rules import output_schema, server_tool_prompt
from dtl_notebook.context.segments import dump
from dtl_notebook.context.tokens import encoding_for
from tests.usage_pairs import UsagePair, embedded_pairs, openai_pairs, sdk_pairs

KINDS = (
    "Anthropic tool runs",
    "Anthropic structured output",
    "Anthropic thinking",
    "Anthropic images and documents",
    "Anthropic server tools",
    "Anthropic short prompts",
    "OpenAI tool runs",
    "OpenAI reasoning and hosted tools",
    "OpenAI gpt-4o Responses (left out: unexplained usage)",
)


def _blocks(pair: UsagePair) -> set[str]:
    kinds = set()
    for message in pair.body.get("messages") or pair.body.get("input") or []:
        content = message.get("content") if isinstance(message, dict) else None
        kinds.add(str(message.get("type", "")) if isinstance(message, dict) else "")
        for block in content if isinstance(content, list) else []:
            kinds.add(str(block.get("type", "")) if isinstance(block, dict) else "")
    return kinds


def kind_of(pair: UsagePair) -> str:
    """The kind of request a pair belongs to (its rows in the table)."""
    tools = [str(t.get("type", "")) for t in pair.body.get("tools") or []]
    blocks = _blocks(pair)
    if pair.provider != "anthropic":
        if pair.excluded:
            return KINDS[8]
        hosted = any(
            t.get("type") not in ("function", "namespace", None)
            and not (t.get("type") == "tool_search" and t.get("execution") == "client")
            for t in pair.body.get("tools") or []
        )
        return KINDS[7] if hosted or "reasoning" in blocks else KINDS[6]
    if any(server_tool_prompt(t)[1] for t in tools) or pair.calls > 1:
        return KINDS[4]
    if output_schema(pair.body) is not None:
        return KINDS[1]
    if pair.body.get("thinking") or blocks & {"thinking", "redacted_thinking"}:
        return KINDS[2]
    if blocks & {"image", "document"}:
        return KINDS[3]
    return KINDS[0] if tools else KINDS[5]


def figures(errors: list[float]) -> str:
    if not errors:
        return f"{'—':>8} {'—':>8} {'—':>8}"
    absolute = sorted(abs(e) for e in errors)
    p90 = absolute[min(len(absolute) - 1, round(0.9 * (len(absolute) - 1)))]
    median = statistics.median(absolute)
    return f"{median:7.1f}% {p90:7.1f}% {statistics.median(errors):+7.1f}%"


def conversation(pair: UsagePair) -> str:
    return pair.source.split(" [")[0].split("#")[0].split(" (")[0]


def structured_loco(pairs: list[UsagePair]) -> list[float]:
    """Refit the structured-output prompt (instruction + copies x schema tokens) without each
    conversation, and predict it: signed errors in percent."""
    rows, targets, groups = [], [], []
    for p in pairs:
        ctx = model_context(p.body, provider="anthropic")
        rest = sum(s.tokens for s in ctx if s.label != "structured-output prompt")
        counter = encoding_for("anthropic", p.body["model"])
        rows.append([1.0, float(counter.count(dump(output_schema(p.body))))])
        targets.append(p.reported - rest)
        groups.append(conversation(p))
    errors = []
    for group in dict.fromkeys(groups):
        train = [i for i, g in enumerate(groups) if g != group]
        x, y = np.array([rows[i] for i in train]), np.array([targets[i] for i in train])
        (instruction, copies), *_ = np.linalg.lstsq(x, y, rcond=None)
        for i in (i for i, g in enumerate(groups) if g == group):
            hidden = math.ceil(copies * rows[i][1]) + round(instruction)
            predicted = pairs[i].reported - targets[i] + hidden
            errors.append(100 * (predicted - pairs[i].reported) / pairs[i].reported)
    return errors


FITTED: dict[str, Callable[[list[UsagePair]], list[float]]] = {KINDS[1]: structured_loco}


def table(loco_claude: list[float], loco_openai: list[float]) -> None:
    """Print the per-kind table, with the tool-run fits' leave-one-out signed errors."""
    pairs = sdk_pairs() + embedded_pairs() + openai_pairs()
    print(f"\n{'kind':56} {'requests':>8} {'median':>8} {'p90':>8} {'signed':>8} | LOCO")
    for kind in KINDS:
        mine = [p for p in pairs if kind_of(p) == kind]
        scored = [p for p in mine if p.comparable is not None]
        errors = [100 * p.signed_error() for p in scored]
        loco = FITTED[kind](scored) if kind in FITTED and scored else None
        loco = {KINDS[0]: loco_claude, KINDS[6]: loco_openai}.get(kind, loco)
        tail = figures(loco) if loco is not None else "(nothing fitted to this kind alone)"
        print(f"{kind:56} {len(scored):8} {figures(errors)} | {tail}")
        for p in mine:
            if p.comparable is None:
                print(f"  not scored: {p.source[-60:]}: usage sums {p.calls} model calls")
    print(
        f"{'cached tokens on follow-ups that read the cache':56} {0:8} "
        "(no recording here pairs a request with a reported cache read)"
    )
