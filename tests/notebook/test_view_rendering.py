"""What the view shows: grey marks outside the break count, the lost figure, diffs in prefix
order by JSON path, theme-safe colours, left-aligned static tables, captured mode, prices."""

from __future__ import annotations

import itertools
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.demo import DEMO_MODELS, demo_session
from dtl_notebook.live import Agent
from dtl_notebook.notebook import export_html
from dtl_notebook.notebook.compare import diff_html
from dtl_notebook.notebook.document import panes, plain_text, static_html, timeline_item
from dtl_notebook.notebook.legend import costs_for
from dtl_notebook.notebook.prices import PriceTable
from dtl_notebook.notebook.records import RequestRecord, from_capture, step_records
from dtl_notebook.notebook.request_diff import record_hunks
from dtl_notebook.notebook.word_diff import diff_rows, inline_diff, words
from tests.support.notebook_shell import ETA, WEATHER, write_capture


def records(
    provider: str, *, activate: bool = False, switch: str | None = None
) -> list[RequestRecord]:
    agent = Agent(demo_session(), provider, DEMO_MODELS[provider])
    agent.run(ETA)
    if activate:
        agent.session.activate(["get_current_weather"])  # outside a tool run: a break
    agent.run(WEATHER)
    if switch:
        agent.switch(switch, DEMO_MODELS[switch])
        agent.run("thanks")
    return step_records(agent, agent.steps)


# -- honest marks ----------------------------------------------------------------------------
def test_below_the_minimum_is_a_grey_mark_not_a_break() -> None:
    recs = records("openai-responses")
    first = recs[0]
    assert first.cache.below_minimum and first.cache.cache_break is None
    item = timeline_item(first)
    assert item["break"] is None
    assert [n["text"] for n in item["notes"]] == ["not cacheable yet"]
    assert (
        "not cacheable yet" in panes(first)["break"] and "Cache break" not in panes(first)["break"]
    )
    assert "breaks=0" in plain_text(recs, {"provider": "openai-responses", "tools": "5/200"})


def test_a_provider_switch_is_cold_and_its_history_is_not_loads() -> None:
    recs = records("anthropic", switch="openai-responses")
    first = next(r for r in recs if r.provider == "openai-responses")
    assert [n["text"] for n in timeline_item(first)["notes"]] == ["cold: new provider"]
    assert first.new_loads == 0  # the same tools, re-serialized, not loaded again
    assert "cold: new provider" in panes(first)["break"]
    assert all(not timeline_item(r)["notes"] for r in recs if r.provider == "anthropic")


def test_lost_tokens_are_what_was_cached_and_is_not_read() -> None:
    recs = records("anthropic", activate=True)
    broken = next(i for i, r in enumerate(recs) if r.cache.cache_break is not None)
    before, entry = recs[broken - 1].cache, recs[broken].cache
    assert entry.cache_break is not None
    held = before.cached_tokens + before.written_tokens
    assert entry.cache_break.lost_tokens == held - entry.cached_tokens > 0
    shown = panes(recs[broken], recs[broken - 1])["break"]
    assert f"{held - entry.cached_tokens:,} tokens no longer cached" in shown


# -- diffs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", ["anthropic", "openai-responses", "kimi"])
def test_hunks_follow_the_prefix_and_agree_with_the_analyzer(provider: str) -> None:
    recs = records(provider, activate=True)
    for a, b in itertools.pairwise(recs):
        hunks = record_hunks(a, b)
        roles = [h.role for h in hunks]
        assert ("break" in roles) == (b.cache.cache_break is not None), (b.index, hunks)
        if "break" in roles:  # nothing after the break is called cache-safe
            assert "append" not in roles[roles.index("break") :]
            brk = hunks[roles.index("break")]
            assert brk.label.startswith("tools[") and brk.change == "inserted"
        else:
            assert all(r in ("append", "unseen", "same", "outside") for r in roles)


def test_the_break_comes_before_the_append_though_the_json_lists_messages_first() -> None:
    recs = records("anthropic", activate=True)
    i = next(i for i, r in enumerate(recs) if r.cache.cache_break is not None)
    assert list(recs[i].payload).index("messages") < list(recs[i].payload).index("tools")
    html = diff_html(recs[i - 1], recs[i], "a → b").html
    assert html.index("tools[5] inserted") < html.index("messages[")
    assert "the cache breaks at tools[5] inserted" in html
    only_appends = diff_html(recs[i], recs[i + 1], "b → c").html
    assert "append (cache-safe)" in only_appends and '<details class="dtl-appends">' in only_appends


def test_inline_diffs_mark_whole_names() -> None:
    old, new = inline_diff('{"name": "write_file"}', '{"name": "read_file"}')
    assert re.search(r"<del [^>]*>write_file</del>", old)
    assert re.search(r"<ins [^>]*>read_file</ins>", new)
    rows = diff_rows(
        "a\nb\nc\nd\ne\nf\ng\nname: write_file\nh", "a\nb\nc\nd\ne\nf\ng\nname: read_file\nh"
    )
    kinds = [r.kind for r in rows]
    assert kinds == ["…", " ", " ", "~", " "]  # whole lines around the change, the rest folded


@given(st.text(max_size=60), st.text(max_size=60))
def test_words_keep_every_character(old: str, new: str) -> None:
    assert "".join(words(old)) == old


# -- themes and layout ------------------------------------------------------------------------
_STYLE = re.compile(r'style="([^"]*)"')


def test_inline_colours_read_on_both_themes() -> None:
    """Text colours come from theme variables; tints are translucent; nothing is faded."""
    recs = records("anthropic", activate=True)
    html = static_html(recs, {"title": "t"}, 3) + diff_html(recs[2], recs[3], "x").html
    for style in _STYLE.findall(html):
        for prop, value in re.findall(r"(?:^|;)\s*([a-z-]+)\s*:\s*([^;]+)", style):
            if prop == "color":
                assert value.startswith("var(--jp-") or value == "inherit", style
            if prop in ("background", "background-color"):
                assert value.startswith(("rgba(", "var(--jp-", "transparent")), style
            assert prop != "opacity", style


def test_static_tables_are_left_aligned_and_panes_wrap() -> None:
    recs = records("anthropic")
    html = static_html(recs, {"title": "t"})
    cells = re.findall(r"<t[dh] ([^>]*)>", html)
    assert cells and all("text-align:left" in c for c in cells)
    assert html.count('class="dtl-static-pane"') == 3 and "min-width:300px" in html


def test_captured_mode_shows_the_requests_tools_and_no_turns(tmp_path: Path) -> None:
    agent = Agent(demo_session(), "openai-responses", DEMO_MODELS["openai-responses"])
    agent.run(ETA)
    recs = from_capture(write_capture(agent, tmp_path / "log.jsonl"))
    last = panes(recs[-1], recs[-2])
    assert "turn" not in last["title"]
    assert "Tools in the request (" in last["state"] and "Load-point carriers: 1" in last["state"]
    assert "1 load-point carrier(s)" in last["request"]
    assert "0 load point(s)" not in last["request"]


# -- money --------------------------------------------------------------------------------
def test_every_price_names_its_source_and_a_model_is_found_by_prefix() -> None:
    table = PriceTable.default()
    for model in DEMO_MODELS.values():
        price = table.find(model)
        assert price is not None and "pricing" in price.source.lower(), model
    assert table.find("claude-sonnet-4-6-20991231") is table.find("claude-sonnet-4-6")
    assert table.find("no-such-model") is None


def test_prices_are_edited_on_a_copy_and_bad_figures_are_named() -> None:
    table = PriceTable.default()
    edited = table.set("gpt-5.4", input=10.0)
    assert edited.find("gpt-5.4").input == 10.0 and table.find("gpt-5.4").input == 2.5  # type: ignore[union-attr]
    with pytest.raises(ValueError, match=r"gpt-5\.4\.cache_read must not be negative"):
        table.set("gpt-5.4", cache_read=-1)
    with pytest.raises(ValueError, match="give cache_read, cache_write too"):
        table.set("new-model", input=1.0)


def test_costs_per_request_saved_by_caching_and_all_tools_up_front() -> None:
    agent = Agent(demo_session(), "anthropic", DEMO_MODELS["anthropic"])
    agent.run(ETA)
    recs = step_records(agent, agent.steps)
    costs = costs_for(recs, agent.session.registry)
    price = PriceTable.default().find(DEMO_MODELS["anthropic"])
    assert price is not None
    first = recs[0].cache
    expected = (
        price.input / 1e6 * (first.uncached_tokens + first.written_tokens * price.cache_write)
    )
    assert costs.per_request[0] == pytest.approx(expected)
    assert costs.total == pytest.approx(sum(c for c in costs.per_request if c is not None))
    assert costs.saved > 0  # the second and third request read what the first wrote
    assert costs.up_front is not None and costs.up_front > costs.total  # ~200 tools up front
    html = static_html(recs, {"title": "t"}, registry=agent.session.registry)
    assert "saved $" in html and "every registered tool sent up front" in html and "Legend" in html


def test_export_is_written_with_the_umask_mode(tmp_path: Path) -> None:
    agent = Agent(demo_session(), "anthropic", DEMO_MODELS["anthropic"])
    agent.run(ETA)
    old = os.umask(0o022)
    try:
        path = export_html(agent, tmp_path / "s.html")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_break_shows_its_one_line_fix() -> None:
    from dtl_notebook.cache.causes import BreakCause
    from dtl_notebook.cache.codes import fix
    from dtl_notebook.cache.explain import CacheBreak
    from dtl_notebook.notebook.marks import break_html

    brk = CacheBreak(BreakCause.SYSTEM_CHANGED, "system.0")
    html = break_html(brk)
    assert f"fix: {fix(BreakCause.SYSTEM_CHANGED)}" in html.replace("&#x27;", "'")
    assert 'class="dtl-fix"' in html


def test_removal_and_redefinition_are_marked_as_load_points_of_their_own() -> None:
    from dtl_notebook.notebook.panes import Bodies
    from dtl_notebook.notebook.records import from_request
    from dtl_notebook.notebook.request_pane import request_pane
    from dtl_notebook.wire import build_request
    from tests.support.wire_requests import searched_session

    s = searched_session()
    s.assistant("Sunny.")
    s.user("Thanks!")
    s.remove_tools(["get_weather"])
    req = build_request(s, "anthropic", "claude-opus-4-8")
    assert [lp.kind for lp in req.load_points] == ["load", "removal"]
    record = from_request(req)
    html = request_pane(record, Bodies(record, lazy=False))
    assert "load point: + get_weather" in html and "removal: - get_weather" in html


def test_a_system_section_break_is_lit_in_the_request_json_too() -> None:
    agent = Agent(demo_session(), "anthropic", DEMO_MODELS["anthropic"])
    agent.run(ETA)
    agent.session.prompt["preamble"] = "You are a careful shipping assistant."  # a break
    agent.run(WEATHER)
    broken = next(r for r in step_records(agent, agent.steps) if r.cache.cache_break)
    assert broken.cache.cache_break is not None
    assert broken.cache.cache_break.where == "system.0"
    data = panes(broken, lazy=True)
    for pane in ("state", "request", "context"):
        assert "dtl-k-brk-here" in data[pane], pane
    lit = re.search(
        r'<div class="dtl-row dtl-link dtl-k-brk-here">(.*?)</details>', data["request"]
    )
    assert lit is not None and "<b>system</b>" in lit.group(1)


def test_the_deferred_tool_prompt_break_marks_the_tools_list() -> None:
    from dtl_notebook.cache.causes import BreakCause
    from dtl_notebook.cache.explain import CacheBreak

    rec = records("anthropic")[-1]
    rec.cache.cache_break = CacheBreak(BreakCause.DEFERRED_PROMPT_ADDED, "tools")
    html = panes(rec, lazy=True)["request"]
    row = re.search(r'<div class="dtl-row dtl-link dtl-k-brk-here">(.*?)</div>', html)
    assert row is not None and "tools [" in row.group(1)
    assert html.count("dtl-k-brk-here") == 1  # the list, not one of its items


def test_each_request_knows_where_its_tools_entered_as_the_session_says() -> None:
    """The state pane reads `Session.entered()` as of each request: a tool loaded later in
    the session is not shown as entered in an earlier request."""
    agent = Agent(demo_session(), "anthropic", DEMO_MODELS["anthropic"])
    agent.run(ETA)
    agent.run(WEATHER)
    entered = agent.session.entered()
    assert entered  # the demo's searches loaded tools
    for record in step_records(agent, agent.steps):
        assert record.state is not None
        count = record.state.message_count
        assert record.entered == {n: i for n, i in entered.items() if i < count}
        state_html = panes(record)["state"]
        for name in record.state.active_tools:
            if name in record.entered:
                assert f"after message #{record.entered[name]}" in state_html
