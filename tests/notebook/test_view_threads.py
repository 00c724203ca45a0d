"""The panes of a message-thread request: the request JSON holds the new messages only, the
model context the whole thread, with the thread's age against its expiry."""

from __future__ import annotations

import json
from pathlib import Path

from dtl_notebook import Session
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent
from dtl_notebook.notebook.context_pane import context_pane
from dtl_notebook.notebook.panes import Bodies
from dtl_notebook.notebook.records import from_capture, step_records
from dtl_notebook.notebook.request_pane import request_pane


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_continuation_shows_new_messages_beside_the_whole_thread_and_its_age() -> None:
    clock = _Clock()
    agent = Agent(
        Session(tools=demo_catalog(), active=["tool_search"]),
        "anthropic",
        "claude-sonnet-4-6",
        threads=True,
        clock=clock,
    )
    agent.run("Thanks, that is all.")
    clock.now += 100
    agent.run("And in Tokyo?")
    records = step_records(agent, agent.steps)
    index = next(
        i
        for i, s in enumerate(agent.steps)
        if s.turn == 1 and s.request.payload["thread"]["type"] == "continue"
    )
    record, step = records[index], agent.steps[index]
    facts = step.cache.thread
    assert facts is not None
    request_html = request_pane(record, Bodies(record, lazy=False))
    context_html = context_pane(record, Bodies(record, lazy=False))
    assert f"{facts.sent} new message(s) sent, no system or tools" in request_html
    assert "<b>system</b>" not in request_html  # the request JSON holds no system field
    assert "note: thread: continues" not in request_html  # said once, by the thread line
    assert f"the whole thread: {facts.whole} messages" in context_html
    assert "thread age 1 min 40 s · idle limit 5 min, 3 min 20 s left" in context_html
    # the model context holds the tools the request did not carry
    assert any(s.kind == "tool_schema" for s in step.cache.context.segments)
    assert "tools" not in step.request.payload
    create_html = request_pane(records[0], Bodies(records[0], lazy=False))
    assert "thread create: the whole conversation sent" in create_html


def test_a_captured_404_thread_not_found_is_marked_in_the_request_pane(tmp_path: Path) -> None:
    create = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 50,
        "system": "You help.",
        "messages": [{"role": "user", "content": "hi"}],
        "thread": {"type": "create"},
    }
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "hello"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    continuation = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "more"}],
        "thread": {"type": "continue", "previous_message_id": "msg_0"},
    }
    gone = {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "No usable Thread state was found",
            "details": {"error_code": "thread_not_found"},
        },
    }
    capture = tmp_path / "threads.jsonl"
    rows = [
        {"provider": "anthropic", "request": create, "response": reply},
        {"provider": "anthropic", "request": continuation, "response": gone, "status": 404},
    ]
    capture.write_text("".join(json.dumps(row) + "\n" for row in rows))
    records = from_capture(capture)
    html = request_pane(records[1], Bodies(records[1], lazy=False))
    assert "thread continue from <code>msg_0</code>" in html
    assert "thread_not_found" in html
