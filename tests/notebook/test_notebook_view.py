"""`AgentView`: incremental updates, the custom-message protocol, displays, provider switch,
short reprs, the extension's HTML formatters, and `export_html`."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from dtl_notebook.agent import files as files_module
from dtl_notebook.cache import analyze
from dtl_notebook.demo import DEMO_MODELS, demo_session
from dtl_notebook.live import Agent, AgentEvent, TurnError
from dtl_notebook.notebook import AgentView, export_html, view_messages
from dtl_notebook.notebook.copying import copy_text
from dtl_notebook.notebook.records import from_capture
from dtl_notebook.wire import build_request
from tests.support.notebook_shell import (
    ETA,
    WEATHER,
    WIDGET_MIME,
    FlakyTransport,
    write_capture,
)

PLAIN = re.compile(
    r"AgentView\(provider=[a-z-]+, requests=\d+, tools=(?:\d+(?:/\d+)?|-), "
    r"cached=\d+%, breaks=\d+\)"
)


def demo_agent(provider: str = "anthropic", **kwargs: Any) -> Agent:
    return Agent(demo_session(), provider, DEMO_MODELS[provider], **kwargs)


def refs_in(html: str) -> list[str]:
    """The refs of collapsed bodies, read as the front end reads them (a class token)."""
    refs = []
    for classes in re.findall(r'class="([^"]*)"', html):
        refs += [c.removeprefix("dtl-ref:") for c in classes.split() if c.startswith("dtl-ref:")]
    return refs


def pane_refs(panes: dict[str, Any]) -> list[str]:
    return refs_in("".join(str(panes.get(n, "")) for n in ("state", "request", "context")))


class Sent:
    """Stands in for `view.send`: keeps every custom message the view sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, content: dict[str, Any], buffers: Any = None) -> None:
        self.messages.append(content)


@pytest.fixture
def ran() -> tuple[Agent, AgentView]:
    agent = demo_agent()
    view = AgentView(agent)
    agent.run(ETA)
    return agent, view


@pytest.fixture
def sent(ran: tuple[Agent, AgentView], monkeypatch: pytest.MonkeyPatch) -> Sent:
    recorder = Sent()
    monkeypatch.setattr(ran[1], "send", recorder)
    return recorder


# -- following a turn --------------------------------------------------------------------------
def test_timeline_items_arrive_one_by_one_while_the_turn_runs() -> None:
    agent = demo_agent()
    view = AgentView(agent)
    view.flush_s = 0  # no coalescing: one update per step
    assert view.count == 0 and view.tail == {"start": 0, "items": []}
    updates: list[tuple[str, Any, int]] = []
    view.observe(
        lambda change: updates.append((change["name"], change["new"], len(agent.steps))),
        names=["tail", "count"],
    )
    agent.run(ETA)
    tails = [new for name, new, _ in updates if name == "tail"]
    counts = [new for name, new, _ in updates if name == "count"]
    assert counts == [1, 2, 3]
    assert len(tails) == 3
    for k, tail in enumerate(tails):
        assert tail["start"] == k
        assert len(tail["items"]) == 1  # only the new item, never the history
        assert tail["items"][0]["index"] == k
    assert all(steps == 0 for _, _, steps in updates)  # sent before the turn ended
    assert len(agent.steps) == 3 and view.count == 3
    # each item tells what its request was: the search, the call, the answer
    items = [tail["items"][0] for tail in tails]
    assert [item["calls"] for item in items] == [["tool_search"], ["get_shipping_eta"], []]
    searched = agent.steps[0].results[0].added_tool_names or []
    assert searched and [item["loads"] for item in items] == [0, len(searched), 0]
    assert {(i["turn"], i["provider"], i["model"], i["mode"]) for i in items} == {
        (0, "anthropic", DEMO_MODELS["anthropic"], "tool_reference")
    }
    for item, step, before in zip(items, agent.steps, [None, *items], strict=False):
        usage = step.response["usage"]
        assert item["reported"] == {
            "cached": usage["cache_read_input_tokens"],
            "written": usage["cache_creation_input_tokens"],
            "uncached": usage["input_tokens"],
        }
        assert item["cached"] + item["written"] + item["uncached"] == item["total"]
        assert item["cached"] == (before["total"] if before else 0)  # the whole previous request
        assert item["break"] is None


def test_a_second_turn_sends_only_its_own_items(ran: tuple[Agent, AgentView]) -> None:
    agent, view = ran
    view.flush_s = 0
    tails: list[dict[str, Any]] = []
    view.observe(lambda change: tails.append(change["new"]), names=["tail"])
    agent.run(WEATHER)
    assert [t["start"] for t in tails] == list(range(3, len(agent.steps)))
    assert all(len(t["items"]) == 1 for t in tails)
    assert view.count == len(view.records) == len(agent.steps)
    assert [r.turn for r in view.records] == [s.turn for s in agent.steps]


def test_on_step_hears_every_event_after_the_view_updated() -> None:
    agent = demo_agent()
    view = AgentView(agent)
    view.flush_s = 0
    heard: list[tuple[str, int]] = []

    def on_step(event: AgentEvent) -> None:
        heard.append((event.kind, view.count))

    agent.run(ETA, on_step=on_step)
    assert heard == [("turn_start", 0), ("step", 1), ("step", 2), ("step", 3), ("turn_end", 3)]
    assert agent.listeners == [view._on_event]  # on_step is not kept


def test_header_status_while_running_and_after() -> None:
    agent = demo_agent()
    view = AgentView(agent)
    statuses: list[str] = []
    view.observe(lambda change: statuses.append(change["new"]["status"]), names=["header"])
    view.flush_s = 0
    agent.run(ETA)
    # One wording from the turn's start to its end (the header does not flip), then idle.
    assert statuses[:-1] == [f"running turn 1 · {n} request(s) done" for n in range(4)]
    assert statuses[-1] == "idle" and view.header["error"] is None
    assert view.header["provider"] == "anthropic" and view.header["live"] is True


def test_a_failed_turn_removes_its_pending_items(ran: tuple[Agent, AgentView]) -> None:
    agent, view = ran
    agent.use_transport(FlakyTransport(fail_at=2))  # the 2nd request of the next turn fails
    view.flush_s = 0
    counts: list[int] = []
    view.observe(lambda change: counts.append(change["new"]), names=["count"])
    with pytest.raises(TurnError):
        agent.run(WEATHER)
    assert counts == [4, 3]  # the pending item came and went
    assert view.count == len(view.records) == 3 == len(agent.steps)
    assert view.tail == {"start": 3, "items": []}
    assert view.panes["index"] == 2
    assert "turn failed" in view.header["error"] and view.header["status"] == "idle"
    agent.run(WEATHER)  # the next turn starts where the committed ones end
    assert view.header["error"] is None
    assert [r.index for r in view.records] == list(range(len(agent.steps)))
    assert view.count == len(agent.steps) > 3


def test_a_failed_first_turn_leaves_an_empty_view() -> None:
    agent = demo_agent(transport=FlakyTransport(fail_at=1))
    view = AgentView(agent)
    with pytest.raises(TurnError):
        agent.run(ETA)
    assert view.count == 0 and view.records == [] and view.panes == {}
    assert "No request yet" in view._repr_mimebundle_()[0]["text/html"]


# -- what the front end asks ---------------------------------------------------------------------
def test_selected_changes_the_panes(ran: tuple[Agent, AgentView]) -> None:
    _, view = ran
    assert view.panes["index"] == 2 and view.panes["title"].startswith("Request 3 ·")
    seen = {}
    for index in (0, 1, 2):
        view.selected = index
        assert view.panes["index"] == index
        assert view.panes["title"].startswith(f"Request {index + 1} · turn 1 · anthropic")
        seen[index] = view.panes["state"]
    assert len(set(seen.values())) == 3  # each request's own state
    view.selected = 99  # out of range: the newest request
    assert view.panes["index"] == 2
    view.selected = -1
    assert view.panes["index"] == 2 and set(view.panes) >= {"state", "request", "context", "break"}


def test_timeline_message_sends_the_requested_items(
    ran: tuple[Agent, AgentView], sent: Sent
) -> None:
    _, view = ran
    view._on_message(view, {"type": "timeline", "start": 0, "end": 3}, [])
    (whole,) = sent.messages
    assert (whole["type"], whole["start"]) == ("timeline", 0)
    assert [(i["index"], i["calls"]) for i in whole["items"]] == [
        (0, ["tool_search"]),
        (1, ["get_shipping_eta"]),
        (2, []),
    ]
    assert whole["items"][-1] == view.tail["items"][-1]  # the item the turn streamed
    sent.messages.clear()
    view._on_message(view, {"type": "timeline", "start": 1, "end": 2}, [])
    assert sent.messages == [{"type": "timeline", "start": 1, "items": [whole["items"][1]]}]
    sent.messages.clear()
    view._on_message(view, {"type": "timeline", "start": -5, "end": 999}, [])
    assert [(m["start"], len(m["items"])) for m in sent.messages] == [(0, 3)]
    sent.messages.clear()
    view._on_message(view, {"type": "nonsense"}, [])
    view._on_message(view, "not a dict", [])
    assert sent.messages == []


def test_timeline_message_is_chunked(
    ran: tuple[Agent, AgentView], sent: Sent, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, view = ran
    monkeypatch.setattr(view_messages, "CHUNK", 2)
    view._on_message(view, {"type": "timeline", "start": 0, "end": 3}, [])
    assert [(m["start"], [i["index"] for i in m["items"]]) for m in sent.messages] == [
        (0, [0, 1]),
        (2, [2]),
    ]


def _shown(fragment: str) -> str:
    """The text a reader sees of an HTML fragment: tags dropped, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _named(record: Any, ref: str) -> str:
    """The text of what a ref names (`request:<field>[.<i>]` as JSON indented by 2,
    `context:<i>` (pretty-printed where it is JSON), `state:section:<name>`), read from the
    record's own request."""
    pane, _, path = ref.partition(":")
    if pane == "request":
        name, _, index = path.partition(".")
        value = record.payload[name][int(index)] if index else record.payload[name]
        return json.dumps(value, indent=2, ensure_ascii=False)
    if pane == "context":
        text = str(record.context.segments[int(path)].text)
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text
    return str(record.state.sections[path.removeprefix("section:")])


def test_body_message_returns_each_collapsed_body(ran: tuple[Agent, AgentView], sent: Sent) -> None:
    _, view = ran
    for index in range(3):
        view.selected = index
        refs = pane_refs(view.panes)
        assert refs, "collapsed bodies are placeholders in the widget"
        assert "dtl-pending" in view.panes["request"]
        for ref in refs:
            view._on_message(view, {"type": "body", "index": index, "ref": ref}, [])
            reply = sent.messages[-1]
            assert reply["type"] == "body"
            assert (reply["index"], reply["ref"]) == (index, ref)
            assert _shown(reply["html"]) == _named(view.records[index], ref), ref
            assert "not in this request" not in reply["html"]
    view._on_message(view, {"type": "body", "index": 0, "ref": "request:messages.0"}, [])
    shown = json.loads(_shown(sent.messages[-1]["html"]))
    assert shown == {"role": "user", "content": [{"type": "text", "text": ETA}]}


def test_body_message_for_something_unknown(ran: tuple[Agent, AgentView], sent: Sent) -> None:
    _, view = ran
    view._on_message(view, {"type": "body", "index": 0, "ref": "request:nope"}, [])
    assert "not in this request" in sent.messages[-1]["html"]
    view._on_message(view, {"type": "body", "index": 7, "ref": "request:messages.0"}, [])
    assert sent.messages[-1]["html"] == ""
    view._on_message(view, {"type": "body", "index": -1, "ref": "request:messages.0"}, [])
    assert sent.messages[-1]["html"] == ""  # no preview yet


def test_body_message_for_a_preview(ran: tuple[Agent, AgentView], sent: Sent) -> None:
    _, view = ran
    record = view.switch("openai-responses")
    assert view.panes["index"] == -1
    refs = pane_refs(view.panes)
    assert refs
    for ref in refs:
        view._on_message(view, {"type": "body", "index": -1, "ref": ref}, [])
        assert _shown(sent.messages[-1]["html"]) == _named(record, ref), ref
        assert "not in this request" not in sent.messages[-1]["html"]


def test_captured_records_view(tmp_path: Path) -> None:
    agent = demo_agent("openai-responses")
    agent.run(ETA)
    records = from_capture(write_capture(agent, tmp_path / "log.jsonl"))
    view = AgentView(records=records, title="captured: log.jsonl")
    assert view.count == len(agent.steps) and view.providers == []
    assert view.header["label"] == "captured" and view.header["live"] is False
    items = view.tail["items"]
    assert [(i["index"], i["provider"], i["model"], i["mode"]) for i in items] == [
        (k, "openai-responses", DEMO_MODELS["openai-responses"], "captured") for k in range(3)
    ]
    for item, step in zip(items, agent.steps, strict=True):  # the usage the capture recorded
        usage = step.response["usage"]
        cached = usage["input_tokens_details"]["cached_tokens"]
        reported = {"cached": cached, "written": 0, "uncached": usage["input_tokens"] - cached}
        assert item["reported"] == reported
    recorder = Sent()
    view.send = recorder  # type: ignore[method-assign]
    for ref in pane_refs(view.panes):
        view._on_message(view, {"type": "body", "index": view.panes["index"], "ref": ref}, [])
        assert "not in this request" not in recorder.messages[-1]["html"]
    assert PLAIN.fullmatch(repr(view))


def test_a_view_needs_an_agent_or_records() -> None:
    with pytest.raises(TypeError):
        AgentView()


# -- displays ------------------------------------------------------------------------------------
def test_mimebundle(ran: tuple[Agent, AgentView]) -> None:
    agent, view = ran
    data, _ = view._repr_mimebundle_()
    assert data[WIDGET_MIME]["model_id"] == view.model_id
    plain = data["text/plain"]
    assert PLAIN.fullmatch(plain), plain
    session = agent.session
    assert plain.startswith(
        f"AgentView(provider=anthropic, requests=3, "
        f"tools={len(session.active_tools)}/{len(session.registry)}, cached="
    )
    assert repr(view) == plain and len(plain) < 200
    html = data["text/html"]
    for tag in ("<table", "<details", "<mark"):
        assert tag in html, tag
    assert "Request 3 ·" in html  # the panes of the newest request


def test_mimebundle_is_deterministic() -> None:
    bundles = []
    for _ in range(2):
        agent = demo_agent()
        agent.run(ETA)
        data, _ = AgentView(agent)._repr_mimebundle_()
        bundles.append((data["text/plain"], data["text/html"]))
    assert bundles[0] == bundles[1]


def test_mimebundle_follows_selected(ran: tuple[Agent, AgentView]) -> None:
    _, view = ran
    view.selected = 0
    assert "Request 1 ·" in view._repr_mimebundle_()[0]["text/html"]


def test_empty_view_displays() -> None:
    view = AgentView(demo_agent())
    data, _ = view._repr_mimebundle_()
    assert PLAIN.fullmatch(data["text/plain"])
    assert "requests=0" in data["text/plain"] and "No request yet" in data["text/html"]


# -- switching provider ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "mode"),
    [("kimi", "kimi"), ("openai-responses", "additional_tools"), ("openai-chat", "full_list")],
)
def test_switch_previews_the_same_session(
    ran: tuple[Agent, AgentView], provider: str, mode: str
) -> None:
    agent, view = ran
    loaded = [lp.tools for lp in agent.steps[-1].request.load_points]
    messages, steps = len(agent.session.messages), len(agent.steps)
    record = view.switch(provider)
    assert (agent.provider, agent.model) == (provider, DEMO_MODELS[provider])
    assert len(agent.steps) == steps and len(agent.session.messages) == messages  # not sent
    assert record.provider == provider and record.mode == mode
    assert record.label == "preview, not sent"
    assert len(record.messages) == messages
    if mode != "full_list":
        assert [lp.tools for lp in record.load_points] == loaded  # the same neutral facts
    assert view.preview is record
    assert view.panes["index"] == -1 and "preview, not sent" in view.panes["title"]
    assert view.header["provider"] == provider
    assert view.count == 3  # the timeline keeps what was sent


def test_a_preview_is_not_numbered_like_a_sent_request(ran: tuple[Agent, AgentView]) -> None:
    _, view = ran
    view.switch("kimi")
    title = view.panes["title"]
    assert "preview, not sent" in title
    assert not re.match(r"Request \d+ ·", title), title  # it was never sent: no number


def test_the_next_request_after_a_switch(ran: tuple[Agent, AgentView]) -> None:
    agent, view = ran
    view.switch("kimi")
    agent.run(WEATHER)
    assert view.preview is None
    assert view.records[3].provider == "kimi" and view.records[2].provider == "anthropic"
    view.selected = 3
    assert view.panes["break"]  # the provider change is explained where it happens


def test_switch_to_an_unknown_provider_changes_nothing(ran: tuple[Agent, AgentView]) -> None:
    agent, view = ran
    with pytest.raises(ValueError):
        view.switch("nope")
    assert agent.provider == "anthropic" and view.preview is None
    sent: list[dict[str, Any]] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    view._on_message(view, {"type": "switch", "provider": "nope", "view": "v1"}, [])
    assert sent[-1]["type"] == "error" and "nope" in sent[-1]["text"]
    assert sent[-1]["view"] == "v1" and agent.provider == "anthropic"
    view._on_message(view, {"type": "switch", "provider": "kimi", "view": "v1"}, [])
    assert sent[-1]["type"] == "switched" and "anthropic → kimi" in sent[-1]["text"]
    assert agent.provider == "kimi" and view.header["error"] is None
    assert view.switched["provider"] == "kimi" and view.panes["index"] == -1


# -- reprs and the extension's formatters ---------------------------------------------------------
def objects(agent: Agent) -> dict[str, Any]:
    result = agent.run(
        "And the weather in Paris? " + "Please be thorough and precise, thank you. " * 20
    )
    step = agent.steps[-1]
    return {
        "Session": agent.session,
        "Agent": agent,
        "TurnResult": result,
        "Step": step,
        "WireRequest": step.request,
        "ModelContext": step.context,
        "CacheEntry": step.cache,
        "CacheReport": analyze([s.request for s in agent.steps]),
    }


def test_reprs_are_short_and_name_their_class(ran: tuple[Agent, AgentView]) -> None:
    agent, _ = ran
    agent.session.activate(["get_current_weather"])  # outside a tool run: a cache break follows
    for name, value in objects(agent).items():
        text = repr(value)
        assert text.startswith(f"{name}("), text
        assert len(text) < 200 and "\n" not in text, text


def test_extension_formatters_render_html(ip: InteractiveShell, ran: Any) -> None:
    agent, _ = ran
    for name, value in objects(agent).items():
        data, _ = ip.display_formatter.format(value)
        html = data.get("text/html")
        assert html, name
        assert html.lstrip().startswith(("<div", "<table")), (name, html[:80])
        assert data["text/plain"] == repr(value)


def test_request_formatter_for_a_hand_built_request(ip: InteractiveShell) -> None:
    session = demo_session()
    session.user(ETA)
    request = build_request(session, "kimi", DEMO_MODELS["kimi"])
    html = ip.display_formatter.format(request)[0]["text/html"]
    assert "built, not sent" in html and "<details" in html


# -- export ------------------------------------------------------------------------------------
_NETWORK = re.compile(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", re.I)


def page_data(page: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="dtl-data">(.*?)</script>', page, re.S)
    assert match, "the page carries its data"
    return json.loads(match.group(1))  # type: ignore[no-any-return]


def test_export_writes_one_self_contained_file(tmp_path: Path) -> None:
    agent = demo_agent()
    agent.run(ETA)
    agent.run(WEATHER)
    path = export_html(agent, tmp_path / "session.html")
    assert path == tmp_path / "session.html"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.html"]
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert not _NETWORK.search(page)
    assert not re.search(r"<(?:link|iframe|img|object|embed)\b", page, re.I)
    assert not re.search(r"<script[^>]*\ssrc\s*=", page, re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", page, re.I)
    assert not re.search(r"@import", page, re.I)
    assert "default-src 'none'" in page  # nothing may load, even by mistake
    data = page_data(page)
    count = len(agent.steps)
    assert len(data["panes"]) == count == data["state"]["count"]
    assert [item["index"] for item in data["state"]["tail"]["items"]] == list(range(count))
    for k, pane in enumerate(data["panes"]):
        assert pane["title"].startswith(f"Request {k + 1} ·")
        for ref in pane_refs(pane):
            assert f"{k}|{ref}" in data["bodies"], (k, ref)
    for k in range(count):  # the static fallback lists every request too
        assert re.search(rf"<tr><td[^>]*>{k + 1}</td>", page)


def test_export_copies_each_request_without_a_kernel(tmp_path: Path) -> None:
    agent = demo_agent()
    agent.run(ETA)
    agent.run(WEATHER)
    view = AgentView(agent)
    copies = page_data(export_html(view, tmp_path / "s.html").read_text(encoding="utf-8"))["copies"]
    items = [json.loads(text) for text in copies["items"]]
    assert len(set(copies["items"])) == len(items)  # each distinct item stored once
    assert len(copies["requests"]) == len(view.records)
    for request, record in zip(copies["requests"], view.records, strict=True):
        body = {
            name: [items[n] for n in ids] if isinstance(ids, list) else items[ids]
            for name, ids in request["fields"].items()
        }
        assert json.dumps(body, ensure_ascii=False, indent=2) == copy_text(record, "json")
        curl = request["curl"] + copy_text(record, "json") + copies["tail"]
        assert curl == copy_text(record, "curl") and "$ANTHROPIC_API_KEY" in curl


def test_export_of_a_view_and_of_nothing_else(tmp_path: Path) -> None:
    agent = demo_agent("kimi")
    agent.run(ETA)
    records = from_capture(write_capture(agent, tmp_path / "log.jsonl"))
    path = export_html(AgentView(records=records, title="captured"), tmp_path / "view.html")
    assert len(page_data(path.read_text(encoding="utf-8"))["panes"]) == len(records)
    with pytest.raises(TypeError):
        export_html("not an agent", tmp_path / "x.html")  # type: ignore[arg-type]
    assert not (tmp_path / "x.html").exists()


def test_export_of_an_agent_without_requests(tmp_path: Path) -> None:
    page = export_html(demo_agent(), tmp_path / "empty.html").read_text(encoding="utf-8")
    assert "No request yet" in page and page_data(page)["panes"] == []


def test_export_replaces_an_existing_file_whole(tmp_path: Path) -> None:
    agent = demo_agent()
    agent.run(ETA)
    path = tmp_path / "session.html"
    path.write_text("OLD CONTENT " * 500_000, encoding="utf-8")  # longer than the page
    export_html(agent, path)
    page = path.read_text(encoding="utf-8")
    assert "OLD CONTENT" not in page and page.endswith("</html>\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.html"]


def test_export_is_atomic_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = demo_agent()
    agent.run(ETA)
    path = tmp_path / "session.html"
    path.write_text("previous export", encoding="utf-8")

    def refuse(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files_module.os, "replace", refuse)
    with pytest.raises(OSError):
        export_html(agent, path)
    assert path.read_text(encoding="utf-8") == "previous export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.html"]  # no temp file left
    monkeypatch.undo()
    export_html(agent, path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_timeline_counts_the_tools_each_request_adds() -> None:
    agent = demo_agent()
    view = AgentView(agent)
    agent.run(ETA)
    agent.run("And the weather in Paris?")
    view.refresh()
    loads = [item["loads"] for item in view.tail["items"]]
    # the shipping tools enter at request 2, the weather tools at request 5; later requests
    # carry the same load points and add nothing
    assert loads == [0, 5, 0, 0, 5, 0]


def test_the_state_pane_reports_the_catalog_size_and_the_context_pane_the_providers_diagnosis() -> (
    None
):
    from dtl_notebook.demo import demo_session
    from dtl_notebook.live import Agent
    from dtl_notebook.notebook import AgentView

    agent = Agent(demo_session(), "anthropic", "claude-sonnet-4-6", diagnostics=True)
    agent.run("What's the weather in Paris?")
    bundle = AgentView(agent)._repr_mimebundle_()
    html = (bundle[0] if isinstance(bundle, tuple) else bundle)["text/html"]
    assert re.search(r"tool_catalog</code> \([\d,]+ tokens, [\d,]+ chars; 20 groups listed\)", html)
    assert "provider's diagnosis: hit" in html and ">agree</b> with the prediction" in html
