"""Cache health in the notebook: `%%agent --keep-warm` wiring keep-warm, each refresh a
request of its own in the view with its saving, a collapse as a notice under the cell, in the
header and on its timeline box, the warmth countdown's data (an expiry and the agent's clock),
and `%dtl status`."""

from __future__ import annotations

from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from dtl_notebook import Session
from dtl_notebook.cache.keep_warm import KeepWarm
from dtl_notebook.live import Agent
from dtl_notebook.notebook.document import timeline_item
from tests.support.notebook_shell import ETA, agent_magics, line_magic, run_cell
from tests.support.scenario import LONG_SYSTEM
from tests.support.tools import make_tools

OPUS = "claude-opus-4-1"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _own_agent(ip: InteractiveShell, clock: Clock, **kwargs: Any) -> Agent:
    session = Session(system=LONG_SYSTEM * 20, tools=make_tools(), active=["tool_search"])
    agent = Agent(session, "anthropic", OPUS, clock=clock, **kwargs)
    ip.user_ns["agent"] = agent
    return agent


def test_keep_warm_flag_turns_it_on_and_status_says_so(ip: InteractiveShell) -> None:
    result, _ = run_cell(ip, f"%%agent --keep-warm\n{ETA}")
    assert result.success, result.error_in_exec
    agent = ip.user_ns["agent"]
    try:
        assert agent.keep_warm is not None and agent.keep_warm.policy == KeepWarm()
        assert agent.keep_warm.idle_since is not None  # the turn ended: idle from then
        _, captured = line_magic(ip, "dtl status")
        text = captured.stdout
        assert text.startswith(f"agent: anthropic {agent.model}, 1 turn(s), 3 request(s)")
        assert "  cache: warm " in text and " left (until " in text
        assert "  session: hit " in text and "keep-warm: on, 0 refresh(es)" in text
        header = agent_magics(ip).views["agent"].header
        assert header["warm"]["keep_warm"] is True
    finally:
        agent.set_keep_warm(None)  # the background timer stops


def test_a_refresh_is_a_request_in_the_view_with_its_saving(ip: InteractiveShell) -> None:
    clock = Clock()
    agent = _own_agent(ip, clock, keep_warm=KeepWarm(background=False))
    result, _ = run_cell(ip, "%%agent\nHello there.")
    assert result.success, result.error_in_exec
    view = agent_magics(ip).views["agent"]
    before = len(view.records)
    header = view.header
    warm = header["warm"]
    assert warm["expires_at"] == clock.now + 300.0 and warm["clock"] == clock.now
    assert warm["tokens"] > 20_000 and header["health"]["requests"] == before
    clock.now += 280.0
    assert agent.keep_warm is not None and agent.keep_warm.tick().refresh
    assert len(view.records) == before + 1 and view.count == before + 1
    item = timeline_item(view.records[-1])
    assert item["keep_warm"]["saving"] >= 0.05 and item["keep_warm"]["cost"] > 0
    assert item["warmth"]["expires_at"] == clock.now + 300.0
    assert view.header["warm"]["expires_at"] == clock.now + 300.0
    assert view.header["health"]["refreshes"] == 1
    _, captured = line_magic(ip, "dtl status")
    assert "keep-warm: on, 1 refresh(es)" in captured.stdout


def test_a_collapse_is_a_notice_a_header_alert_and_a_timeline_mark(ip: InteractiveShell) -> None:
    clock = Clock()
    _own_agent(ip, clock)
    assert run_cell(ip, "%%agent\nHello there.")[0].success
    clock.now += 1000.0  # past the 5-minute lifetime
    result, captured = run_cell(ip, "%%agent\nAnd again.")
    assert result.success, result.error_in_exec
    notices = [line for line in captured.stderr.splitlines() if line.startswith("⚠")]
    assert len(notices) == 1 and "cache miss (expired, expired)" in notices[0]
    assert "fix:" in notices[0]
    view = agent_magics(ip).views["agent"]
    assert view.header["miss"] is not None and "expired" in view.header["miss"]
    missed = [timeline_item(r) for r in view.records if r.miss is not None]
    assert len(missed) == 1 and missed[0]["miss"]["reason"] == "expired"
    assert missed[0]["miss"]["lost"] > 20_000
    _, status = line_magic(ip, "dtl status")
    assert "last cache miss (expired" in status.stdout


def test_status_of_a_cold_session_before_any_request(ip: InteractiveShell) -> None:
    _own_agent(ip, Clock())
    _, captured = line_magic(ip, "dtl status")
    assert "0 request(s)" in captured.stdout and "cache: cold" in captured.stdout
    assert "keep-warm: off (%%agent --keep-warm turns it on)" in captured.stdout
