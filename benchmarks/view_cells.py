"""The view in a long notebook: 32 `%%agent` cells on one session, cell 1 against cell 32.

Kernel side: what each cell's display sends and what turning the cell before into its
snapshot costs. Browser side, where Chromium, Playwright and JupyterLab are installed: the
32 cells run one by one in a real JupyterLab (the helpers of tests/notebook/browser), each timed
from run to an idle view, then a timeline click to its panes. About two minutes in all.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dtl_notebook.notebook.sessions import Sessions, Settings, new_agent

ROOT = Path(__file__).resolve().parent.parent
CELLS = 32
QUESTIONS = (
    "What is the shipping ETA of order_{i}?",
    "And the weather in Paris?",
    "Show the invoice inv_{i}",
    "List the files in the docs folder",
)


def _bundle_bytes(obj: Any) -> int:
    """The bytes of a display's text mimetypes (a widget's state is counted apart)."""
    bundle = obj._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    return sum(len(value) for mime, value in data.items() if mime.startswith("text/"))


class _Handle:
    """What IPython's DisplayHandle would send: the bytes of each display and update."""

    def __init__(self, obj: Any) -> None:
        self.sent = [_bundle_bytes(obj)]

    def update(self, obj: Any) -> None:
        self.sent.append(_bundle_bytes(obj))


def kernel_rows() -> list[tuple[str, str]]:
    sessions = Sessions({})
    agent = new_agent(Settings(), "anthropic")
    sessions.bind("agent", agent)
    handles: list[_Handle] = []  # two per cell: its saved turn, then the widget
    states: list[int] = []
    retire_ms: list[float] = []

    def show(obj: Any, display_id: bool = True) -> _Handle:
        handles.append(_Handle(obj))
        return handles[-1]

    for i in range(CELLS):
        start = time.perf_counter()
        view = sessions.display_live("agent", agent, show)  # the cell before becomes a snapshot
        retire_ms.append((time.perf_counter() - start) * 1000)
        states.append(
            len(json.dumps(view.get_state(["header", "tail", "count", "panes", "panes_key"])))
        )
        agent.run(QUESTIONS[i % len(QUESTIONS)].format(i=i))
        sessions.outputs["agent"].handle.update(view)  # as %%agent does after the turn
    saved, widgets = handles[0::2], handles[1::2]
    # cell k's display (saved turn, widget and its state) and end-of-turn update; its
    # snapshot is the saved turn's update when cell k + 1 takes the live view
    sent = [
        sum(s.sent[:2]) + w.sent[0] + state
        for s, w, state in zip(saved, widgets, states, strict=True)
    ]
    snapshot = [h.sent[2] for h in saved[:-1]]
    return [
        (
            "32 cells: display + end-of-turn update, cells 1 / 8 / 32 (bytes)",
            f"{sent[0]:,} / {sent[7]:,} / {sent[-1]:,}",
        ),
        (
            "32 cells: a cell's snapshot, cell 2 vs 31 (bytes)",
            f"{snapshot[1]:,} vs {snapshot[-1]:,}",
        ),
        (
            "32 cells: new live view + the snapshot before it, cell 2 vs 32 (ms)",
            f"{retire_ms[1]:.1f} vs {retire_ms[-1]:.1f}",
        ),
    ]


def _browser_missing() -> str | None:
    chromium = os.environ.get("DTL_CHROMIUM") or shutil.which("chromium")
    if not chromium or not Path(chromium).exists():
        return "chromium missing"
    for module in ("playwright", "jupyterlab", "ipykernel", "nbformat", "pytest"):
        if importlib.util.find_spec(module) is None:
            return f"{module} missing"
    return None


def browser_rows() -> list[tuple[str, str]]:
    missing = _browser_missing()
    if missing is not None:
        return [("32 cells in JupyterLab", f"skipped: {missing}")]
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from tests.notebook.browser.conftest import CHROMIUM_ARGS, run_notebook, start_lab, stop_lab
    from tests.notebook.browser.test_view_behaviour import _RUN_CELL_JS, _timed_click

    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )  # the kernel imports this checkout
    chromium = os.environ.get("DTL_CHROMIUM") or shutil.which("chromium") or ""
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as pw:
        lab = start_lab(Path(folder))
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            lab.write_notebook("cells/cells.ipynb", ["%load_ext dtl_notebook"])
            run = run_notebook(browser, lab, "cells/cells.ipynb", workspace="cells")
            times = [
                run.page.evaluate(_RUN_CELL_JS, [f"%%agent\n{QUESTIONS[i % 4].format(i=i)}", True])
                for i in range(CELLS)
            ]
            nodes = run.page.evaluate("() => document.querySelectorAll('*').length")
            live = run.page.locator(".jp-OutputArea-output .dtl-view")
            boxes = live.locator(".dtl-timeline .dtl-tl-item:not(.dtl-tl-preview)")
            count = boxes.count()
            clicks = [
                _timed_click(run.page, boxes.nth(i), f"Request {i + 1} ·")
                for i in (0, 5, count // 2, count - 2)
            ]
            run.close()
        finally:
            browser.close()
            stop_lab(lab)
    first, last = statistics.median(times[1:9]), statistics.median(times[-8:])
    return [
        (
            "32 cells in JupyterLab: cell run to idle view, cells 2-9 vs 25-32 (ms, median)",
            f"{first:.0f} vs {last:.0f} ({last / first:.2f}x)",
        ),
        ("32 cells in JupyterLab: DOM elements after the 32nd", f"{nodes:,}"),
        (
            "32 cells in JupyterLab: timeline click to panes (ms, median / max)",
            f"{statistics.median(clicks):.0f} / {max(clicks):.0f}",
        ),
    ]


def cells_rows() -> list[tuple[str, str]]:
    return kernel_rows() + browser_rows()


if __name__ == "__main__":
    for name, value in cells_rows():
        print(f"{name}: {value}")
