"""What the live view's front end asks and gets (custom messages), and its life cycle."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from dtl_notebook.demo import demo_session
from dtl_notebook.live import Agent, TurnError
from dtl_notebook.notebook import AgentView
from dtl_notebook.notebook.copying import copy_text
from dtl_notebook.notebook.sessions import Sessions
from dtl_notebook.notebook.view_assets import pane_titles, view_spec
from tests.support.notebook_shell import ETA, WEATHER, WIDGET_MIME, FlakyTransport


def agent_and_view() -> tuple[Agent, AgentView, list[dict[str, Any]]]:
    agent = Agent(demo_session(), "anthropic", "claude-sonnet-4-6")
    view = AgentView(agent)
    sent: list[dict[str, Any]] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    agent.run(ETA)
    agent.run(WEATHER)
    return agent, view, sent


def ask(view: AgentView, sent: list[dict[str, Any]], **content: Any) -> dict[str, Any]:
    view._on_message(view, {"view": "v7", **content}, [])
    assert sent[-1]["view"] == "v7"  # answered to the view that asked
    return sent[-1]


def test_panes_of_any_request_per_view() -> None:
    _, view, sent = agent_and_view()
    reply = ask(view, sent, type="panes", index=1)
    assert reply["type"] == "panes" and reply["data"]["title"].startswith("Request 2 ·")
    assert view.panes["index"] == len(view.records) - 1  # the shared state did not move
    assert ask(view, sent, type="panes", index=99)["type"] == "error"


def test_copy_json_item_and_curl_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-0123456789")
    _, view, sent = agent_and_view()
    body = json.loads(ask(view, sent, type="copy", what="json", index=0)["text"])
    assert body == view.records[0].payload
    item = json.loads(ask(view, sent, type="copy", what="item", index=0, path="tools.1")["text"])
    assert item == view.records[0].payload["tools"][1]
    curl = ask(view, sent, type="copy", what="curl", index=0)["text"]
    assert curl.startswith("curl https://api.anthropic.com/v1/messages")
    assert '-H "x-api-key: $ANTHROPIC_API_KEY"' in curl and "sk-ant-secret" not in curl
    assert json.loads(curl.split("<<'JSON'\n", 1)[1].rsplit("\nJSON", 1)[0]) == body
    bad = ask(view, sent, type="copy", what="item", index=0, path="tools.9999")
    assert bad["type"] == "error" and "tools.9999" in bad["text"]


def test_curl_for_openai_reads_its_own_variable() -> None:
    agent = Agent(demo_session(), "openai-responses", "gpt-5.4")
    agent.run(ETA)
    view = AgentView(agent)
    curl = copy_text(view.records[0], "curl")
    assert "https://api.openai.com/v1/responses" in curl
    assert "authorization: Bearer $OPENAI_API_KEY" in curl


def test_search_finds_collapsed_and_windowed_items_and_a_window_opens() -> None:
    agent, view, sent = agent_and_view()
    for _ in range(10):
        agent.run(WEATHER)
    last = len(view.records) - 1
    found = ask(view, sent, type="search", index=last, query="PARIS")["found"]
    refs = [m["ref"] for m in found]
    assert "request:messages.6" in refs or any(r.startswith("request:messages.") for r in refs)
    panes = view.panes["state"] + view.panes["request"] + view.panes["context"]
    windows = re.findall(r"dtl-win:([a-z:]+):(\d+):(\d+)", panes)
    assert windows  # a long session has windowed runs
    ref, start, end = windows[0][0], int(windows[0][1]), int(windows[0][2])
    reply = ask(view, sent, type="window", index=last, ref=ref, start=start, end=end)
    assert reply["type"] == "window" and reply["html"].count("dtl-row") >= end - start
    assert ask(view, sent, type="window", index=last, ref="nope", start=0, end=1)["type"] == "error"


def test_preview_does_not_switch_and_switch_says_so() -> None:
    agent, view, sent = agent_and_view()
    reply = ask(view, sent, type="preview", provider="kimi")
    assert reply["type"] == "preview" and not reply["current"]
    assert agent.provider == "anthropic" and reply["data"]["title"].startswith("Preview")
    same = ask(view, sent, type="preview", provider="anthropic")  # never ignored
    assert same["type"] == "preview" and same["current"]
    assert ask(view, sent, type="body", index=-1, provider="kimi", ref="request:tools.0")["html"]
    switched = ask(view, sent, type="switch", provider="kimi")
    assert switched["type"] == "switched" and agent.provider == "kimi"
    assert "starts cold" in switched["text"]


def test_a_closed_view_detaches_from_its_agent() -> None:
    agent, view, _ = agent_and_view()
    assert agent.listeners == [view._on_event]
    view.close()
    assert agent.listeners == [] and not view.following
    count = view.count
    agent.run(ETA)
    assert view.count == count  # it follows no more
    view.close()  # twice is harmless


def test_sessions_display_one_live_view_and_snapshot_the_one_before() -> None:
    agent = Agent(demo_session(), "anthropic", "claude-sonnet-4-6")
    sessions = Sessions({"agent": agent})
    shown: list[Any] = []

    class Handle:
        def __init__(self) -> None:
            self.updates: list[Any] = []

        def update(self, value: Any) -> None:
            self.updates.append(value)

    def show(value: Any, **_options: Any) -> Handle:
        shown.append((value, Handle()))
        return shown[-1][1]

    first = sessions.display_live("agent", agent, show)
    agent.run(ETA)
    second = sessions.display_live("agent", agent, show)
    agent.run(WEATHER)
    assert second is not first and not first.following and second.following
    assert second.records[:3] == first.records  # reused, not rebuilt
    # Each live cell shows two outputs: its saved turn, then the widget (view_output).
    (saved, saved_handle), (widget, widget_handle) = shown[:2]
    assert "dtl-fallback" in saved._repr_mimebundle_()["text/html"]
    data, _ = widget._repr_mimebundle_()
    assert WIDGET_MIME in data and "text/html" not in data
    # Retired: the saved turn is the snapshot of its own turn, the widget's output empty.
    snapshot = saved_handle.updates[-1]._repr_mimebundle_()
    assert "Request 3 · turn 1" in snapshot["text/html"] and "turn 2" not in snapshot["text/plain"]
    assert widget_handle.updates[-1]._repr_mimebundle_() == {"text/plain": ""}
    assert [h.updates for _, h in shown[2:]] == [[], []] and len(second.records) == len(agent.steps)


def test_the_page_gets_every_requests_panes_while_the_turn_runs() -> None:
    """A flush coalesces requests; those it passes over reach the page as `panes` messages
    (the busy kernel could not answer for them until the turn ends)."""
    agent, view, sent = agent_and_view()
    view.flush_s = 3600  # one flush at the turn's end: every request but the newest passed
    before = len(view.records)
    agent.run(ETA)
    pushed = [m["index"] for m in sent if m["type"] == "panes" and "view" not in m]
    assert pushed[-(len(view.records) - before) + 1 :] == list(range(before, len(view.records) - 1))
    assert view.panes["index"] == len(view.records) - 1  # the newest: the synced state
    for message in sent:
        if message["type"] == "panes" and "view" not in message:
            assert message["data"] == view._lazy_panes(
                view.records[message["index"]], view.records[message["index"] - 1]
            )


def test_views_of_one_session_share_the_pages_panes_until_its_records_change() -> None:
    """The page keeps each session's panes under `panes_key`: a new cell's view finds there
    what the views before it were sent (the kernel is busy running that cell)."""
    agent, view, _ = agent_and_view()
    later = AgentView(agent, history=view)
    assert later.panes_key == view.panes_key != ""
    assert later.panes is view._panes_for(len(agent.steps) - 1)  # built once, shared
    other = AgentView(agent)
    assert other.panes_key not in ("", view.panes_key)
    key = later.panes_key
    later.refresh()  # the records are read again: what the page kept may differ
    assert later.panes_key != key
    agent.use_transport(FlakyTransport(fail_at=2))
    key = later.panes_key
    with pytest.raises(TurnError):
        agent.run(WEATHER)
    assert later.panes_key != key  # the failed turn's requests are gone


def test_every_message_is_declared_once_for_both_languages() -> None:
    spec = view_spec()
    for name in spec["asks"]:
        assert callable(getattr(AgentView, f"_msg_{name}")), name
    _, view, sent = agent_and_view()
    # ipywidgets' own `_msg_callbacks` is no handler: only declared asks are answered
    view._on_message(view, {"type": "callbacks", "view": "v1"}, [])
    view._on_message(view, {"type": "bogus", "view": "v1"}, [])
    assert all(m.get("view") != "v1" for m in sent)
    for content in (
        {"type": "panes", "index": 0},
        {"type": "body", "index": 0, "ref": "request:tools.0"},
        {"type": "search", "index": 0, "query": "order"},
        {"type": "copy", "index": 0, "what": "json"},
        {"type": "preview", "provider": "openai"},
        {"type": "switch", "provider": "openai"},
        {"type": "panes", "index": 99},
    ):
        assert ask(view, sent, **content)["type"] in spec["answers"]
    assert {m["type"] for m in sent} <= set(spec["answers"])
    assert pane_titles() == {
        "state": "Agent state",
        "request": "Request JSON",
        "context": "Model context",
    }
