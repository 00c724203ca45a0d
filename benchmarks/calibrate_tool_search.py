"""OpenAI tool search's own prompts, per model family, derived from recordings' differences.

OpenAI publishes no size for what tool search adds. Two parts show in real usage:
- the client prompt: on a conversation's first request (a client `tool_search` declared, nothing
  searched yet), what usage shows beyond the rest of the model context;
- the load prompt: at the first `tool_search_output` (or `additional_tools`) item, what the
  reported input grew by beyond what the added items count: (reported after the load - reported
  before it) - (counted after - counted before).
Each recorded conversation gives both for its model's family; the shipped figures are these
derivations (`calibration.json` "openai" "tool_search"), never fitted across families. Held
out, a conversation is predicted with the mean of the other families' figures (a family with
one recording has nothing else of its own). Used by `benchmarks/calibrate.py`.
"""

from __future__ import annotations

import statistics
from typing import Any

from dtl_notebook.context import model_context
from dtl_notebook.context.render_openai import CLIENT_SEARCH_PROMPT, LOAD_PROMPT
from tests.support.usage_pairs import UsagePair, openai_pairs

PARTS = {"client_prompt": CLIENT_SEARCH_PROMPT, "load_prompt": LOAD_PROMPT}
_LOAD_ITEMS = ("tool_search_output", "additional_tools")


def family(model: str) -> str:
    """The family a recording measures: its model name without a date suffix."""
    name = model.strip().lower()
    head, _, tail = name.rpartition("-")
    return head if tail.isdigit() and len(tail) == 8 else name


def client_search(pair: UsagePair) -> bool:
    tools = pair.body.get("tools") or []
    return any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in tools)


def _loaded(pair: UsagePair) -> bool:
    return any(i.get("type") in _LOAD_ITEMS for i in pair.body.get("input") or [])


def conversations() -> dict[str, list[UsagePair]]:
    """The client tool-search recordings, by conversation, in request order."""
    grouped: dict[str, list[UsagePair]] = {}
    for p in openai_pairs():
        if client_search(p) and not p.excluded:
            grouped.setdefault(p.source.split(" [")[0].split(" (")[0], []).append(p)
    return grouped


def _rest(pair: UsagePair) -> int:
    """The pair's model context without the tool-search prompts."""
    ctx = model_context(pair.body, provider=pair.provider)
    return sum(s.tokens for s in ctx if s.label not in PARTS.values())


def _short(pair: UsagePair) -> str:
    """The recording and request a figure comes from, e.g. '... .yaml [5]'."""
    head = pair.source.split(" (")[0].split(" [")[0]
    return f"{head} [{pair.source.rsplit('[', 1)[-1]}"


def derive(pairs: list[UsagePair]) -> dict[str, dict[str, Any]]:
    """Both parts for one conversation: tokens and the arithmetic that gives them."""
    first = pairs[0]
    client = first.reported - _rest(first)
    parts = {
        "client_prompt": {
            "tokens": client,
            "derivation": f"{_short(first)}: reported {first.reported} - {_rest(first)} "
            f"counted for the rest = {client}",
        }
    }
    load = next((p for p in pairs if _loaded(p)), None)
    if load is not None:
        grew, counted = load.reported - first.reported, _rest(load) - _rest(first)
        parts["load_prompt"] = {
            "tokens": grew - counted,
            "derivation": f"{_short(load)}: reported {load.reported} - {first.reported} = {grew} "
            f"grown, its added items counted {counted}: {grew} - {counted} = {grew - counted}",
        }
    return parts


def derivations() -> dict[str, dict[str, dict[str, Any]]]:
    """part -> family -> {tokens, derivation}: what `calibration.json` ships."""
    shipped: dict[str, dict[str, dict[str, Any]]] = {part: {} for part in PARTS}
    for pairs in conversations().values():
        for part, figure in derive(pairs).items():
            shipped[part][family(pairs[0].body["model"])] = figure
    return shipped


def held_out() -> dict[str, float]:
    """Signed errors (%) by source: each conversation predicted with the mean of the other
    families' figures in place of its own."""
    shipped = derivations()
    errors = {}
    for pairs in conversations().values():
        mine = family(pairs[0].body["model"])
        for p in pairs:
            ctx = model_context(p.body, provider=p.provider)
            predicted = float(sum(s.tokens for s in ctx))
            for part, label in PARTS.items():
                others = [f["tokens"] for k, f in shipped[part].items() if k != mine]
                used = sum(s.tokens for s in ctx if s.label == label)
                if used and others:
                    predicted += statistics.mean(others) - used
            errors[p.source] = 100 * (predicted - p.reported) / p.reported
    return errors


ABOUT = (
    "OpenAI publishes no size for what tool search adds. Per model family (the longest "
    "listed prefix of the model name; an unlisted family takes the mean of the listed ones, "
    "and its estimate says so), each figure is derived from one recorded conversation's "
    "differences by benchmarks/calibrate_tool_search.py, never fitted across families: "
    "client_prompt, on the first request (a client tool_search declared, nothing searched "
    "yet), is the reported input minus everything else counted; it is negative on gpt-5.4, "
    "whose first request bills less than the deferred functions' names and descriptions "
    "counted up front (33 tokens), so there it corrects that count. load_prompt, added once at "
    "the first tool_search_output or additional_tools item (the load point, at the end of the "
    "context), is what the reported input grew by beyond what the added items count; the next "
    "request of the gpt-5.4-mini conversation grows by 48 reported for 42 counted, so the step "
    "is once per conversation's first load. additional_tools and namespaces declared without "
    "a load have no recording of their own: additional_tools takes the load figure, a "
    "namespace alone none. Hosted search (execution server) runs its search inside the "
    "request: its usage covers a server-side loop (dtl_notebook/context/server_loop.py)."
)
