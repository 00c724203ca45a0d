"""The proxy's live view in a real JupyterLab: `%dtl proxy start` in the kernel, then an agent
outside the kernel (this test, with the real anthropic SDK) sends requests through it while
the page is watched: the timeline grows request by request, the break and the reported
figures appear, and the conversation picker switches conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anthropic

from dtl_notebook.live.emulator.server import EmulatorServer

from .conftest import LabServer, _free_port, expect, run_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

RULES = "You are a careful logistics assistant. Follow the house rules. " * 160  # past the minimum
HOSTILE = '<img src=x onerror="window.__xss=1">'


def _ask(client: anthropic.Anthropic, system: str, messages: list[Any], text: str) -> None:
    messages.append({"role": "user", "content": text})
    reply = client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=100,
        system=system,
        cache_control={"type": "ephemeral"},
        messages=messages,
    )
    messages.append({"role": "assistant", "content": reply.content})


def _items(view: Locator) -> Locator:
    return view.locator(".dtl-tl-item")


def test_the_proxy_view_updates_while_requests_flow(browser: Browser, lab: LabServer) -> None:
    port = _free_port()
    with EmulatorServer() as upstream:
        cells: list[str | tuple[str, str]] = [
            ("markdown", "# The proxy, live"),
            "%load_ext dtl_notebook",
            f"view = %dtl proxy start --port {port} --store proxy.sqlite "
            f"--upstream-anthropic {upstream.url} --diagnostics\nview",
        ]
        lab.write_notebook("proxy/live.ipynb", cells)
        run = run_notebook(browser, lab, "proxy/live.ipynb", workspace="proxy")
        page = run.page
        view = page.locator(".jp-OutputArea-output .dtl-view").last
        expect(view).to_be_visible()
        expect(view.locator(".dtl-timeline")).to_contain_text("No request yet.")
        picker = page.locator(".jp-OutputArea-output .dtl-conv-picker").last
        expect(picker).to_be_visible()
        expect(view.locator(".dtl-status")).to_contain_text(f"running on http://127.0.0.1:{port}")

        client = anthropic.Anthropic(
            base_url=f"http://127.0.0.1:{port}", api_key="sk-ant-browser-0000", max_retries=0
        )
        messages: list[Any] = []
        _ask(client, RULES, messages, "Where is order_42?")
        expect(_items(view)).to_have_count(1)  # pushed from the kernel's background thread
        expect(view.locator(".dtl-title")).to_contain_text("c1")
        _ask(client, RULES, messages, f"And order_43? {HOSTILE}")
        expect(_items(view)).to_have_count(2)
        expect(view.locator(".dtl-tl-item .dtl-reported")).to_have_count(2)
        expect(view.locator(".dtl-tl-break")).to_have_count(0)
        _ask(client, RULES + " Time: 09:01", messages, "Can it be cancelled?")
        expect(_items(view)).to_have_count(3)
        expect(view.locator(".dtl-tl-break")).to_have_count(1)
        expect(view.locator(".dtl-break")).to_contain_text("system")
        expect(view.locator(".dtl-pane-context")).to_contain_text("agree")
        # a collapsed message opens to its text, shown as text (once the response is in: its
        # figures redraw the panes)
        expect(view.locator(".dtl-tl-item .dtl-reported")).to_have_count(3)
        _items(view).nth(2).click()  # pin the third request
        message = view.locator(".dtl-pane-request details", has_text="messages[2] user").first
        message.locator("summary").first.click()
        expect(message).to_contain_text("onerror")
        assert page.evaluate("window.__xss") is None
        run.screenshot("proxy-view-live")

        _ask(client, "Another agent entirely.", [], "Hello")
        expect(view.locator(".dtl-title")).to_contain_text("c2")  # follows the newest
        expect(_items(view)).to_have_count(1)
        expect(picker.locator("option")).to_have_count(3)
        picker.select_option("c1")
        expect(view.locator(".dtl-title")).to_contain_text("c1")
        expect(_items(view)).to_have_count(3)
        _ask(client, "Another agent entirely.", [{"role": "user", "content": "Hello"}], "x")
        page.wait_for_timeout(500)
        expect(_items(view)).to_have_count(3)  # pinned to c1 while c2 grows
        expect(picker.locator("option").nth(1)).to_contain_text("c2")
        run.screenshot("proxy-view-picked")

        page.wait_for_timeout(300)
        assert page.evaluate("() => window.__xss") is None
        assert view.locator("img").count() == 0
        assert run.external_requests == []
        assert run.page_errors == []
        assert run.console_errors == []
