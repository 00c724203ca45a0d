"""The agent loop's own cost per request: everything `Agent.run` does around the emulated model.

`Agent` runs on the emulator transport (the real SDK client over an in-process httpx2
transport) with a 2,000-tool catalog, in every mode. Per request, the time outside the
emulator's `respond` counts: building and validating the request, the SDK client and HTTP layer,
the emulator's request checks, parsing the reply, the agent's cache analysis and running the
tool. The first request of a turn also carries the turn's set-up, the last its wrap-up.
Building the Agent (its SDK client and emulator, and the warm-up of `dtl_notebook.live.warmup`:
validators, token counter, search index) is timed on its own, as the mode's set-up.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from cache_workload import CHAT, GPT, KIMI, SONNET, Strategy, script_steps, workload_session
from workload_script import conversation

from dtl_notebook import Tool
from dtl_notebook.live import Agent
from dtl_notebook.live.agent import AgentEvent
from dtl_notebook.live.emulator.policies import ScriptedPolicy

TARGET_MS = 100.0
TURNS = 4  # 2 discoveries and 2 follow-ups: 8 to 10 requests per mode
MODES = (
    Strategy("anthropic client", "anthropic", SONNET),
    Strategy("anthropic native-bm25", "anthropic", SONNET, {"search": "native-bm25"}),
    Strategy("openai-responses additional_tools", "openai-responses", GPT),
    Strategy("openai-responses tool_search", "openai-responses", GPT, {"load_mode": "tool_search"}),
    Strategy("openai-responses hosted", "openai-responses", GPT, {"search": "hosted"}),
    Strategy("openai-chat", "openai-chat", CHAT),
    Strategy("kimi", "kimi", KIMI),
)


def _timed(respond: Callable[[dict[str, Any]], Any], spent: list[float]) -> Callable[..., Any]:
    def timed(payload: dict[str, Any]) -> Any:
        start = time.perf_counter()
        try:
            return respond(payload)
        finally:
            spent.append(time.perf_counter() - start)

    return timed


def overhead_ms(tools: list[Tool], mode: Strategy, turns: int = TURNS) -> list[float]:
    """Milliseconds outside the emulator's `respond`, one figure per request."""
    return measure(tools, mode, turns)[1]


def measure(tools: list[Tool], mode: Strategy, turns: int = TURNS) -> tuple[float, list[float]]:
    """Milliseconds to build the Agent, and outside the emulator's `respond` per request."""
    played = conversation(tools)[:turns]
    policy = ScriptedPolicy(script_steps(played, mode))
    session = workload_session(tools, mode)
    start = time.perf_counter()
    agent = Agent(session, mode.provider, mode.model, policy=policy, **mode.options)
    setup = (time.perf_counter() - start) * 1e3
    emulator = agent.transport.emulator  # type: ignore[attr-defined]
    in_respond: list[float] = []
    emulator.respond = _timed(emulator.respond, in_respond)
    step_ends: list[float] = []

    def on_step(event: AgentEvent) -> None:
        if event.kind == "step":
            step_ends.append(time.perf_counter())

    spans: list[float] = []
    for turn in played:
        start, first = time.perf_counter(), len(step_ends)
        agent.run(turn.text, on_step=on_step)
        ends = step_ends[first:]
        ends[-1] = time.perf_counter()  # the turn's wrap-up belongs to its last request
        spans += [b - a for a, b in pairwise([start, *ends])]
    if len(spans) != len(in_respond):
        raise RuntimeError(f"{mode.label}: {len(spans)} steps but {len(in_respond)} responses")
    return setup, [(span - model) * 1e3 for span, model in zip(spans, in_respond, strict=True)]


def full_collection() -> tuple[float, int]:
    """(milliseconds of one full garbage collection of this process, objects it walked)."""
    objects = len(gc.get_objects())
    start = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - start) * 1e3, objects


def overhead_rows(tools: list[Tool]) -> list[tuple[str, str, str]]:
    """Speed-table rows: median per request, with the p95 and the verdict on the p95; then
    each mode's agent set-up (once per Agent, not per request), and what one full garbage
    collection of the process costs.

    The harness freezes what the process holds before it measures (`gc.freeze()`, as a
    long-running service does after start-up; the package itself never calls it): a full
    collection then walks what the loop allocated, not the imported SDKs, jsonschema's format
    grammars and the catalogs, which a kernel pays for whatever it runs (the last row)."""
    pause, objects = full_collection()
    gc.freeze()
    try:
        measured = [(mode, *measure(tools, mode)) for mode in MODES]
    finally:
        gc.unfreeze()
    rows, setups = [], []
    for mode, setup, figures in measured:
        setups.append((f"agent set-up: {mode.label}, {len(tools):,} tools", f"{setup:.1f} ms"))
        median = statistics.median(figures)
        p95 = statistics.quantiles(figures, n=20, method="inclusive")[-1]
        verdict = "met" if p95 <= TARGET_MS else "MISSED"
        label = f"agent loop outside respond: {mode.label}, {len(tools):,} tools"
        target = f"p95 {p95:.1f} ms over {len(figures)} requests (<= {TARGET_MS:.0f} ms: {verdict})"
        rows.append((label, f"{median:.1f} ms", target))
    note = "once per Agent (first one in a process also warms the process), not per request"
    collection = (
        "one full garbage collection of this process, unfrozen",
        f"{pause:.1f} ms",
        f"{objects:,} objects (imports and catalogs; Python's own pause, not the loop's)",
    )
    return rows + [(label, value, note) for label, value in setups] + [collection]
