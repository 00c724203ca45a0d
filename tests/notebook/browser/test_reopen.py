"""A saved notebook reopened in JupyterLab: each `%%agent` cell shows its turn, whether the
kernel starts (the widget's model is gone), fails to start, or runs the cells again."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from .conftest import LabRun, LabServer, expect, open_notebook, run_all, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

NAME = "reopen/reopen.ipynb"
CELLS: list[str | tuple[str, str]] = [
    "%load_ext dtl_notebook",
    "%%agent --provider anthropic\nWhat is the shipping ETA of order_42?",
    "%%agent\nAnd the weather in Paris?",
]
WIDGET_OUTPUT = ".jp-OutputArea-output:not([data-mime-type])"  # the widget renderer's
_SAVED_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.context.save().then(() => !w.context.model.dirty);
}"""


def _saved_outputs(lab: LabServer, name: str) -> list[list[dict[str, object]]]:
    cells = json.loads((lab.root / name).read_text(encoding="utf-8"))["cells"]
    return [c.get("outputs", []) for c in cells if c["cell_type"] == "code"]


def _turns_shown(page: Page) -> None:
    """Both `%%agent` cells show their own turn as static HTML, and nothing else."""
    statics = page.locator(".jp-OutputArea-output .dtl-fallback .dtl-static")
    expect(statics).to_have_count(2)
    for k in (0, 1):
        expect(statics.nth(k)).to_be_visible()
        expect(statics.nth(k)).to_contain_text(f"turn {k + 1}")
        expect(statics.nth(k)).not_to_contain_text(f"turn {k + 2}")
    expect(page.locator(WIDGET_OUTPUT)).to_be_hidden()  # loading, or its model not found
    expect(page.get_by_text("Error displaying widget")).to_be_hidden()
    expect(page.get_by_text("Loading widget")).to_be_hidden()


def _save_and_close(run: LabRun) -> None:
    assert run.page.evaluate(_SAVED_JS)
    outputs = _saved_outputs(run.lab, NAME)  # type: ignore[arg-type]
    live = outputs[2]  # the saved turn, then the widget
    assert "turn 2" in str(live[0]["data"]["text/html"])  # type: ignore[index]
    assert "application/vnd.jupyter.widget-view+json" in live[1]["data"]  # type: ignore[operator]
    run.close()


def test_reopened_with_a_kernel_shows_each_turn_then_runs_live(
    browser: Browser, lab: LabServer
) -> None:
    lab.write_notebook(NAME, CELLS)
    run = run_notebook(browser, lab, NAME, workspace="reopen-1")
    page = run.page
    expect(page.locator(".dtl-view")).to_have_count(1)
    fallbacks = page.locator(".jp-OutputArea-output .dtl-fallback")
    expect(fallbacks).to_have_count(2)
    expect(fallbacks.first).to_be_visible()  # the earlier cell keeps its turn
    expect(fallbacks.last).to_be_hidden()  # the live cell: the view stands in its place
    _save_and_close(run)

    again = open_notebook(browser, lab, NAME, workspace="reopen-2")
    page = again.page
    # The widget output tried and failed: the new kernel has no such model.
    error = page.get_by_text("Error displaying widget: model not found")
    expect(error).to_be_attached(timeout=60_000)
    _turns_shown(page)
    again.screenshot("reopen-kernel")

    run_all(again, time.monotonic() + 180)  # the cells run again: a live view replaces all
    views = page.locator(".jp-OutputArea-output .dtl-view")
    expect(views).to_have_count(1)
    expect(views.locator(".dtl-status")).to_have_text("idle")
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    fallbacks = page.locator(".jp-OutputArea-output .dtl-fallback")
    expect(fallbacks.first).to_be_visible()
    expect(fallbacks.last).to_be_hidden()
    again.screenshot("reopen-rerun")
    assert again.page_errors == []


def test_reopened_without_a_working_kernel_shows_each_turn(
    browser: Browser, lab: LabServer
) -> None:
    name = "reopen/broken.ipynb"
    lab.write_notebook(name, CELLS)
    run = run_notebook(browser, lab, name, workspace="reopen-3")
    assert run.page.evaluate(_SAVED_JS)
    run.close()
    # A kernel that exits at once: the widget manager never restores ("Loading widget…").
    spec = lab.root.parent / "data" / "kernels" / "python3" / "kernel.json"
    working = spec.read_text(encoding="utf-8")
    broken = {**json.loads(working), "argv": [sys.executable, "-c", "raise SystemExit(3)"]}
    spec.write_text(json.dumps(broken), encoding="utf-8")
    try:
        again = open_notebook(browser, lab, name, workspace="reopen-4", kernel=None)
        page = again.page
        expect(page.locator(WIDGET_OUTPUT).first).to_be_attached(timeout=60_000)
        _turns_shown(page)
        again.screenshot("reopen-broken-kernel")
        again.close()
    finally:
        spec.write_text(working, encoding="utf-8")
