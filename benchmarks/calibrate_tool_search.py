"""OpenAI tool search's own prompts, per mode and model family, from recordings' differences.

OpenAI publishes no size for what tool search adds. Three parts show in real usage, each the
reported input minus everything else the model context counts (`openai_tool_search`):
- the client or hosted prompt, on a conversation's first request (a `tool_search` declared,
  nothing loaded yet);
- the load prompt, on the first request whose input loads tools (`tool_search_output` or
  `additional_tools`), less the search prompt where it is still rendered: for a conversation
  whose first request has both, the difference between that request and the next load is the
  same arithmetic, (reported after - reported before) - (counted after - counted before).
Each recorded conversation gives the parts it shows for its model's family; a family's figure
is the mean over its conversations (`calibration.json` "openai" "tool_search"), never fitted
across families. Held out, a conversation is predicted with the mean of the other conversations
of its family, or where it is its family's only one, of the other families; a request carrying a
part no other conversation shows (the hosted prompt: one recording) is listed, not scored. Used by
`benchmarks/calibrate.py`.
"""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.calibrate_kinds import kind_of
from dtl_notebook.context import model_context
from dtl_notebook.context.openai_tool_search import (
    CLIENT_SEARCH_PROMPT,
    HOSTED_SEARCH_PROMPT,
    LOAD_ITEMS,
    LOAD_PROMPT,
)
from tests.support.usage_pairs import UsagePair, openai_pairs

PARTS = {
    "client_prompt": CLIENT_SEARCH_PROMPT,
    "hosted_prompt": HOSTED_SEARCH_PROMPT,
    "load_prompt": LOAD_PROMPT,
}
Figures = dict[str, dict[str, dict[str, Any]]]


def family(model: str) -> str:
    """The family a recording measures: its model name without a date suffix."""
    name = model.strip().lower()
    head, _, tail = name.rpartition("-")
    return head if tail.isdigit() and len(tail) == 8 else name


def client_search(pair: UsagePair) -> bool:
    tools = pair.body.get("tools") or []
    return any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in tools)


def _loaded(pair: UsagePair) -> bool:
    return any(i.get("type") in LOAD_ITEMS for i in pair.body.get("input") or [])


def conversations() -> dict[str, list[UsagePair]]:
    """The tool-search recordings, by conversation, in request order."""
    grouped: dict[str, list[UsagePair]] = {}
    for p in openai_pairs():
        if kind_of(p) == "openai_tool_search" and not p.excluded:
            grouped.setdefault(p.source.split(" [")[0].split(" (")[0], []).append(p)
    return grouped


def _split(pair: UsagePair) -> tuple[int, dict[str, int]]:
    """(the model context without the tool-search prompts, each such prompt it renders)."""
    ctx = model_context(pair.body, provider=pair.provider)
    prompts = {part: s.tokens for part, label in PARTS.items() for s in ctx if s.label == label}
    return sum(s.tokens for s in ctx if s.label not in PARTS.values()), prompts


def _short(pair: UsagePair) -> str:
    """The recording and request a figure comes from, e.g. '... .yaml [5]'."""
    head = pair.source.split(" (")[0].split(" [")[0]
    return f"{head} [{pair.source.rsplit('[', 1)[-1]}"


def derive(pairs: list[UsagePair]) -> dict[str, dict[str, Any]]:
    """The parts one conversation shows: tokens and the arithmetic that gives them."""
    parts: dict[str, dict[str, Any]] = {}
    first = pairs[0]
    rest, rendered = _split(first)
    gap = first.reported - rest
    search = next((part for part in rendered if part != "load_prompt"), None)
    if search is not None and not _loaded(first):
        said = f"{_short(first)}: reported {first.reported} - {rest} counted for the rest"
        parts[search] = {"tokens": gap, "derivation": f"{said} = {gap}"}
    load = next((p for p in pairs if _loaded(p)), None)
    if load is None or (search is not None and search not in parts):
        return parts
    rest, rendered = _split(load)
    still = {k: parts[k]["tokens"] for k in rendered if k in parts}
    size = load.reported - rest - sum(still.values())
    less = "".join(f" - {v} ({k} still rendered)" for k, v in still.items())
    parts["load_prompt"] = {
        "tokens": size,
        "derivation": f"{_short(load)}: reported {load.reported} - {rest} counted for the rest"
        f"{less} = {size}",
    }
    return parts


def _by_family(derived: dict[str, dict[str, dict[str, Any]]]) -> Figures:
    """part -> family -> {tokens (the mean over the family's conversations), derivation}."""
    shipped: Figures = {part: {} for part in PARTS}
    for name, parts in derived.items():
        for part, figure in parts.items():
            model = name.split("|")[0]
            mine = shipped[part].setdefault(family(model), {"tokens": [], "derivation": []})
            mine["tokens"].append(figure["tokens"])
            mine["derivation"].append(figure["derivation"])
    for families in shipped.values():
        for figure in families.values():
            values = figure["tokens"]
            figure["tokens"] = round(statistics.mean(values))
            mean = f"; the mean of {len(values)} conversations" if len(values) > 1 else ""
            figure["derivation"] = "; ".join(figure["derivation"]) + mean
    return shipped


def _derived() -> dict[str, dict[str, dict[str, Any]]]:
    """'model|conversation' -> the parts that conversation shows."""
    return {f"{pairs[0].body['model']}|{k}": derive(pairs) for k, pairs in conversations().items()}


def derivations() -> Figures:
    """part -> family -> {tokens, derivation}: what `calibration.json` ships."""
    return _by_family(_derived())


def held_out() -> dict[str, float]:
    """Signed errors (%) by source: each conversation predicted with the other conversations'
    figures (its family's where there are others, else the other families')."""
    derived = _derived()
    errors = {}
    for key, pairs in zip(derived, conversations().values(), strict=True):
        mine = family(key.split("|")[0])
        others = {k: v for k, v in derived.items() if k != key}
        same = {k: v for k, v in others.items() if family(k.split("|")[0]) == mine}
        for p in pairs:
            rest, rendered = _split(p)
            predicted = float(rest)
            for part in rendered:
                pool = same if any(part in v for v in same.values()) else others
                values = [v[part]["tokens"] for v in pool.values() if part in v]
                if not values:  # no other conversation shows it: listed, not scored
                    break
                predicted += statistics.mean(values)
            else:
                errors[p.source] = 100 * (predicted - p.reported) / p.reported
    return errors


ABOUT = (
    "OpenAI publishes no size for what tool search adds. Per mode and model family (the "
    "longest listed prefix of the model name; an unlisted family takes the mean of the listed "
    "ones, and its estimate says so), each figure is the reported input minus everything else "
    "counted, derived per recorded conversation by benchmarks/calibrate_tool_search.py (the "
    "arithmetic below), the mean over a family's conversations, never fitted across families. "
    "client_prompt and hosted_prompt: on the first request, a tool_search declared and nothing "
    "loaded yet. client_prompt is negative on gpt-5.4, whose first request bills less than the "
    "deferred functions' names and descriptions counted up front, so there it corrects that "
    "count. hosted_prompt is rendered only while something is left to search: once every "
    "deferred function is loaded, neither the search, its prompt nor the deferred summaries "
    "are (dtl_notebook/context/openai_tool_search.py). load_prompt: added once, at the first "
    "tool_search_output or additional_tools item (the load point, at the end of the context), "
    "less the search prompt where it is still rendered. The two gpt-5.6 conversations give 92 "
    "each, one loading with a hosted search declared (exhausted), one without any tool "
    "declared; the next request of the gpt-5.4-mini conversation grows by 48 reported for 42 "
    "counted, so the step is once. A namespace declared without a load has no recording of its "
    "own. A hosted search that ran inside the request makes its usage cover a server-side loop "
    "(dtl_notebook/context/server_loop.py): such a request is not a derivation's."
)
