"""The view at scale: a 200-request session on a ~2,000-tool registry, and 32 cells.

Prints what each live update sends (bytes), what it costs to build (ms), and, where Debian's
Chromium is installed, how long the exported page takes to render and to switch requests;
then the many-cells figures of view_cells.py (cell 1 against cell 32, kernel and browser).
Run with `make bench`.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from dtl_notebook import Session
from dtl_notebook.agent.sections import tool_catalog
from dtl_notebook.demo import core_tool_names, demo_catalog
from dtl_notebook.live import Agent
from dtl_notebook.notebook import AgentView, export_html

sys.path.insert(0, str(Path(__file__).parent))
from view_cells import cells_rows
from workloads import catalog

QUERIES = (
    "What is the shipping ETA of order_{i}?",
    "And the weather in Paris?",
    "Show the invoice inv_{i}",
    "List the files in the docs folder",
    "What's the forecast for Berlin tomorrow?",
)
SYNCED = ["header", "tail", "count", "panes"]


def session(extra: int) -> Session:
    tools = demo_catalog() + catalog(extra)
    core = core_tool_names()
    return Session(
        system="You are an operations assistant. Search for a tool before you say you can't.",
        tools=tools,
        active=["tool_search", *core],
        sections={"tool_catalog": tool_catalog(t for t in tools[:300] if t.name not in core)},
    )


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def view_rows(requests: int = 200, extra_tools: int = 1800) -> list[tuple[str, str]]:
    """What the view costs at scale, as (measure, value) rows."""
    agent = Agent(session(extra_tools), "anthropic", "claude-sonnet-4-6")
    view = AgentView(agent)
    sizes: list[int] = []
    costs: list[float] = []
    handler = view._on_event

    def measured(event):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        handler(event)
        if event.kind == "step":
            costs.append((time.perf_counter() - start) * 1000)
            sizes.append(len(json.dumps(view.get_state(SYNCED))))

    agent.listeners[agent.listeners.index(handler)] = measured
    turn = 0
    while len(agent.steps) < requests:
        agent.run(QUERIES[turn % len(QUERIES)].format(i=turn))
        turn += 1
    tools = len(agent.session.registry)
    first, last = sizes[:20], sizes[-20:]
    rows = [
        ("session", f"{len(agent.steps)} requests, {turn} turns, {tools:,} registered tools"),
        (
            "bytes per update, median / p95 / max",
            f"{statistics.median(sizes):,.0f} / {p95(sizes):,.0f} / {max(sizes):,}",
        ),
        (
            "bytes per update, first 20 vs last 20 (median)",
            f"{statistics.median(first):,.0f} vs {statistics.median(last):,.0f}",
        ),
        (
            "build one update, median / p95 (ms)",
            f"{statistics.median(costs):.1f} / {p95(costs):.1f}",
        ),
    ]
    start = time.perf_counter()
    bundle = view._repr_mimebundle_()[0]
    rows.append(
        (
            "static fallback (display time)",
            f"{(time.perf_counter() - start) * 1000:.0f} ms, {len(bundle['text/html']):,} bytes",
        )
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.html"
        start = time.perf_counter()
        export_html(view, path)
        rows.append(
            (
                "export_html",
                f"{(time.perf_counter() - start) * 1000:.0f} ms, "
                f"{path.stat().st_size / 1e6:.1f} MB",
            )
        )
        rows += browser_rows(path)
    return rows + cells_rows()


def view_table(rows: list[tuple[str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"| {'measure':<{width}} | value |", f"|{'-' * (width + 2)}|-------|"]
    lines += [f"| {name:<{width}} | {value} |" for name, value in rows]
    return "\n".join(lines)


def main() -> None:
    print(view_table(view_rows()))


def browser_rows(path: Path) -> list[tuple[str, str]]:
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        return [("exported page in Chromium", "skipped: chromium or playwright missing")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
        )
        start = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-rendered='1']")
        loaded = (time.perf_counter() - start) * 1000
        clicks = []
        for index in (0, 100, 199):
            start = time.perf_counter()
            page.locator(".dtl-tl-item").nth(index).click()
            page.wait_for_function(
                f"() => document.querySelector('.dtl-request-title').textContent"
                f".startsWith('Request {index + 1} ')"
            )
            clicks.append((time.perf_counter() - start) * 1000)
        browser.close()
    return [
        ("exported page: load to rendered (ms)", f"{loaded:.0f}"),
        (
            "exported page: click a request to shown (ms, median)",
            f"{statistics.median(clicks):.0f}",
        ),
    ]


if __name__ == "__main__":
    main()
