"""The view as a user sees it in a real JupyterLab, light and dark: a long session (22 turns),
a hostile tool result (tags, a very long line, right-to-left text, emoji) shown as text that
stays inside its pane, the warmth header in the dark theme, and a message-thread request whose
request pane says how many new messages it sent beside the whole thread in the model context.
Screenshots go to tests/artifacts/look-*.png."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from .conftest import ARTIFACTS, LabRun, LabServer, expect, run_notebook
from .test_themes import _SCAN_JS, MINIMUM, _theme

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

NAME = "look/look.ipynb"
HOSTILE_TOOL = """\
from dtl_notebook import Session, Tool
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live import Agent, ScriptedPolicy

RESULT = (
    "<script>window.__dtlPwned = 1</script><b>bold?</b> <img src=x onerror=alert(1)> "
    + "x" * 3000
    + " שלום עולם مرحبا بالعالم 🙂🚀👩‍👩‍👧 end"
)
fetch = Tool(
    "fetch_page",
    description="Fetch a page",
    parameters={"type": "object", "properties": {"url": {"type": "string"}}},
    execute=lambda url="": RESULT,
)
policy = ScriptedPolicy([{"call": "fetch_page", "arguments": {"url": "x"}}, {"text": "done"}])
hostile = Agent(
    Session(system="You help.", tools=[fetch], active=["fetch_page"], search=None),
    "anthropic", DEMO_MODELS["anthropic"], policy=policy,
)"""
LONG = """\
from dtl_notebook import Session
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent

session = Session(tools=demo_catalog(), active=["tool_search"])
long = Agent(session, "anthropic", "claude-sonnet-4-6")
for i in range(21):
    long.run(f"Turn {i}: what is the shipping ETA of order_{i}?")"""
CELLS: list[str | tuple[str, str]] = [
    "%load_ext dtl_notebook",
    HOSTILE_TOOL,
    "%%agent --session hostile\nFetch the page, please.",
    LONG,
    "%%agent --session long\nAnd the weather in Paris?",
    "%%agent --session threaded --provider anthropic --threads\nWhat is the ETA of order_42?",
    "%%agent --session threaded\nAnd the weather in Paris?",
]


@pytest.fixture(scope="module")
def run(browser: Browser, lab: LabServer) -> Iterator[LabRun]:
    lab.write_notebook(NAME, CELLS)
    handle = run_notebook(browser, lab, NAME, workspace="look", timeout_s=300)
    try:
        yield handle
    finally:
        handle.close()


def _view(run: LabRun, index: int) -> Locator:
    return run.page.locator(".jp-OutputArea-output .dtl-view").nth(index)


def _open_all(view: Locator) -> None:
    """Open every collapsed item (their bodies come from the kernel on opening)."""
    view.evaluate("v => v.querySelectorAll('details').forEach((d) => { d.open = true; })")


def _assert_nothing_sideways(view: Locator) -> None:
    """No pane scrolls sideways: every line wraps inside it."""
    wide = view.evaluate(
        "v => [...v.querySelectorAll('.dtl-pane-body')]"
        ".filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.parentElement.className)"
    )
    assert wide == []


def _shoot(target: Locator | Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(ARTIFACTS / f"look-{name}.png"))


def test_a_hostile_tool_result_is_text_inside_its_pane(run: LabRun) -> None:
    view = _view(run, 0)
    boxes = view.locator(".dtl-timeline .dtl-tl-item")
    boxes.last.click()
    _open_all(view)
    request = view.locator(".dtl-pane-request")
    expect(request).to_contain_text("<script>window.__dtlPwned = 1</script>")
    assert run.page.evaluate("() => window.__dtlPwned") is None
    assert view.locator("img").count() == 0 and view.locator("b:text('bold?')").count() == 0
    context = view.locator(".dtl-pane-context")
    expect(context).to_contain_text("שלום עולם")
    # the first box says in full that it is below the minimum, beside its provider
    for part in (".dtl-tl-provider", ".dtl-tl-note"):
        label = boxes.first.locator(part)
        assert label.evaluate("e => e.scrollWidth <= e.clientWidth"), part
    view.scroll_into_view_if_needed()
    _shoot(view, "hostile-light")
    _theme(run.page, "JupyterLab Dark", False)
    _shoot(view, "hostile-dark")
    _theme(run.page, "JupyterLab Light", True)
    _assert_nothing_sideways(view)  # a 3,000-character word wraps inside its pane


def test_a_long_session_keeps_its_timeline_and_panes(run: LabRun) -> None:
    view = _view(run, 1)
    boxes = view.locator(".dtl-timeline .dtl-tl-item")
    assert boxes.count() >= 22
    newest = boxes.last
    # the newest request is selected and scrolled into the strip's view
    expect(newest).to_have_class(re.compile("dtl-tl-selected"))
    strip = view.locator(".dtl-timeline").bounding_box()
    box = newest.bounding_box()
    assert strip and box and box["x"] + box["width"] <= strip["x"] + strip["width"] + 1
    _assert_nothing_sideways(view)  # a load point of five tools wraps inside its pane
    view.scroll_into_view_if_needed()
    _shoot(view, "long-light")
    _theme(run.page, "JupyterLab Dark", False)
    _shoot(view, "long-dark")
    _theme(run.page, "JupyterLab Light", True)


def test_the_warmth_header_reads_in_the_dark_theme(run: LabRun) -> None:
    page = run.page
    _theme(page, "JupyterLab Dark", False)
    try:
        view = _view(run, 1)
        header = view.locator(".dtl-head")
        expect(header.locator(".dtl-warm")).to_have_text(re.compile(r"^warm .* left$"))
        found = page.evaluate(_SCAN_JS, ".jp-OutputArea-output .dtl-head, .dtl-timeline")
        warmth = [x for x in found if re.search(r"dtl-(warm|health|tl-warm)", x["cls"])]
        assert warmth, found[:5]
        low = [x for x in warmth if x["ratio"] < MINIMUM]
        assert not low, low
        _shoot(header, "warmth-header-dark")
        _shoot(view.locator(".dtl-timeline"), "timeline-dark")
    finally:
        _theme(page, "JupyterLab Light", True)


def test_a_thread_continuation_shows_its_new_messages_beside_the_whole_thread(
    run: LabRun,
) -> None:
    view = _view(run, 2)
    boxes = view.locator(".dtl-timeline .dtl-tl-item")
    boxes.last.click()
    request = view.locator(".dtl-pane-request")
    context = view.locator(".dtl-pane-context")
    expect(request.locator(".dtl-thread")).to_contain_text(re.compile(r"\d+ new message\(s\) sent"))
    expect(context.locator(".dtl-thread")).to_contain_text("the whole thread:")
    view.scroll_into_view_if_needed()
    _shoot(view, "threads-light")
    _theme(run.page, "JupyterLab Dark", False)
    _shoot(view, "threads-dark")
    _theme(run.page, "JupyterLab Light", True)
    assert run.page_errors == []
