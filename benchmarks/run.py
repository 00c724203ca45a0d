"""Benchmarks: prints one table of timings. Run with `make bench`."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import SystemUpdate, ToolRegistry, make_engine, split_deferred_tools
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.wire import build_request

WORDS = (
    "weather shipping order eta customer invoice file calendar event add subtract city "
    "forecast refund ticket user account payment report chart email draft send archive "
    "search index vector table row column query schedule meeting room booking flight hotel"
).split()


def catalog(n: int, seed: int = 7) -> list[Tool]:
    rng = random.Random(seed)
    tools = []
    for i in range(n):
        words = rng.sample(WORDS, 6)
        props = {
            f"{w}_{j}": {"type": "string", "description": f"The {w} to use"}
            for j, w in enumerate(words[:2])
        }
        tools.append(
            Tool(
                f"{words[0]}_{words[1]}_{i}",
                description=" ".join(words) + f" tool number {i}",
                parameters={"type": "object", "properties": props, "required": list(props)},
                execute=lambda **_: "ok",
            )
        )
    return tools


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def long_session(tools: list[Tool], turns: int) -> Session:
    """A transcript of about 4 messages per turn over a 10,000-tool registry."""
    session = Session(
        system="You are a benchmark agent. " * 50, tools=tools, active=["tool_search"]
    )
    for i in range(turns):
        session.user(f"task {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}")
        call = ToolCall(id=f"c{i}", name="tool_search", arguments={"query": WORDS[i % len(WORDS)]})
        session.assistant(tool_calls=[call])
        session.execute(call)
        session.assistant(f"done {i}")
    return session


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
        session.messages.pop()
        session.messages.pop() if isinstance(session.messages[-1], SystemUpdate) else None

        timings: list[float] = []
        for _ in range(3):
            analyzer = CacheAnalyzer(provider)
            analyzer.add(previous)
            start = time.perf_counter()
            analyzer.add(current)
            timings.append(time.perf_counter() - start)
        label = f"analyze a new turn: {provider} {options.get('search', 'client')}, "
        label += f"{len(tools):,} tools, {len(session.messages)} messages"
        rows.append((label, f"{statistics.median(timings) * 1e3:.1f} ms", "milliseconds"))
        build = timed(lambda p=provider, m=model, o=options: build_request(session, p, m, **o), 3)
        rows.append((f"build + validate that request ({provider})", f"{build * 1e3:.1f} ms", "-"))
    return rows


def main() -> None:
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

    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'median':>12}  target")
    print("-" * (width + 36))
    for label, value, target in rows:
        print(f"{label:<{width}}  {value:>12}  {target}")


if __name__ == "__main__":
    main()
