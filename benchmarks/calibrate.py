"""Calibrate the Claude and OpenAI token estimates against input tokens the APIs reported.

Prints, per real recorded request the fit covers, the `model_context` total against the reported
input (input + cache_read + cache_creation), then refits the constants of
`dtl_notebook/context/data/calibration.json` by least squares on relative error:
- Claude: the o200k scale factors (JSON text, prose), the unpublished tool-use framing
  (tool_choice auto / any), the framing per system or message block and the tool-search
  prompts, on the tool runs and the requests without tools (the same framing and tokenizer
  hold for both);
- the structured-output prompt (a fixed instruction plus copies of the schema);
- the server-tool prompts, one per type and version, on first-call usage (`calibrate_server`);
- OpenAI: nothing fitted (framing per message, reply priming and function definitions follow
  the cookbook's published rule, `billing.json` "openai" "framing"); tool search's client and
  load prompts are derived per model family from recordings' differences
  (`calibrate_tool_search`).
Last, the error per kind of request with every request held out from the fit that predicts it
(`calibrate_kinds`). `--write` stores the refit constants and then, measured with them in a
fresh process, the per-kind bands the estimates show (`calibration.json` "bands"); it needs the
real recordings (../shared/fixtures/real), which the fit includes.
Run: `python benchmarks/calibrate.py [--write]` from the repository root.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.calibrate_kinds import (
    CALIBRATION,
    all_pairs,
    conversation,
    figures,
    fit,
    fixed_prompt_loco,
    held_out,
    kind_of,
    measure,
    structured_loco,
    table,
    write_bands,
)
from benchmarks.calibrate_server import server_fit, server_kinds, server_loco, server_pairs
from benchmarks.calibrate_tool_search import ABOUT as TOOL_SEARCH_ABOUT
from benchmarks.calibrate_tool_search import derivations as tool_search_derivations
from benchmarks.calibrate_tool_search import held_out as tool_search_held_out
from dtl_notebook.cache import analyze
from dtl_notebook.context import model_context
from dtl_notebook.context.calibration import (
    anthropic_tool_framing,
    anthropic_tool_prompt,
    calibration,
)
from dtl_notebook.context.content_rules import output_schema
from dtl_notebook.context.model import FRAMED_KINDS, ModelContext
from dtl_notebook.context.offline_encodings import get_encoding
from dtl_notebook.context.segments import Segment, dump
from dtl_notebook.context.tokens import encoding_for, looks_like_json
from tests.support.real_recordings import real_root
from tests.support.usage_pairs import UsagePair, followups, openai_calibration_pairs, openai_pairs

PARAMETERS = (
    "json_factor",
    "factor",
    "unpublished auto",
    "unpublished any",
    "per_block",
    "bm25",
    "regex",
)
FITTED_KINDS = ("anthropic_tools", "anthropic_plain")
THINKING = "extended-thinking instruction"


def fit_pairs() -> list[UsagePair]:
    """The Claude requests the framing fit covers: tool runs and requests without tools."""
    return [
        p
        for p in all_pairs()
        if p.provider == "anthropic"
        and p.comparable is not None
        and p.unmodelled is None
        and kind_of(p) in FITTED_KINDS
    ]


def features(pair: UsagePair) -> tuple[list[float], float]:
    """(the linear features of one Claude request, its published tool-prompt tokens)."""
    ctx = model_context(pair.body, provider="anthropic")
    choice = str((pair.body.get("tool_choice") or {}).get("type", "auto"))
    tools = bool(pair.body.get("tools"))  # no tools: no tool prompt, no tool framing
    published = (anthropic_tool_prompt(pair.body["model"], choice)[0] or 0) if tools else 0
    return _linear(ctx.segments, pair.body, tools), published


def anthropic_row(pair: UsagePair) -> list[float]:
    return features(pair)[0]


def prefix_row(ctx: ModelContext, cached: int, body: dict[str, Any]) -> list[float]:
    """The linear features (as `features`) of the first segments of `ctx` whose tokens add up
    to `cached`: the prefix a follow-up read from the cache. The tool-prompt features count
    where the prefix holds the hidden tool prompt."""
    prefix: list[Segment] = []
    total = 0
    for s in ctx.segments:
        if total + s.tokens > cached:
            break
        prefix.append(s)
        total += s.tokens
    tools = bool(body.get("tools")) and any(s.kind == "hidden" for s in prefix)
    return _linear(prefix, body, tools)


def _linear(segments: list[Segment], body: dict[str, Any], tools: bool) -> list[float]:
    """The linear features of `segments` of a Claude request: JSON and prose tokens (o200k),
    the tool prompt (auto or forced choice) where `tools`, framed segments, search tools."""
    encoding = get_encoding("o200k_base")
    texts = [s.text for s in segments if s.kind != "hidden"]
    json = sum(len(encoding.encode_ordinary(t)) for t in texts if looks_like_json(t))
    raw = sum(len(encoding.encode_ordinary(t)) for t in texts) - json
    forced = str((body.get("tool_choice") or {}).get("type", "auto")) in ("any", "tool")
    kinds = [str(t.get("type", "")) for t in body.get("tools") or []] if tools else []
    framed = tools and anthropic_tool_framing(str(body.get("model", "")))
    return [
        json,
        raw,
        float(framed and not forced),
        float(framed and forced),
        sum(1 for s in segments if s.kind in FRAMED_KINDS),
        float(any(k.startswith("tool_search_tool_bm25") for k in kinds)),
        float(any(k.startswith("tool_search_tool_regex") for k in kinds)),
    ]


def held_out_cached() -> list[float]:
    """Signed cached-token errors (%) on every follow-up that read the cache, each predicted
    with constants fitted without its own conversation: the Claude scale factors and framing
    enter the cached prefix linearly, so the held-out prediction is the analyzer's plus the
    prefix's features times (the fold's constants - the shipped ones). Nothing fitted enters
    an OpenAI prediction but the client tool-search prompt, which no cached follow-up carries."""
    shipped = np.array(shipped_anthropic())
    train = fit_pairs()
    errors = []
    for f in followups():
        group = f.source.split(" (")[0]
        change = np.zeros(len(shipped))
        if f.provider == "anthropic":
            fold = [p for p in train if conversation(p) != group]
            change = (
                fit(
                    [anthropic_row(p) for p in fold],
                    [p.reported - published_prompt(p) for p in fold],
                )
                - shipped
            )
        report = analyze(f.requests, provider=f.provider)
        for entry, body, (cached, _, _) in zip(report, f.requests, f.reported, strict=True):
            if entry.index and cached:
                row = prefix_row(entry.context, entry.cached_tokens, body)
                predicted = entry.cached_tokens + float(np.dot(change, row))
                errors.append(100 * (predicted - cached) / cached)
    return errors


def published_prompt(pair: UsagePair) -> float:
    return features(pair)[1]


def shipped_anthropic() -> list[float]:
    data = calibration()["anthropic"]
    return [
        float(data["json_factor"]),
        float(data["factor"]),
        float(data["tool_prompt_unpublished"]["auto"]),
        float(data["tool_prompt_unpublished"]["any"]),
        float(data["per_block"]),
        float(data["tool_search_prompt"]["tool_search_tool_bm25"]),
        float(data["tool_search_prompt"]["tool_search_tool_regex"]),
    ]


def print_openai() -> None:
    """Each OpenAI request against its reported input, then the tool-search derivations."""
    print(f"\nOpenAI\n{'request':70} predicted reported  error")
    for p in openai_calibration_pairs():
        print(f"{p.source[-70:]:70} {p.predicted():9,} {p.reported:8,} {100 * p.error():5.1f} %")
    for part, families in tool_search_derivations().items():
        for name, figure in families.items():
            print(f"tool search {part} {name}: {figure['tokens']} ({figure['derivation'][-60:]})")


def refit(
    pairs: list[UsagePair], row: Any, fixed: Any, names: tuple[str, ...], title: str
) -> np.ndarray:
    """Print each request against its reported input, then the refit constants."""
    print(f"\n{title}\n{'request':70} predicted reported  error")
    for p in pairs:
        print(f"{p.source[-70:]:70} {p.predicted():9,} {p.reported:8,} {100 * p.error():5.1f} %")
    c = fit([row(p) for p in pairs], [p.reported - fixed(p) for p in pairs])
    print("refit:", ", ".join(f"{n} {v:.2f}" for n, v in zip(names, c, strict=True)))
    return c


def structured_refit() -> tuple[float, float]:
    """(instruction, schema copies) of the structured-output prompt, on every such request."""
    rows, targets = [], []
    for p in all_pairs():
        if kind_of(p) != "anthropic_structured" or p.comparable is None:
            continue
        ctx = model_context(p.body, provider="anthropic")
        rest = sum(s.tokens for s in ctx if s.label != "structured-output prompt")
        schema = encoding_for("anthropic", p.body["model"]).count(dump(output_schema(p.body)))
        rows.append([1.0, float(schema)])
        targets.append(p.reported - rest)
    (instruction, copies), *_ = np.linalg.lstsq(np.array(rows), np.array(targets), rcond=None)
    return float(instruction), float(copies)


def thinking_refit() -> float:
    """The extended-thinking instruction: the mean of what usage shows beyond the rest."""
    gaps = []
    for p in all_pairs():
        if kind_of(p) == "anthropic_thinking" and p.comparable is not None and not p.with_tools:
            ctx = model_context(p.body, provider="anthropic")
            gaps.append(p.reported - sum(s.tokens for s in ctx if s.label != THINKING))
    return float(np.mean(gaps))


def held_out_errors() -> dict[str, float]:
    """Signed held-out errors (%) of every scored real request, by source."""
    pairs = [p for p in all_pairs() if p.comparable is not None]
    claude = [p for p in pairs if p.provider == "anthropic"]
    structured = [p for p in claude if kind_of(p) == "anthropic_structured"]
    # with tools the instruction is not added: those are predicted as tool runs
    thinking = [p for p in claude if kind_of(p) == "anthropic_thinking" and not p.with_tools]
    server = server_pairs()
    rest = [p for p in claude if p not in structured + thinking + server]
    errors = held_out(rest, fit_pairs(), anthropic_row, published_prompt, shipped_anthropic())
    errors.update(server_loco(server))
    errors.update(structured_loco(structured))
    errors.update(fixed_prompt_loco(thinking, THINKING))
    openai = [p for p in pairs if p.provider != "anthropic"]
    # nothing fitted enters an OpenAI prediction but the tool-search prompts, held out apart
    searching = [p for p in openai if kind_of(p) == "openai_tool_search"]
    errors.update({p.source: 100 * p.signed_error() for p in openai if p not in searching})
    errors.update(tool_search_held_out())
    return errors


def _in_sample(pairs: list[UsagePair], sources: list[str]) -> dict[str, Any]:
    """The fit section: its requests and in-sample figures (held out: the bands)."""
    f = figures([100 * p.signed_error() for p in pairs])
    return {
        "about": "in sample, on the requests the constants were fitted to; the figures the "
        "estimates show are the held-out ones per kind (bands)",
        "requests": f["requests"],
        "median_abs_error_pct": f["median"],
        "p90_abs_error_pct": f["p90"],
        "sources": sources,
    }


def write_constants(claude: np.ndarray) -> None:
    """Store the refit constants (rounded as they are used) in calibration.json."""
    data = json.loads(CALIBRATION.read_text())
    a = data["anthropic"]
    a["json_factor"] = round(float(claude[0]), 2)
    a["factor"] = round(float(claude[1]), 2)
    a["tool_prompt_unpublished"] = {"auto": round(claude[2]), "any": round(claude[3])}
    a["per_block"] = round(claude[4])
    a["tool_search_prompt"] = {
        "tool_search_tool_bm25": round(claude[5]),
        "tool_search_tool_regex": round(claude[6]),
    }
    a["fit"] = _in_sample(fit_pairs(), a["fit"]["sources"])
    o = data["openai"]
    o["tool_search"] = {"about": TOOL_SEARCH_ABOUT, **tool_search_derivations()}
    CALIBRATION.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote the refit constants to {CALIBRATION.name}")


def write_prompts() -> None:
    """Store the structured-output and extended-thinking prompts, refit on top of the stored
    scale factors and framing, and OpenAI's in-sample figures (run in a fresh process after
    `write_constants`)."""
    data = json.loads(CALIBRATION.read_text())
    instruction, copies = structured_refit()
    data["anthropic"]["structured_output"] = {
        "instruction": round(instruction),
        "schema_copies": round(copies, 1),
    }
    data["anthropic"]["thinking_instruction"] = round(thinking_refit())
    o = data["openai"]  # in sample with the stored client tool-search prompt
    o["fit"] = _in_sample(openai_calibration_pairs(), o["fit"]["sources"])
    left_out = [p.source for p in openai_pairs() if p.excluded]
    if left_out:  # each with its reason in tests/data/openai_usage_pairs.json "unmodelled"
        o["fit"]["left_out"] = left_out
    CALIBRATION.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote the structured-output and thinking prompts to {CALIBRATION.name}")


def write_server_prompts() -> None:
    """Store the server-tool prompts, refit on top of everything else stored (a server-tool
    request with thinking carries the stored extended-thinking instruction: run in a fresh
    process after `write_prompts`)."""
    data = json.loads(CALIBRATION.read_text())
    pairs = server_pairs()
    data["anthropic"]["server_tool_prompt"] = {k: round(v) for k, v in server_fit(pairs).items()}
    scored = server_loco(pairs)  # the types the band was measured on, held out
    data["anthropic"]["server_tool_prompt_held_out"] = sorted(
        {k for p in pairs if p.source in scored for k in server_kinds(p)}
    )
    CALIBRATION.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote the server-tool prompts to {CALIBRATION.name}")


def main(argv: list[str]) -> None:
    if "--prompts" in argv:  # a fresh process: on top of the stored factors and framing
        write_prompts()
        return
    if "--server" in argv:  # a fresh process: on top of the stored thinking instruction
        write_server_prompts()
        return
    if "--bands" in argv:  # a fresh process: every figure measured with the stored constants
        measured = measure(held_out_errors(), held_out_cached())
        table(measured)
        write_bands(measured)
        return
    claude = refit(fit_pairs(), anthropic_row, published_prompt, PARAMETERS, "Claude")
    every = openai_pairs()
    left_out = [p for p in every if p.unmodelled]
    print(f"\nOpenAI: {len(left_out)} recorded requests left out (listed in the table, not scored)")
    print_openai()
    if "--write" not in argv:
        table(measure(held_out_errors(), held_out_cached()))
        return
    if real_root() is None:
        raise SystemExit(
            "--write needs the real recordings (../shared/fixtures/real): the fit uses them"
        )
    write_constants(claude)
    subprocess.run([sys.executable, __file__, "--prompts"], check=True)
    subprocess.run([sys.executable, __file__, "--server"], check=True)
    subprocess.run([sys.executable, __file__, "--bands"], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
