"""OpenAI Responses `previous_response_id` continuations, read as the server reads them: the
earlier request's input, its response's output, then the new items (`context.response_chain`),
by the emulator and the analyzer alike; a response never seen is noted, never a break."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx2
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.cache import audit_capture, load_capture
from dtl_notebook.cache.analyze import CacheAnalyzer, analyze
from dtl_notebook.cache.stream_audit import audit_stream
from dtl_notebook.context.response_chain import ResponseChain
from dtl_notebook.live.emulator.endpoint import Emulator

JSON = dict[str, Any]
PROVIDER = "openai-responses"
LONG = "You are Codex, a coding agent. " * 300  # above OpenAI's 1,024-token minimum


def user(text: str) -> JSON:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def first_body(text: str = "list files") -> JSON:
    return {"model": "gpt-5.5", "instructions": LONG, "input": [user(text)], "store": False}


def answered(emulator: Emulator, body: JSON) -> JSON:
    """The emulator's response body to `body` (validated and continued as the API does)."""
    return emulator.respond(emulator.expand(body))


def test_a_continuation_is_the_earlier_input_its_output_and_the_new_items() -> None:
    chain = ResponseChain()
    first = first_body()
    response = {"id": "resp_1", "output": [{"type": "message", "role": "assistant"}]}
    chain.keep(first, response)
    read = chain.read({**first, "previous_response_id": "resp_1", "input": "and now?"})
    assert read.continued and read.sent == 1
    assert read.payload["input"] == [
        *first["input"],
        *response["output"],
        {"type": "message", "role": "user", "content": "and now?"},
    ]
    assert "previous_response_id" not in read.payload
    unknown = chain.read({**first, "previous_response_id": "resp_gone"})
    assert unknown.missing and not unknown.continued and unknown.payload["input"] == first["input"]
    chain.keep(first, {"error": {"message": "refused"}})  # no id: nothing kept
    small = ResponseChain(limit=1)
    small.keep(first, {"id": "a"})
    small.keep(first, {"id": "b"})
    assert small.read({"previous_response_id": "a"}).missing
    assert not small.read({"previous_response_id": "b"}).missing


def test_the_emulator_refuses_a_response_it_does_not_hold() -> None:
    emulator = Emulator(PROVIDER)
    body = {**first_body(), "previous_response_id": "resp_gone"}
    reply = emulator.handle(httpx2.Request("POST", "http://emulator/v1/responses", json=body))
    assert reply.status_code == 400
    assert "resp_gone" in reply.json()["error"]["message"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4))
def test_continuations_are_predicted_as_the_emulator_reports_them(turns: list[str]) -> None:
    """However many turns, each continuation's prediction is the emulator's reported figure,
    and none is a break."""
    emulator = Emulator(PROVIDER)
    analyzer = CacheAnalyzer(PROVIDER)
    body = first_body()
    response = answered(emulator, body)
    analyzer.add(body, response)
    for turn in turns:
        body = {**first_body(), "previous_response_id": response["id"], "input": [user(turn)]}
        response = answered(emulator, body)
        entry = analyzer.add(body, response)
        assert entry.reported is not None and entry.cached_tokens == entry.reported.cached
        assert entry.cache_break is None
        assert entry.continued is not None and entry.continued.sent == 1


def test_a_continuation_of_a_response_never_seen_is_noted_and_never_a_break() -> None:
    """An audit that starts mid-session, or a continuation after a request of another
    analyzer: the model context holds only what was sent, said on the entry."""
    other = {"model": "gpt-5.5", "instructions": "Something else entirely. " * 300}
    bodies = [first_body(), {**other, "previous_response_id": "resp_elsewhere", "input": "hi"}]
    responses: list[Any] = [{"id": "resp_1", "output": []}, None]
    report = analyze(bodies, PROVIDER, responses=responses)
    last = report.entries[1]
    assert last.cache_break is None
    assert last.continued is not None and "not seen" in last.continued.note
    assert last.continued.whole == last.continued.sent == 1


def test_without_replies_a_continuation_continues_the_request_before_it() -> None:
    """`analyze` without responses: the id names the previous request's reply, its output
    unknown (said in the note); the prefix before it is read, not lost."""
    follow = {**first_body(), "previous_response_id": "resp_unknown", "input": [user("more")]}
    report = analyze([first_body(), follow], PROVIDER)
    entry = report.entries[1]
    assert entry.cache_break is None and entry.cached_tokens >= 1024
    assert entry.continued is not None and "not given" in entry.continued.note
    assert entry.continued.whole == 2


def test_codexs_real_socket_session_is_rebuilt_without_a_break(real_recordings: Path) -> None:
    """A recorded Codex WebSocket session (claude-tap): a prefetch, a tool call, its result,
    each a continuation; the stream's items are the output the next one continues (the
    terminal event's `output` is empty there)."""
    path = real_recordings / "claude-tap" / "codex_ws_multi_response_trace.jsonl"
    exchanges = [e for e in load_capture(path) if e.error is None]
    assert exchanges[1].response is not None
    assert [i["type"] for i in exchanges[1].response["output"]] == ["function_call"]
    report = audit_capture(path)[PROVIDER]
    assert [e.cache_break for e in report.entries] == [None] * 3
    continued = [e.continued for e in report.entries]
    assert continued[0] is None
    assert [(c.sent, c.whole, c.note) for c in continued[1:] if c] == [(3, 3, ""), (1, 5, "")]
    kinds = [s.kind for s in report.entries[2].context.segments]
    assert len(kinds) > len(report.entries[1].context.segments)
    assert not [f for g in audit_stream(path) for f in g.findings if f.code.endswith("changed")]


def test_the_rebuild_does_not_touch_the_sent_body() -> None:
    chain = ResponseChain()
    body = first_body()
    chain.keep(body, {"id": "resp_1", "output": [{"type": "reasoning", "summary": []}]})
    follow = {**first_body(), "previous_response_id": "resp_1"}
    before = copy.deepcopy(follow)
    chain.read(follow)
    assert follow == before
