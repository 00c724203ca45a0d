"""Benchmarks, run with `make bench`; prints every table and writes benchmarks/RESULTS.md.

Speed rows (10,000-tool registry, search engines, per-turn analysis, the agent loop's own cost
per request), benchmarks/turn_cost.py's table where it offers `rows()`, then the cache workload
on both catalogs, the proxy against direct calls (benchmarks/proxy.py), and the view at scale
(benchmarks/view.py). pydantic-ai's runs (the bench extra) go to a worker process on the
second core.
"""

from __future__ import annotations

import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import SystemUpdate, ToolRegistry, make_engine, split_deferred_tools
from dtl_notebook.agent.files import write_atomic
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.wire import build_request

sys.path.insert(0, str(Path(__file__).parent))
from agent_overhead import overhead_rows
from cache_workload import workload_tables
from change_workload import change_rows
from results_table import load, machine, markdown
from shared_sessions import shared_rows
from workload_script import CATALOGS
from workloads import WORDS, catalog, long_session


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def _pop_turn(session: Session) -> None:
    """Take back the user message (and the section update it carried) just added."""
    session.messages.pop()
    if isinstance(session.messages[-1], SystemUpdate):
        session.messages.pop()


def analysis_rows(tools: list[Tool]) -> list[tuple[str, str, str]]:
    """Analyzing one new turn: model context plus cache prediction against the earlier turns."""
    rows = []
    session = long_session(tools, 125)
    for provider, model, options in (
        ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
        ("openai-responses", "gpt-5.4", {"search": "hosted"}),
        ("anthropic", "claude-opus-4-8", {}),
    ):
        previous = build_request(session, provider, model, validate=False, **options)
        session.user("one more")
        current = build_request(session, provider, model, validate=False, **options)
        _pop_turn(session)

        timings: list[float] = []
        for _ in range(3):
            analyzer = CacheAnalyzer(provider)
            analyzer.add(previous)
            start = time.perf_counter()
            analyzer.add(current)
            timings.append(time.perf_counter() - start)
        mode = f"{provider} {options.get('search', 'client')}"
        size = f"{len(tools):,} tools, {len(session.messages)} messages"
        label = f"analyze a new turn: {mode}, {size}"
        rows.append((label, f"{statistics.median(timings) * 1e3:.1f} ms", "milliseconds"))
        session.user("one more")  # build the new turn's request, not the previous one
        build = timed(lambda p=provider, m=model, o=options: build_request(session, p, m, **o), 3)
        _pop_turn(session)
        rows.append((f"build + validate that request ({mode})", f"{build * 1e3:.2f} ms", "-"))
    return rows


def speed_rows() -> list[tuple[str, str, str]]:
    """Registry, search engines, transcript split and per-turn analysis over 10,000 tools."""
    rows: list[tuple[str, str, str]] = []
    start = time.perf_counter()
    tools = catalog(10_000)
    rows.append(
        ("build 10,000 Tool objects (schema checks)", f"{time.perf_counter() - start:.3f} s", "-")
    )
    rows.append(
        ("register 10,000 tools", f"{timed(lambda: ToolRegistry(tools)) * 1e3:.1f} ms", "< 1 s")
    )
    for name in ("bm25", "regex", "keyword"):
        engine = make_engine(name)
        build = timed(lambda engine=engine: engine.index(tools), repeat=3)
        query = "shipping eta order" if name != "regex" else "ship.*eta"
        run = timed(lambda engine=engine, query=query: engine.search(query, 5), repeat=20)
        rows.append((f"{name}: index 10,000 tools", f"{build * 1e3:.1f} ms", "-"))
        rows.append(
            (f"{name}: one query over 10,000 tools", f"{run * 1e3:.2f} ms", "interactive (< 50 ms)")
        )

    session = Session(tools=tools, active=["tool_search"])
    session.user("start")
    for i in range(125):
        call = ToolCall(id=f"c{i}", name="tool_search", arguments={"query": random.choice(WORDS)})
        session.assistant(tool_calls=[call])
        session.execute(call)
        session.assistant(f"step {i}")
        session.user(f"next {i}")
    messages = len(session.messages)
    split = timed(lambda: split_deferred_tools(session.tools(), session.messages))
    rows.append((f"split_deferred_tools, {messages} messages", f"{split * 1e3:.2f} ms", "-"))
    rows.extend(analysis_rows(tools))
    return rows


def _start_peers(pool: ProcessPoolExecutor) -> dict[str, Future[list[dict[str, Any]]]]:
    """pydantic-ai's own tool search on every catalog, in a worker process (the bench extra)."""
    try:
        from pydantic_peer import peer_table
    except ImportError as exc:
        print(f"pydantic-ai rows skipped: {exc} (install the bench extra)")
        return {}
    return {title: pool.submit(peer_table, title) for title in CATALOGS}


def _turn_cost_section() -> list[str]:
    """benchmarks/turn_cost.py's table, where that script offers `rows()`."""
    try:
        from turn_cost import rows, table
    except ImportError as exc:
        print(f"turn cost rows skipped: {exc}")
        return []
    from plain_api import rows as plain_rows
    from plain_api import table as plain_table

    text = table(rows())
    print(text)
    plain = plain_table(plain_rows())
    print(plain)
    return [
        "## Turn cost (10,000 tools)",
        "```\n" + text + "\n```",
        "## Turn cost in a user's own loop (no Agent)",
        "```\n" + plain + "\n```",
    ]


def _first_request_summary(rows: list[dict[str, Any]]) -> str:
    big = {r["strategy"]: r for r in rows}
    first = big["dtl anthropic tool_reference"]["first_tokens"]
    upfront = big["all tools up front (anthropic)"]["first_tokens"]
    saving = 1 - first / upfront
    verdict = "met" if saving >= 0.9 else "MISSED"
    return (
        f"First request, 2,000 tools: {first:,} tokens with the grouped catalog vs {upfront:,} "
        f"all up front: {saving:.1%} smaller (target >= 90 %: {verdict})."
    )


def main() -> None:
    from load_scale import load_rows
    from memory import churn_rows, memory_rows
    from proxy import proxy_rows, proxy_table
    from proxy_disconnects import run as disconnect_rows
    from view import view_rows, view_table

    load_before = load()
    rows = speed_rows()  # timed with nothing else running
    rows += overhead_rows(CATALOGS["2,000-tool catalog"]())
    rows += memory_rows()
    rows += load_rows()
    rows += churn_rows()
    speed = speed_table(rows)
    print(speed)
    proxied = proxy_table(proxy_rows())  # timed too: before the workload's second process
    print(proxied)
    cut = proxy_table(disconnect_rows())
    print(cut)
    turn_cost = _turn_cost_section()
    # the cache workload is counted, not timed: pydantic-ai runs beside it on the other core
    with ProcessPoolExecutor(max_workers=1) as pool:
        peers = _start_peers(pool)
        catalogs = {title: build() for title, build in CATALOGS.items()}
        tables = workload_tables(catalogs)
        for title, tools in catalogs.items():  # subagents and a re-run on one cache scope
            tables[title] += shared_rows(tools)
        changes = markdown("Change-heavy workload, 60-tool catalog", change_rows())
        for title, future in peers.items():
            tables[title] += future.result()
    sections = [markdown(f"Cache workload, {title}", rows) for title, rows in tables.items()]
    for section in [*sections, changes]:
        print(section)
    summary = _first_request_summary(tables["2,000-tool catalog"])
    print(summary)
    view = view_table(view_rows())
    print(view)
    text = "\n\n".join(
        [
            "# Benchmark results",
            f"Machine: {machine()}; {load_before} before, {load()} after",
            "## Speed",
            "```\n" + speed + "\n```",
            *turn_cost,
            "## The proxy against direct calls (`python -m dtl_notebook proxy`)",
            "```\n" + proxied + "\n```",
            "Twenty streaming clients at once, every third leaving after two chunks "
            "(`benchmarks/proxy_disconnects.py`):",
            "```\n" + cut + "\n```",
            "## Cache workload (40 turns, 12 discoveries)",
            "The last rows of each table run several sessions of one organization (a main "
            "session, two subagents, a re-run of the main session) on one emulator, predicted "
            "with one shared `PrefixStore`: a session reads what another wrote. Their "
            "`predicted vs emulator` column compares every prediction with the emulator's own "
            "accounting; bytes and breaks are counted within each session.",
            *sections,
            summary,
            "## Change-heavy workload (40 turns, 20 tool-list changes)",
            "Every other turn the list changes as an MCP `list_changed` would (a tool offered, "
            "redefined or withdrawn in turn), made with the session's own neutral events "
            "(`registry.register`, `redefine_tool`, `remove_tools`) rather than a server process. "
            "Full-list resend rewrites `tools[]` at each change; the bridge keeps it fixed; "
            "native and hosted search tell removals and redefinitions in the messages, and "
            "each newly offered tool is declared deferred after the registered ones.",
            changes,
            "## The view at scale (Anthropic client search, ~2,000 tools)",
            view,
        ]
    )
    write_atomic(Path(__file__).with_name("RESULTS.md"), text + "\n")


def _missed(value: str, target: str) -> bool:
    """A target like "< 1 s" or "interactive (< 50 ms)" compared with a measured value."""
    match = re.search(r"<\s*([\d.]+)\s*(ms|s)\b", target)
    number = re.match(r"([\d.]+)\s*(ms|s)\b", value)
    if not match or not number:
        return False
    scale = {"ms": 1e-3, "s": 1.0}
    limit = float(match.group(1)) * scale[match.group(2)]
    return float(number.group(1)) * scale[number.group(2)] >= limit


def speed_table(rows: list[tuple[str, str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"{'benchmark':<{width}}  {'median':>12}  target", "-" * (width + 36)]
    for label, value, target in rows:
        missed = "  MISSED" if _missed(value, target) else ""
        lines.append(f"{label:<{width}}  {value:>12}  {target}{missed}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
