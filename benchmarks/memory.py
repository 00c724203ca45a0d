"""Memory: what one new turn allocates, a long-running kernel's agents, and the peak size.

One new turn (build + strict validation + model context + cache analysis) on a 10,000-tool
registry at 500 and 5,000 messages, measured with `tracemalloc` (Python allocations only), in
every client-search mode and the two server-search modes. Then a long-running kernel: 100
agents, each on its own 2,000 tools, built (each rehearses its first request) and dropped in
turn; the resident size after them, against the size before, and after
`dtl_notebook.free_caches()`. Run with `PYTHONPATH=. python benchmarks/memory.py`.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import resource
import sys
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from workloads import catalog, long_session

from dtl_notebook import Session, cache_footprint, free_caches
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.context import model_context
from dtl_notebook.live import Agent
from dtl_notebook.wire import build_request

MODES = (
    ("anthropic tool_reference", "anthropic", "claude-opus-4-8", {}),
    ("anthropic native-bm25", "anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
    ("responses additional_tools", "openai-responses", "gpt-5.4", {}),
    ("responses hosted", "openai-responses", "gpt-5.4", {"search": "hosted"}),
)


def memory_rows() -> list[tuple[str, str, str]]:
    """(label, value, target) rows for the speed table."""
    tools = catalog(10_000)
    rows = []
    for messages in (500, 5_000):
        session = long_session(tools, messages // 4)
        for label, provider, model, options in MODES:
            analyzer = CacheAnalyzer(provider, model)
            analyzer.add(build_request(session, provider, model, **options))
            session.user("one more")
            tracemalloc.start()
            request = build_request(session, provider, model, **options)
            model_context(request)
            analyzer.add(request)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            session.messages.pop()
            rows.append(
                (
                    f"peak allocation of one new turn: {label}, {len(session.messages):,} msgs",
                    f"{peak / 1e6:.1f} MB",
                    "-",
                )
            )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    rows.append(("peak resident size of this benchmark process", f"{rss:,.0f} MB", "-"))
    return rows


AGENTS, AGENT_TOOLS, CHURN_TARGET_MB = 100, 2_000, 20.0
AGENT_MODES = (
    ("anthropic", "claude-opus-4-8", {}),
    ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
    ("openai-responses", "gpt-5.4", {}),
    ("openai-chat", "gpt-5.4", {}),
)


def resident_mb() -> float:
    """This process's resident size now (Linux: /proc/self/statm), after a full collection
    and after handing the C heap's free pages back to the system (glibc's `malloc_trim`: what
    is freed but not returned is the allocator's, not held by anything)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: free pages count too
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _agent(seed: int) -> Agent:
    provider, model, options = AGENT_MODES[seed % len(AGENT_MODES)]
    tools = catalog(AGENT_TOOLS, seed=seed)
    return Agent(Session(system="You help.", tools=tools), provider, model, **options)


def churn() -> dict[str, float]:
    """Resident MB before, after building and dropping AGENTS agents, and after freeing the
    memos; the memos' own estimate of what they held before the free call."""
    for seed in range(len(AGENT_MODES)):  # the once-per-process part: types, validators
        _agent(seed)
    before = resident_mb()
    sizes = []
    for seed in range(AGENTS):
        _agent(1000 + seed)  # built (it rehearses its first request) and dropped
        if (seed + 1) % (AGENTS // 4) == 0:
            sizes.append(resident_mb())
    held = sum(memo["bytes"] for memo in cache_footprint().values()) / 1e6
    free_caches()
    return {
        "before": before,
        "after": sizes[-1],
        "held": held,
        "freed": resident_mb(),
        "path": sizes,
    }


def churn_rows() -> list[tuple[str, str, str]]:
    """(label, value, target) rows for the speed table, measured in a fresh process (its
    resident size is this measurement's alone)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        mb = pool.submit(churn).result()
    grown = mb["after"] - mb["before"]
    met = "met" if grown <= CHURN_TARGET_MB else "MISSED"
    return [
        (
            f"resident size after {AGENTS} agents on {AGENT_TOOLS:,} tools each, dropped",
            f"{grown:+.1f} MB",
            f"<= {CHURN_TARGET_MB:g} MB: {met}",
        ),
        ("  of which the memos held (estimate)", f"{mb['held']:.1f} MB", "-"),
        ("  after free_caches()", f"{mb['freed'] - mb['before']:+.1f} MB", "-"),
    ]


if __name__ == "__main__":
    for label, value, target in [*memory_rows(), *churn_rows()]:
        print(f"{label:<72} {value:>10}  {target}")
    for label, value, _ in memory_rows():
        print(f"{label:<72} {value:>10}")
