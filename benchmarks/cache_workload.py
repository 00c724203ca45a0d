"""The cache workload: one 40-turn conversation that discovers 12 tools, run under every
strategy side by side, on the demo catalog and on a 2,000-tool catalog.

Strategies: every dtl deferred mode, Chat's full-list resend, Kimi, and the bridge (a fixed
tool_search + call_tool pair) on both; all tools up front;
per-step top-k rebinding and accumulate-top-k (langgraph-bigtool style); and pydantic-ai's own
tool search (`pydantic_peer.py`). Figures come from the request bytes (prefix_metrics) and are
cross-checked against dtl's CacheAnalyzer token predictions; a disagreement is flagged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prefix_metrics import ByteFigures, byte_figures, render
from workload_script import Turn, conversation

from dtl_notebook import Session, Tool
from dtl_notebook.agent.search import make_engine
from dtl_notebook.agent.sections import tool_catalog
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.demo import core_tool_names, demo_group_summaries
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.emulator.policies import ScriptedPolicy
from dtl_notebook.wire import WireRequest

SYSTEM = "You are an operations assistant. Search for a tool before you say you can't."
TOP_K = 5
DISAGREEMENT_POINTS = 2.0  # retention by bytes vs. by analyzer tokens, percentage points
SONNET, GPT, CHAT, KIMI = "claude-sonnet-4-6", "gpt-5.4", "gpt-4.1", "kimi-k2"


@dataclass(frozen=True)
class Strategy:
    label: str
    provider: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)
    binding: str = "deferred"  # "deferred" | "all" | "top-k" | "accumulate"
    grouped_catalog: bool = True
    regex_queries: bool = False


STRATEGIES = (
    Strategy("dtl anthropic tool_reference", "anthropic", SONNET),
    Strategy(
        "dtl anthropic tool_reference, flat catalog", "anthropic", SONNET, grouped_catalog=False
    ),
    Strategy("dtl anthropic native bm25", "anthropic", SONNET, {"search": "native-bm25"}),
    Strategy(
        "dtl anthropic native regex",
        "anthropic",
        SONNET,
        {"search": "native-regex"},
        regex_queries=True,
    ),
    Strategy("dtl responses additional_tools", "openai-responses", GPT),
    Strategy(
        "dtl responses tool_search pair", "openai-responses", GPT, {"load_mode": "tool_search"}
    ),
    Strategy("dtl responses hosted search", "openai-responses", GPT, {"search": "hosted"}),
    Strategy("dtl chat full list on activation", "openai-chat", CHAT),
    Strategy(
        "dtl chat bridge (tool_search + call_tool)", "openai-chat", CHAT, {"load_mode": "bridge"}
    ),
    Strategy("dtl kimi system tools", "kimi", KIMI),
    Strategy("dtl kimi bridge", "kimi", KIMI, {"load_mode": "bridge"}),
    Strategy("all tools up front (anthropic)", "anthropic", SONNET, binding="all"),
    Strategy(f"per-step top-{TOP_K} rebinding (anthropic)", "anthropic", SONNET, binding="top-k"),
    Strategy(f"accumulate top-{TOP_K} (anthropic)", "anthropic", SONNET, binding="accumulate"),
)


class DirectEmulator:
    """The emulator answering request payloads directly: the SDK clients' request
    transformation costs ~0.25 s per 200-tool request, which would dominate the run."""

    name = "emulator"

    def __init__(self, provider: str, policy: ScriptedPolicy) -> None:
        self.emulator = Emulator(provider, policy)

    def send(self, request: WireRequest) -> dict[str, Any]:
        return self.emulator.respond(request.payload)


@dataclass(frozen=True)
class Outcome:
    """One strategy's run: request bodies, the analyzer's entries, refused calls, and the
    request where each session starts (bytes compare within a session, as breaks do)."""

    label: str
    provider: str
    payloads: list[dict[str, Any]]
    entries: list[CacheEntry]
    refused_calls: int
    starts: tuple[int, ...] = (0,)

    def bytes(self, raw: bool = False) -> ByteFigures:
        renders = [render(p, self.provider, raw=raw) for p in self.payloads]
        ends = [*self.starts[1:], len(renders)]
        parts = [byte_figures(renders[a:b]) for a, b in zip(self.starts, ends, strict=True)]
        return ByteFigures(*(sum(getattr(p, f) for p in parts) for f in ByteFigures.FIELDS))


def workload_session(tools: list[Tool], strategy: Strategy) -> Session:
    """The session a strategy starts from: its active tools, search and catalog section."""
    core = core_tool_names()
    if strategy.binding != "deferred":
        active = [t.name for t in tools] if strategy.binding == "all" else []
        return Session(system=SYSTEM, tools=tools, active=active, search=None)
    deferred = [t for t in tools if t.name not in core]
    catalog = tool_catalog(
        deferred, grouped=strategy.grouped_catalog, summaries=demo_group_summaries()
    )
    return Session(
        system=SYSTEM,
        tools=tools,
        active=["tool_search", *core],
        search="bm25",
        sections={"tool_catalog": catalog},
    )


def script_steps(turns: list[Turn], strategy: Strategy) -> list[dict[str, Any]]:
    """The emulated model's steps: a discovery turn searches (when the strategy defers tools),
    calls the tool and answers; a follow-up calls and answers."""
    steps: list[dict[str, Any]] = []
    for turn in turns:
        if turn.query is not None and strategy.binding == "deferred":
            steps.append({"search": turn.tool if strategy.regex_queries else turn.query})
        steps += [{"call": turn.tool, "arguments": turn.arguments}, {"text": f"Done: {turn.tool}."}]
    return steps


def run_strategy(tools: list[Tool], strategy: Strategy) -> Outcome:
    """Play the conversation under one strategy on the emulator; keep every request."""
    turns = conversation(tools)
    session = workload_session(tools, strategy)
    transport = DirectEmulator(strategy.provider, ScriptedPolicy(script_steps(turns, strategy)))
    agent = Agent(
        session, strategy.provider, strategy.model, transport, max_steps=4, **strategy.options
    )
    retrieve = _retriever(tools) if strategy.binding in ("top-k", "accumulate") else None
    for turn in turns:
        if retrieve is not None:
            found = retrieve(turn.text)
            if strategy.binding == "accumulate":
                found = [*session.active_tools, *found]
            session.set_active_tools(found)
        agent.run(turn.text)
    refused = sum(1 for s in agent.steps if (s.reply.message.text or "").find("I cannot call") >= 0)
    return Outcome(
        strategy.label,
        strategy.provider,
        [s.request.payload for s in agent.steps],
        [s.cache for s in agent.steps],
        refused,
    )


def _retriever(tools: list[Tool]) -> Callable[[str], list[str]]:
    engine = make_engine("bm25")
    engine.index(tools)
    return lambda text: engine.search(text, TOP_K)


def row(outcome: Outcome) -> dict[str, Any]:
    """The table row: token figures from the analyzer, byte figures from the bodies."""
    figures, entries = outcome.bytes(), outcome.entries
    raw = outcome.bytes(raw=True)
    total = sum(e.total_tokens for e in entries)
    later = [e for i, e in enumerate(entries) if i not in outcome.starts]  # within a session
    cached = sum(e.cached_tokens for e in later)
    best = sum(e.best_cached_tokens for e in later)
    analyzer_retention = cached / best if best else 1.0
    analyzer_breaks = sum(1 for e in entries if e.cache_break is not None)
    told = [(e.cached_tokens, e.reported.cached) for e in entries if e.reported is not None]
    differ = sum(1 for predicted, reported in told if predicted != reported)
    flags = []
    if abs(analyzer_retention - figures.retention) * 100 > DISAGREEMENT_POINTS:
        flags.append("retention")
    if analyzer_breaks != figures.breaks:
        flags.append("breaks")
    return {
        "strategy": outcome.label,
        "requests": figures.requests,
        "first_tokens": entries[0].total_tokens,
        "input_tokens": total,
        "uncached_tokens": total - sum(e.cached_tokens for e in entries),
        "retention_bytes": figures.retention,
        "retention_analyzer": analyzer_retention,
        "breaks_bytes": figures.breaks,
        "breaks_analyzer": analyzer_breaks,
        "breaks_raw_bytes": raw.breaks,
        "request_bytes": raw.total_bytes,
        "first_bytes": len(render(outcome.payloads[0], outcome.provider, raw=True)),
        "refused": outcome.refused_calls,
        "emulator": f"{differ} of {len(told)} differ" if told else "-",
        "flag": ", ".join(flags) or "-",
    }


def workload_tables(catalogs: dict[str, list[Tool]]) -> dict[str, list[dict[str, Any]]]:
    """Every strategy on every catalog: {catalog title: rows}."""
    return {
        title: [row(run_strategy(tools, strategy)) for strategy in STRATEGIES]
        for title, tools in catalogs.items()
    }
