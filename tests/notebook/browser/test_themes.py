"""Every text element of the view and of the static outputs reads at 4.5:1 or more, in
JupyterLab's light and dark themes and in the export (both colour schemes); at 1024 px the
panes stack at full width and static tables read left to right.

Contrast is WCAG 2's, computed from the page's computed colours: the text colour (its alpha
and its ancestors' opacity) blended over the element's effective background (every
translucent background up to the first opaque one). Screenshots: $DTL_SHOTS (optional).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .conftest import LabServer, expect, open_offline_file, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

MINIMUM = 4.5
CELLS: list[str | tuple[str, str]] = [
    "%load_ext dtl_notebook",
    "%%agent --provider anthropic\nWhat is the shipping ETA of order_42?",
    "%dtl activate get_current_weather",
    "%%agent\nAnd the weather in Paris?",
    "%dtl show 4",
    "%dtl diff 3 4",
    "%dtl diff 4 anthropic openai-responses",
    "%dtl compare",
    "%%agent --session small --provider openai-responses\nWhat is the shipping ETA of order_42?",
    "from IPython.display import HTML\n"
    "from dtl_notebook.notebook.display import agent_html\nHTML(agent_html(agent))",
    "%dtl export session.html",
]

# every element with its own visible text under `roots`, and its contrast
_SCAN_JS = """
(roots) => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => top.slice(0, 3).map((v, i) => top[3] * v + (1 - top[3]) * under[i]);
  const lum = (c) => {
    const [r, g, b] = c.map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const out = [];
  const seen = new Set();
  for (const root of document.querySelectorAll(roots)) {
    for (const el of [root, ...root.querySelectorAll("*")]) {
      if (seen.has(el)) continue;
      seen.add(el);
      const own = Array.from(el.childNodes).some(
        (n) => n.nodeType === 3 && n.textContent.trim().length > 0);
      if (!own || !el.getClientRects().length) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === "hidden" || cs.display === "none") continue;
      const layers = [];
      let alpha = 1;
      let base = null;
      for (let n = el; n; n = n.parentElement) {
        const s = getComputedStyle(n);
        alpha *= Number(s.opacity);
        const bg = parse(s.backgroundColor);
        if (bg && bg[3] > 0) {
          if (bg[3] >= 1) { base = bg.slice(0, 3); break; }
          layers.push(bg);
        }
      }
      let bg = base || [255, 255, 255];
      for (const layer of layers.reverse()) bg = over(layer, bg);
      const fg = parse(cs.color);
      if (!fg) continue;
      const text = over([fg[0], fg[1], fg[2], fg[3] * alpha], bg);
      const [hi, lo] = [lum(text), lum(bg)].sort((a, b) => b - a);
      const ratio = (hi + 0.05) / (lo + 0.05);
      out.push({ratio, text: el.textContent.trim().slice(0, 50), tag: el.tagName,
                cls: String(el.className).slice(0, 60), fg: cs.color,
                bg: `rgb(${bg.map(Math.round).join(",")})`});
    }
  }
  return out;
}
"""
_OPEN_ALL_JS = (
    "(roots) => document.querySelectorAll(roots).forEach((r) => "
    "r.querySelectorAll('details').forEach((d) => { d.open = true; }))"
)


def _scan(page: Page, roots: str) -> tuple[float, list[dict[str, Any]]]:
    page.evaluate(_OPEN_ALL_JS, roots)
    page.wait_for_timeout(1500)  # lazy bodies arrive from the kernel
    found = page.evaluate(_SCAN_JS, roots)
    assert len(found) > 200, f"too few text elements under {roots}: {len(found)}"
    low = sorted((x for x in found if x["ratio"] < MINIMUM), key=lambda x: x["ratio"])
    return min(x["ratio"] for x in found), low


def _shot(page: Page, name: str, selector: str | None = None) -> None:
    folder = os.environ.get("DTL_SHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    target = page.locator(selector).last if selector else page
    target.screenshot(path=str(Path(folder) / f"{name}.png"))


def _theme(page: Page, name: str, light: bool) -> None:
    page.evaluate(
        "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", name
    )
    flag = "true" if light else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{flag}'")
    page.wait_for_timeout(800)


ROOTS = ".jp-OutputArea-output .dtl-view, .jp-OutputArea-output .jp-RenderedHTMLCommon"


def test_contrast_in_both_themes_and_the_1024_px_layout(browser: Browser, lab: LabServer) -> None:
    lab.write_notebook("themes/themes.ipynb", CELLS)
    run = run_notebook(browser, lab, "themes/themes.ipynb", workspace="themes", timeout_s=300)
    page = run.page
    expect(page.locator(".jp-OutputArea-output .dtl-view").first).to_be_visible()
    minimums = {}
    for theme, light in (("JupyterLab Light", True), ("JupyterLab Dark", False)):
        _theme(page, theme, light)
        lowest, failing = _scan(page, ROOTS)
        minimums[theme] = lowest
        _shot(page, f"lab-{'light' if light else 'dark'}-view", ".jp-OutputArea-output .dtl-view")
        _shot(page, f"lab-{'light' if light else 'dark'}-diff", ".dtl-rdiff")
        _shot(page, f"lab-{'light' if light else 'dark'}-page")
        assert not failing, f"{theme}: {len(failing)} below {MINIMUM}:1, lowest {failing[:8]}"
    print(f"contrast minimums: {minimums}")

    page.set_viewport_size({"width": 1024, "height": 900})
    page.wait_for_timeout(800)
    view = page.locator(".jp-OutputArea-output .dtl-view").last
    view.scroll_into_view_if_needed()
    boxes = [view.locator(f".dtl-pane-{p}").bounding_box() for p in ("state", "request", "context")]
    assert all(boxes)
    xs = {round(b["x"]) for b in boxes if b}
    assert len(xs) == 1, boxes  # stacked, not three 190-px columns
    width = view.evaluate("e => e.clientWidth")
    assert all(b and b["width"] > 0.9 * width for b in boxes), (width, boxes)  # full width
    assert view.locator(".dtl-pane-body").first.evaluate("e => getComputedStyle(e).resize") == (
        "vertical"
    )
    aligned = page.evaluate(
        "() => Array.from(document.querySelectorAll('.jp-OutputArea-output .dtl-static td'))"
        ".map((td) => getComputedStyle(td).textAlign)"
    )
    assert aligned and set(aligned) == {"left"}, set(aligned)
    _shot(page, "lab-dark-1024", ".jp-OutputArea-output .dtl-view")
    _theme(page, "JupyterLab Light", True)
    _shot(page, "lab-light-1024", ".jp-OutputArea-output .dtl-view")
    assert run.page_errors == []

    handle = open_offline_file(browser, lab.root / "themes" / "session.html")
    export = handle.page
    expect(export.locator("body")).to_have_attribute("data-rendered", "1")
    for scheme in ("light", "dark"):
        export.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        export.wait_for_timeout(300)
        lowest, failing = _scan(export, "#dtl-root")
        print(f"export {scheme}: minimum {lowest:.2f}")
        _shot(export, f"export-{scheme}")
        assert not failing, f"export {scheme}: {failing[:8]}"
    assert handle.external_requests == []
