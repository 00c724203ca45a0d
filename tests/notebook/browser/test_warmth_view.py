"""Cache warmth in a real JupyterLab: the header counts down what is warm in the page itself
(the kernel is not asked again), the newest timeline box counts down with it, the session's
hit rate and money are in the header, and a collapse shows as an alert and on its box."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from .conftest import ARTIFACTS, LabRun, LabServer, expect, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

NAME = "warmth/warmth.ipynb"
CELLS: list[str | tuple[str, str]] = [
    "%load_ext dtl_notebook",
    "%%agent --provider anthropic\nWhat is the shipping ETA of order_42?",
    # the demo prefix is small: a lower threshold makes the system change below a collapse
    "from dtl_notebook.cache.collapse import MissThresholds\n"
    "agent.miss_thresholds = MissThresholds(min_tokens=100)\n"
    "agent.session.prompt['preamble'] = 'You are a careful shipping assistant.'",
    "%%agent\nAnd the weather in Paris?",
]
WARM = re.compile(r"^warm [\d,]+ tok · 4:[0-5]\d left$")


@pytest.fixture(scope="module")
def run(browser: Browser, lab: LabServer) -> Iterator[LabRun]:
    lab.write_notebook(NAME, CELLS)
    handle = run_notebook(browser, lab, NAME, workspace="warmth")
    try:
        yield handle
    finally:
        handle.close()


def _live(run: LabRun) -> Locator:
    return run.page.locator(".jp-OutputArea-output .dtl-view").last


def test_the_header_counts_down_in_the_page(run: LabRun) -> None:
    header = _live(run).locator(".dtl-head")
    warm = header.locator(".dtl-warm")
    expect(warm).to_have_text(WARM)
    first = warm.text_content() or ""
    # the page ticks by itself: the text changes with no message from the kernel
    run.page.wait_for_function(
        "([el, before]) => el.textContent !== before && /left$/.test(el.textContent)",
        arg=[warm.element_handle(), first],
        timeout=5_000,
    )
    assert WARM.match(warm.text_content() or "")
    expect(header.locator(".dtl-health")).to_have_text(re.compile(r"^hit \d+% · \$[\d.]+ of \$"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    header.screenshot(path=str(ARTIFACTS / "warmth-header.png"))


def test_the_newest_box_counts_down_and_a_collapse_is_marked(run: LabRun) -> None:
    live = _live(run)
    boxes = live.locator(".dtl-timeline .dtl-tl-item")
    newest = boxes.last
    expect(newest.locator(".dtl-tl-warm")).to_have_text(re.compile(r"^warm 4:[0-5]\d$"))
    expect(boxes.first.locator(".dtl-tl-warm")).to_have_text("")  # past: superseded
    expect(live.locator(".dtl-miss-alert")).to_contain_text("cache miss (changed, system_changed)")
    expect(live.locator(".dtl-tl-miss")).to_have_count(1)
    expect(live.locator(".dtl-tl-miss")).to_have_text("miss: changed")
    run.screenshot("warmth-view")
