"""The three-pane view in a real JupyterLab, and the exported page from file://, offline."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import ARTIFACTS, LabServer, _new_page, expect, open_offline_file, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = (
    '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> '
    '[click](javascript:window.__xss=3) <a href="javascript:window.__xss=4">link</a>'
)
CELLS: list[str | tuple[str, str]] = [
    ("markdown", "# The view, twice"),
    "%load_ext dtl_notebook",
    "%%agent --provider anthropic\nWhat is the shipping ETA of order_42?",
    f"hostile = {HOSTILE!r}\nprint('payload ready')",
    "%%agent\nAnd the weather in Paris? {hostile}",
    "%dtl export session.html",
]


def _luminance(css_colour: str) -> float:
    r, g, b = (float(x) for x in re.findall(r"[\d.]+", css_colour)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def _no_script_ran(page: Page) -> None:
    page.wait_for_timeout(500)  # time for a would-be onerror to fire
    assert page.evaluate("() => window.__xss") is None
    outputs = page.locator(".dtl-view")
    assert outputs.locator("img").count() == 0
    assert outputs.locator("script").count() == 0
    assert outputs.locator("a[href^='javascript']").count() == 0


def _check_linking(page: Page, view: str = ".dtl-view") -> None:
    """Hovering a load point highlights the same load point in all three panes."""
    root = page.locator(view).last
    marker = root.locator(".dtl-pane-state mark.dtl-link").first
    expect(marker).to_be_visible()
    marker.hover()
    for pane in ("state", "request", "context"):
        expect(root.locator(f".dtl-pane-{pane} .dtl-hl").first).to_be_attached()
    marker.click()  # pins it: the other panes scroll there (hovering never scrolls)
    # The loaded schema is in the context pane and was scrolled into the pane's view.
    loaded = root.locator(".dtl-pane-context .dtl-hl").first
    expect(loaded).to_contain_text("loaded_schema")
    expect(loaded).to_be_in_viewport()


def _check_timeline(page: Page, view: str = ".dtl-view") -> None:
    root = page.locator(view).last
    items = root.locator(".dtl-tl-item")
    assert items.count() >= 4
    expect(root.locator(".dtl-request-title")).to_contain_text(f"Request {items.count()}")
    items.first.click()
    # While the panes are fetched the title says "loading…" and the old panes are dimmed.
    expect(root.locator(".dtl-request-title")).to_have_text(re.compile(r"^Request 1 · turn 1 "))
    expect(root.locator(".dtl-panes")).not_to_have_attribute("aria-busy", "true")
    expect(root.locator(".dtl-pane-request .dtl-pane-body")).to_contain_text("max_tokens")
    expect(items.first).to_have_class("dtl-tl-item dtl-tl-selected")
    # The first request has no load point yet: the model context holds no loaded schema.
    expect(root.locator(".dtl-pane-context").get_by_text("loaded_schema")).to_have_count(0)
    items.last.click()
    expect(root.locator(".dtl-pane-context").get_by_text("loaded_schema").first).to_be_visible()


def test_view_in_jupyterlab(browser: Browser, lab: LabServer) -> None:
    lab.write_notebook("view/view.ipynb", CELLS)
    run = run_notebook(browser, lab, "view/view.ipynb", workspace="view")
    page = run.page
    views = page.locator(".jp-OutputArea-output .dtl-view")
    expect(views).to_have_count(1)  # one live view: the newest cell's
    view = views.last
    for pane in ("state", "request", "context"):
        body = view.locator(f".dtl-pane-{pane} .dtl-pane-body")
        expect(body).not_to_be_empty()
    expect(view.locator(".dtl-pane-state")).to_contain_text("Active tools")
    expect(view.locator(".dtl-pane-request")).to_contain_text("carrier: tool_reference")
    expect(view.locator(".dtl-pane-context")).to_contain_text("loaded_schema")
    expect(view.locator(".dtl-status")).to_have_text("idle")
    # The first cell's output keeps its own turn, as static HTML.
    first = page.locator(".jp-OutputArea-output .dtl-static:visible")  # the live one hides
    expect(first).to_have_count(1)
    expect(first).to_contain_text("turn 1")
    expect(first).not_to_contain_text("turn 2")
    # The panes sit side by side.
    boxes = [view.locator(f".dtl-pane-{p}").bounding_box() for p in ("state", "request", "context")]
    assert all(boxes)
    assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]  # type: ignore[index]
    assert abs(boxes[0]["y"] - boxes[2]["y"]) < 2  # type: ignore[index]
    # The hostile user message is shown as text in the transcript.
    expect(view.locator(".dtl-pane-state")).to_contain_text("onerror")
    _no_script_ran(page)
    # The light theme first (the lab server's settings keep whichever theme a test left).
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Light'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
    page.wait_for_timeout(300)
    background = view.evaluate("el => getComputedStyle(el).backgroundColor")
    assert _luminance(background) > 0.7, background
    view.scroll_into_view_if_needed()
    run.screenshot("view-lab")
    # A collapsed item's body is fetched from the kernel when opened.
    summary = view.locator(".dtl-pane-request details:has(.dtl-pending) > summary").first
    summary.click()
    expect(view.locator(".dtl-pane-request .dtl-body").first).to_contain_text('"')
    _check_linking(page, ".jp-OutputArea-output .dtl-view")
    run.screenshot("view-lab-linked")
    _check_timeline(page, ".jp-OutputArea-output .dtl-view")
    _no_script_ran(page)
    # Dark theme: the view follows JupyterLab's CSS variables.
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(300)
    background = view.evaluate("el => getComputedStyle(el).backgroundColor")
    assert _luminance(background) < 0.3, background
    run.screenshot("view-lab-dark")
    assert run.external_requests == []
    assert run.page_errors == []
    assert run.console_errors == []

    exported = lab.root / "view" / "session.html"
    assert exported.is_file()
    handle = open_offline_file(browser, exported)
    page = handle.page
    expect(page.locator("body")).to_have_attribute("data-rendered", "1")
    expect(page.locator(".dtl-tl-item")).to_have_count(views.last.locator(".dtl-tl-item").count())
    _check_linking(page)
    handle.screenshot("view-export")
    _check_timeline(page)
    _no_script_ran(page)
    assert handle.external_requests == []
    assert handle.page_errors == []


def test_tour_notebook(browser: Browser, lab: LabServer) -> None:
    """`make demo`'s notebook runs in Lab; its screenshot is the README's."""
    tour = ROOT / "notebooks" / "01_tour.ipynb"
    if not tour.is_file():
        raise AssertionError("notebooks/01_tour.ipynb is missing")
    lab.copy_notebook(tour, "tour/01_tour.ipynb")
    for extra in (ROOT / "notebooks" / "data").glob("*"):
        lab.copy_file(extra, f"tour/data/{extra.name}")
    run = run_notebook(browser, lab, "tour/01_tour.ipynb", workspace="tour", timeout_s=300)
    page = run.page
    view = page.locator(".jp-OutputArea-output .dtl-view").last
    expect(view.locator(".dtl-pane-context .dtl-pane-body")).not_to_be_empty()
    assert (
        page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        ).count()
        == 0
    )
    view.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "tour-view.png"
    view.screenshot(path=str(shot))
    if os.environ.get("DTL_UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, ROOT / "docs" / "view.png")
    assert run.external_requests == []
    assert run.page_errors == []


def test_view_in_notebook7(browser: Browser, lab: LabServer) -> None:
    """The same view in the Notebook 7 interface (served by the same Jupyter server)."""
    pytest.importorskip("notebook", minversion="7")
    lab.write_notebook("nb7/view.ipynb", CELLS[1:3])
    page = _new_page(browser)
    external: list[str] = []

    def guard(route: Route) -> None:
        url = route.request.url
        if url.startswith((lab.base, "data:", "blob:")):
            route.continue_()
        else:
            external.append(url)
            route.abort()

    page.route("**/*", guard)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message}\n{exc.stack or ''}"))
    try:
        page.goto(f"{lab.base}/notebooks/nb7/view.ipynb?token={lab.token}", timeout=120_000)
        idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
        expect(idle).to_be_attached(timeout=120_000)
        page.wait_for_timeout(3000)  # the kernel's websocket settles after the first idle
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        view = page.locator(".jp-OutputArea-output .dtl-view")
        expect(view).to_have_count(1, timeout=120_000)
        expect(view.locator(".dtl-status")).to_have_text("idle", timeout=120_000)
        for pane in ("state", "request", "context"):
            expect(view.locator(f".dtl-pane-{pane} .dtl-pane-body")).not_to_be_empty()
        expect(view.locator(".dtl-tl-item")).to_have_count(3)
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "view-notebook7.png"))
        lab.shutdown_sessions("nb7/view.ipynb")
        page.context.close()
    assert external == []
    # Notebook 7.6 itself reports a few errors while it restores its layout (they appear with
    # or without the view); none may come from the view's module (loaded from a blob: URL).
    assert [e for e in errors if "blob:" in e or "dtl" in e] == []
