"""`analyze` and the analyzer read Anthropic message threads: a continuation is predicted as
the whole thread the provider rebuilds, and a lost or replaced thread is an event of its own."""

from __future__ import annotations

from typing import Any

from dtl_notebook.cache.analyze import CacheAnalyzer, analyze
from dtl_notebook.cache.codes import code
from dtl_notebook.context.model import model_context
from dtl_notebook.context.thread_context import ThreadBook

MODEL = "claude-sonnet-4-6"
SYSTEM = "You are a careful assistant who follows the house rules. " * 120
TOOLS = [
    {
        "name": f"tool_{i}",
        "description": "does one thing well " * 20,
        "input_schema": {"type": "object"},
    }
    for i in range(6)
]
AUTO = {"type": "ephemeral"}


def _reply(n: int, text: str = "Here is what I found. " * 30) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _create(*texts: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i, text in enumerate(texts):
        if i:
            messages.append({"role": "assistant", "content": _reply(i)["content"]})
        messages.append({"role": "user", "content": text})
    return {
        "model": MODEL,
        "max_tokens": 100,
        "cache_control": AUTO,
        "system": SYSTEM,
        "tools": TOOLS,
        "messages": messages,
        "thread": {"type": "create"},
    }


def _continue(previous: str, text: str) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 100,
        "cache_control": AUTO,
        "messages": [{"role": "user", "content": text}],
        "thread": {"type": "continue", "previous_message_id": previous},
    }


def test_a_continuation_is_predicted_as_the_whole_thread() -> None:
    requests = [_create("Plan the trip."), _continue("msg_1", "And the hotel?")]
    requests.append(_continue("msg_2", "And the train?"))
    report = analyze(requests, "anthropic", responses=[_reply(1), _reply(2), _reply(3)])
    first, second, third = report.entries
    standalone = model_context(requests[2], provider="anthropic")
    assert standalone.total_tokens < 100  # what the wire carries
    assert third.total_tokens > first.total_tokens > 1500  # what the provider bills
    assert second.cached_tokens >= first.written_tokens and third.cached_tokens > 1500
    assert second.cache_break is None and third.cache_break is None
    facts = third.thread
    assert facts is not None and (facts.sent, facts.whole) == (1, 5)
    assert facts.previous_message_id == "msg_2" and facts.event is None


def test_the_whole_thread_is_the_full_requests_model_context() -> None:
    """Create + continue gives the model what the one full request gives it."""
    threaded = [_create("Plan the trip."), _continue("msg_1", "And the hotel?")]
    full = _create("Plan the trip.", "And the hotel?")
    del full["thread"]
    analyzer = CacheAnalyzer("anthropic")
    analyzer.add(threaded[0], _reply(1), at=0.0)
    whole = analyzer.add(threaded[1], _reply(2), at=5.0).context
    assert [(s.kind, s.text) for s in whole.segments] == [
        (s.kind, s.text) for s in model_context(full, provider="anthropic").segments
    ]


def test_a_thread_past_its_idle_limit_is_thread_not_found_and_no_break() -> None:
    requests = [_create("Plan the trip."), _continue("msg_1", "And the hotel?")]
    report = analyze(requests, "anthropic", responses=[_reply(1), None], times=[0.0, 301.0])
    late = report.entries[1]
    assert late.thread is not None and late.thread.event == "thread_not_found"
    assert late.thread.message == code("thread_not_found").message
    assert late.cache_break is None and late.cached_tokens == 0


def test_a_404_answer_marks_the_continuation_thread_not_found() -> None:
    gone = {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "No usable Thread state",
            "details": {"error_code": "thread_not_found"},
        },
    }
    analyzer = CacheAnalyzer("anthropic")
    analyzer.add(_create("Plan the trip."), _reply(1), at=0.0)
    entry = analyzer.add(_continue("msg_1", "And the hotel?"), gone, at=10.0)
    assert entry.thread is not None and entry.thread.event == "thread_not_found"
    # the replay that follows is a create replacing the lost thread, read from the cache
    replay = analyzer.add(_create("Plan the trip.", "And the hotel?"), _reply(2), at=11.0)
    assert replay.thread is not None and replay.thread.event == "thread_replaced"
    assert replay.thread.replaced == "msg_1" and replay.cache_break is None
    assert replay.cached_tokens > 1500


def test_a_reply_heard_after_the_prediction_links_the_next_continuation() -> None:
    """The proxy's live view predicts on arrival and hears the reply later (`answer`)."""
    analyzer = CacheAnalyzer("anthropic")
    created = _create("Plan the trip.")
    entry = analyzer.add(created, at=0.0)
    analyzer.answer(entry, _reply(1), created)
    later = analyzer.add(_continue("msg_1", "And the hotel?"), at=3.0)
    assert later.thread is not None and later.thread.whole == 3
    assert later.thread.age_seconds == 3.0 and later.thread.expires_in_seconds == 297.0


def test_an_unseen_thread_is_said_so_not_guessed() -> None:
    entry = analyze([_continue("msg_77", "And the hotel?")], "anthropic").entries[0]
    assert entry.thread is not None and entry.thread.event is None
    assert "not seen" in entry.thread.note and entry.cache_break is None


def test_each_stored_reply_starts_the_idle_limit_again_and_is_continued_once() -> None:
    book = ThreadBook()
    read = book.read(_create("Plan the trip."), 0.0)
    book.store(read, _reply(1), 0.0)
    at = 0.0
    for n in range(2, 6):
        at += 250.0
        read = book.read(_continue(f"msg_{n - 1}", "more"), at)
        assert read.missing is None and read.thread is not None
        book.store(read, _reply(n), at)
        assert book.get(f"msg_{n - 1}") is None
    held = book.get("msg_5")
    assert held is not None and held.turns == 5 and held.created_at == 0.0
    assert book.read(_continue("msg_5", "x"), at + 301.0).missing == "expired"


def test_thread_events_are_findings_of_the_audit() -> None:
    from dtl_notebook.cache.conversation import FindingsBuilder

    analyzer, builder = CacheAnalyzer("anthropic"), FindingsBuilder("c1")
    bodies = [_create("Plan the trip."), _continue("msg_1", "And the hotel?")]
    bodies.append(_create("Plan the trip.", "And the hotel?"))
    replies = [_reply(1), None, _reply(2)]
    for at, body, reply in zip([0.0, 400.0, 401.0], bodies, replies, strict=True):
        builder.add(analyzer.add(body, reply, at=at), body, at)
    found = [(f.code, f.index, f.involved) for f in builder.finish().findings if "thread" in f.code]
    assert found == [("thread_not_found", 1, ["msg_1"]), ("thread_replaced", 2, ["msg_1"])]


def test_without_responses_a_continuation_continues_the_previous_request() -> None:
    """`analyze(requests)` alone: the thread is rebuilt from the requests, the replies' tokens
    left out and said so, never a standalone tiny request."""
    requests = [_create("Plan the trip."), _continue("msg_1", "And the hotel?")]
    requests.append(_continue("msg_2", "And the train?"))
    report = analyze(requests, "anthropic", times=[0.0, 20.0, 50.0])
    first, second, third = report.entries
    assert third.thread is not None and (third.thread.sent, third.thread.whole) == (1, 5)
    assert third.thread.age_seconds == 50.0 and "not given" in third.thread.note
    assert second.cached_tokens >= first.written_tokens > 1500
    assert third.cache_break is None and third.total_tokens > first.total_tokens
