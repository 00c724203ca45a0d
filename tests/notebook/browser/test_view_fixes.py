"""The live view in a real JupyterLab, where it used to fall short: a break lit in all three
panes with Request JSON scrolled to it (a tool break, a system-section break), earlier
requests' panes while the kernel is busy, a header that says one thing per turn, the labelled
overview strip, and the preview box selected after a switch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import LabRun, LabServer, expect, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

NAME = "fixes/fixes.ipynb"
RELEASE = "release-the-kernel"
CELLS: list[str | tuple[str, str]] = [
    "%load_ext dtl_notebook",
    "%%agent --provider anthropic\nWhat is the shipping ETA of order_42?",
    "%dtl activate get_hourly_forecast",  # outside a tool run: the next request breaks
    "%%agent\nAnd the hourly forecast?",
    "agent.session.prompt['preamble'] = 'You are a careful shipping assistant.'",
    "%%agent\nAnd the weather in Paris?",  # a system-section break
]
# Insert a cell at the end and run it without waiting for it; the live view's status changes
# are recorded from the turn's start.
_START_CELL_JS = """(source) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  // the live view's status as the page shows it, from the turn's start: the header may be
  // drawn anew (a re-rendered output), so the notebook is watched, not one element
  window.__dtlStatuses = [];
  const seen = window.__dtlStatuses;
  new MutationObserver(() => {
    const status = document.querySelector('.jp-OutputArea-output .dtl-view .dtl-status');
    const text = status ? status.textContent : null;
    if (text === null || (!seen.length && !text.startsWith('running'))) return;
    if (seen[seen.length - 1] !== text) seen.push(text);
  }).observe(nb.node, { childList: true, characterData: true, subtree: true });
  nb.activeCellIndex = nb.widgets.length - 1;
  app.commands.execute('notebook:insert-cell-below').then(() => {
    nb.activeCell.model.sharedModel.setSource(source);
    app.commands.execute('notebook:run-cell');
  });
}"""
_LIT_IN_PANE_JS = """(body) => {
  const e = body.querySelector('.dtl-brk-lit');
  if (!e) return false;
  const r = e.getBoundingClientRect(), p = body.getBoundingClientRect();
  return r.bottom > p.top && r.top < p.bottom;
}"""


@pytest.fixture(scope="module")
def run(browser: Browser, lab: LabServer) -> Iterator[LabRun]:
    lab.write_notebook(NAME, CELLS)
    handle = run_notebook(browser, lab, NAME, workspace="fixes")
    try:
        yield handle
    finally:
        handle.close()


def _live(run: LabRun) -> Locator:
    return run.page.locator(".jp-OutputArea-output .dtl-view")


def _lit_in_view(run: LabRun, body: Locator) -> None:
    """The pane (not the page) shows its lit break item: waited for, not slept on."""
    run.page.wait_for_function(_LIT_IN_PANE_JS, arg=body.element_handle(), timeout=10_000)


def test_a_break_is_lit_in_three_panes_with_request_json_scrolled_to_it(run: LabRun) -> None:
    live = _live(run)
    breaks = live.locator(".dtl-tl-item.dtl-tl-break")
    expect(breaks).to_have_count(2)
    breaks.first.click()  # the tool activated outside a tool run
    for pane in ("state", "request", "context"):
        body = live.locator(f".dtl-pane-{pane} .dtl-pane-body")
        expect(body.locator(".dtl-brk-lit").first).to_be_attached()
        _lit_in_view(run, body)  # no pin, no click in the panes: shown when the panes are
    expect(live.locator(".dtl-pane-request .dtl-brk-lit").first).to_contain_text("tools[")
    scrolled = live.locator(".dtl-pane-request .dtl-pane-body").evaluate("b => b.scrollTop")
    assert scrolled > 0  # the lit tool sits below the pane's first screen
    live.scroll_into_view_if_needed()
    run.screenshot("fixes-tool-break")

    breaks.last.click()  # the preamble changed: a system-section break
    request = live.locator(".dtl-pane-request .dtl-brk-lit")
    expect(request).to_have_count(1)
    expect(request).to_contain_text("system")
    expect(request).to_contain_text("cache breaks here")
    expect(live.locator(".dtl-pane-state .dtl-brk-lit")).to_contain_text("preamble")
    expect(live.locator(".dtl-pane-context .dtl-brk-lit").first).to_be_attached()
    for pane in ("state", "request", "context"):
        _lit_in_view(run, live.locator(f".dtl-pane-{pane} .dtl-pane-body"))
    run.screenshot("fixes-system-break")


def test_the_overview_strip_is_labelled_and_in_the_legend(run: LabRun) -> None:
    live = _live(run)
    row = live.locator(".dtl-overview-row")
    expect(row).to_be_visible()
    expect(row.locator(".dtl-overview-label")).to_have_text("all requests")
    box = live.locator(".dtl-ov-mark").first.bounding_box()
    assert box is not None and box["height"] >= 16
    live.locator(".dtl-legend > summary").click()
    expect(live.locator(".dtl-legend")).to_contain_text("All requests (the strip above")
    live.scroll_into_view_if_needed()
    run.screenshot("fixes-overview")


def test_earlier_panes_open_while_the_kernel_is_busy(run: LabRun, lab: LabServer) -> None:
    """A cell runs a turn, then keeps the kernel busy until the test releases it: clicks on
    earlier requests (before this view's cell, and of this turn) show their own panes."""
    live = _live(run)
    before = live.locator(".dtl-tl-item:not(.dtl-tl-preview)").count()
    release = lab.root / "fixes" / RELEASE
    source = (
        "import pathlib, time\n"
        "agent.run('List the files in the docs folder')\n"
        f"while not pathlib.Path({RELEASE!r}).exists():\n"
        "    time.sleep(0.05)"
    )
    run.page.evaluate(_START_CELL_JS, source)
    try:
        boxes = live.locator(".dtl-tl-item:not(.dtl-tl-preview)")
        expect(boxes).to_have_count(before + 2, timeout=60_000)  # the turn's two requests
        expect(live.locator(".dtl-status")).to_have_text("idle", timeout=60_000)
        assert run.page.locator(".jp-InputPrompt", has_text="[*]").count() == 1  # still busy
        for index in (0, before - 1, before):  # before this view's cell, its first, this turn
            # the timeline scrolls its selected box into view: a click by position could
            # land on its neighbour while it moves
            boxes.nth(index).dispatch_event("click")
            title = live.locator(".dtl-request-title")
            expect(title).to_contain_text(f"Request {index + 1} · turn")
            expect(live.locator(".dtl-panes")).not_to_have_attribute("aria-busy", "true")
            expect(live.locator(".dtl-pane-request .dtl-pane-body")).to_contain_text("max_tokens")
        live.scroll_into_view_if_needed()
        run.screenshot("fixes-busy-kernel")
    finally:
        release.write_text("", encoding="utf-8")
    expect(run.page.locator(".jp-InputPrompt", has_text="[*]")).to_have_count(0, timeout=60_000)
    statuses: list[Any] = run.page.evaluate("() => window.__dtlStatuses")
    expect(live.locator(".dtl-status")).to_have_text("idle")
    if not statuses:  # the whole turn fell within one drawn frame: only its end was drawn
        return
    running = [s for s in statuses[:-1] if s != statuses[-1]]
    # One wording per turn: 'running turn N · k request(s) done', k counting up, then idle.
    assert statuses[-1] == "idle", statuses
    assert running and all(s.startswith("running turn ") for s in running), statuses
    assert "idle" not in statuses[: statuses.index(running[-1])], statuses


def test_after_a_switch_the_preview_box_is_the_selected_one(run: LabRun) -> None:
    live = _live(run)
    live.locator(".dtl-switcher").select_option("openai-responses")
    preview = live.locator(".dtl-tl-preview")
    expect(preview).to_be_visible()
    live.locator(".dtl-switch").click()
    expect(live.locator(".dtl-meta")).to_contain_text("openai-responses")
    expect(live.locator(".dtl-tl-selected")).to_have_count(1)
    expect(preview).to_have_class("dtl-tl-item dtl-tl-preview dtl-tl-selected")
    expect(live.locator(".dtl-request-title")).to_contain_text("openai-responses")
    live.scroll_into_view_if_needed()
    run.screenshot("fixes-switched")
    assert run.page_errors == []
