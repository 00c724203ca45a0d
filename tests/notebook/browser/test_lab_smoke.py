"""Smoke tests for the browser infrastructure: inline anywidget in Lab, file:// page offline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .conftest import LabServer, expect, open_offline_file, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser

WIDGET_CELL = '''import anywidget
import traitlets


class Smoke(anywidget.AnyWidget):
    _esm = """
    function render({ model, el }) {
      const div = document.createElement("div");
      div.className = "smoke";
      const draw = () => { div.textContent = model.get("text"); };
      draw();
      model.on("change:text", draw);
      el.appendChild(div);
      return () => model.off("change:text", draw);
    }
    export default { render };
    """
    _css = ".smoke { padding: 8px; border: 2px solid #3b7dd8; border-radius: 6px; }"
    text = traitlets.Unicode("").tag(sync=True)


w = Smoke(text="initial")
w'''

SYNC_CELL = """from pathlib import Path

import dtl_notebook

w.text = Path("smoke-data.txt").read_text().strip() + " via " + dtl_notebook.__name__"""


def test_inline_anywidget_renders_in_lab(browser: Browser, lab: LabServer) -> None:
    (lab.root / "smoke" / "smoke-data.txt").parent.mkdir(parents=True, exist_ok=True)
    (lab.root / "smoke" / "smoke-data.txt").write_text("hello from disk\n")
    lab.write_notebook(
        "smoke/smoke.ipynb",
        [
            ("markdown", "# Browser smoke"),
            "import sys\nprint(sys.executable)",
            WIDGET_CELL,
            SYNC_CELL,
        ],
    )

    run = run_notebook(browser, lab, "smoke/smoke.ipynb", workspace="smoke")

    widget = run.page.locator(".jp-OutputArea-output .smoke")
    expect(widget).to_have_count(1)
    # The kernel-side update (file next to the notebook + package import) reached the view.
    expect(widget).to_have_text("hello from disk via dtl_notebook")
    stream = run.page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']"
    )
    expect(stream.first).to_have_text(sys.executable)
    shot = run.screenshot("lab-smoke")
    assert shot.is_file()
    assert run.external_requests == []
    assert run.page_errors == []
    assert run.console_errors == []


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>offline</title></head>
<body>
<div id="out">pending</div>
<img src="https://example.invalid/pixel.png" alt="">
<script>
  document.getElementById("out").textContent = "rendered offline";
  fetch("https://example.invalid/data.json").catch(() => {
    document.body.dataset.fetch = "blocked";
  });
</script>
</body></html>
"""


def test_file_page_with_network_blocked(browser: Browser, tmp_path: Path) -> None:
    html = tmp_path / "offline.html"
    html.write_text(PAGE, encoding="utf-8")

    handle = open_offline_file(browser, html)

    expect(handle.page.locator("#out")).to_have_text("rendered offline")
    expect(handle.page.locator("body")).to_have_attribute("data-fetch", "blocked")
    assert sorted(handle.external_requests) == [
        "https://example.invalid/data.json",
        "https://example.invalid/pixel.png",
    ]
    assert handle.page_errors == []
