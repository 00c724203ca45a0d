"""What Codex sends is taken as the API takes it: input items sent back with their ids,
`store: false`, `prompt_cache_key`, `include`, encrypted reasoning, and the WebSocket
`response.create` fields; the real recorded Codex bodies validate and the emulator answers them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.live.emulator import Emulator
from dtl_notebook.wire import WireValidationError, validate_payload
from dtl_notebook.wire.lenient import validate_lenient

TRACES = ("codex_ws_multi_response_trace.jsonl", "openai_responses_trace.jsonl")


def codex_history() -> dict[str, Any]:
    """A second-turn Codex body (codex-rs `ResponseItem` shapes): its history as the API
    returned it, kept by the client because nothing is stored server-side."""
    text = [{"type": "input_text", "text": "run pwd"}]
    return {
        "model": "gpt-5.5",
        "instructions": "You are Codex.",
        "input": [
            {
                "type": "message",
                "id": "msg_0199a1b2-developer",  # Codex 0.17x: an id on every message
                "role": "developer",
                "content": [{"type": "input_text", "text": "p"}],
            },
            {"type": "message", "role": "user", "content": text},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Run it."}],
                "content": None,
                "encrypted_content": "gAAAAB-opaque",
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "name": "exec_command",
                "arguments": '{"cmd":"pwd"}',
                "call_id": "call_1",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "/work"},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "It is /work."}],
                "phase": "final_answer",
            },
            {"type": "message", "id": "msg_2", "role": "user", "content": text},
        ],
        "tools": [
            {
                "type": "function",
                "name": "exec_command",
                "description": "Runs a command.",
                "strict": False,
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a1b2-session",
    }


def _answer(emulator: Emulator, body: dict[str, Any]) -> httpx2.Response:
    wire = httpx2.Request("POST", "http://emulator/v1/responses", content=json.dumps(body))
    return emulator.handle(wire)


def test_the_sdk_types_refuse_a_codex_history_the_api_takes() -> None:
    body = codex_history()
    with pytest.raises(WireValidationError, match=r"invalid at input\.5\.content\.0"):
        validate_payload(copy.deepcopy(body), "openai-responses")
    before = copy.deepcopy(body)
    notes = validate_lenient(body, "openai-responses")
    assert body == before  # checked as the API takes it, never changed
    assert notes == [
        "`id` on an input message (the API takes the ids it returned) (input.0, input.6): not "
        "in the SDK types, the API takes it",
        "`content: null` on a reasoning item (input.2): not in the SDK types, the API takes it",
        "an assistant message's `output_text` parts sent back without `annotations` or "
        "`status` (input.5): not in the SDK types, the API takes it",
    ]


def test_the_emulator_answers_a_codex_history() -> None:
    reply = _answer(Emulator("openai-responses"), codex_history())
    assert reply.status_code == 200, reply.text
    assert reply.json()["object"] == "response"


def test_the_websocket_fields_are_named_not_refused() -> None:
    body = {**codex_history(), "type": "response.create", "generate": False}
    body["client_metadata"] = {"traceparent": "00-abc-def-01"}
    notes = validate_lenient(body, "openai-responses")
    assert notes[0].startswith("client_metadata: ")  # `type` and `generate`: the SDK's event
    del body["type"]  # a capture that kept the body only: `generate` is named
    assert [n.split(":")[0] for n in validate_lenient(body, "openai-responses")[:2]] == [
        "generate",
        "client_metadata",
    ]
    assert _answer(Emulator("openai-responses"), body).status_code == 200


def test_what_the_api_refuses_stays_refused() -> None:
    body = codex_history()
    del body["input"][2]["summary"]  # a reasoning item always carries its summary
    with pytest.raises(WireValidationError, match=r"input\.2.*summary"):
        validate_lenient(body, "openai-responses")
    answer = _answer(Emulator("openai-responses"), body)
    assert answer.status_code == 400
    assert answer.json()["error"]["param"].startswith("input.2")
    body = codex_history()
    body["input"][5]["content"][0]["type"] = "input_image"  # no image_url: not a part it took
    assert _answer(Emulator("openai-responses"), body).status_code == 400


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["msg_a", "msg_b", None]), min_size=1, max_size=5))
def test_every_message_id_is_named_in_one_note(ids: list[str | None]) -> None:
    body = codex_history()
    start = len(body["input"])
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
    body["input"] += [{**user, **({"id": i} if i else {})} for i in ids]
    notes = validate_lenient(body, "openai-responses")
    (named,) = [n for n in notes if n.startswith("`id` on an input message")]
    carrying = ["input.0", "input.6", *(f"input.{start + k}" for k, i in enumerate(ids) if i)]
    assert f"({', '.join(carrying[:3])}" in named
    assert (f"and {len(carrying) - 3} more" in named) == (len(carrying) > 3)


@pytest.mark.parametrize("name", TRACES)
def test_real_codex_bodies_validate_and_are_answered(real_recordings: Path, name: str) -> None:
    record = json.loads((real_recordings / "claude-tap" / name).read_text())
    sent = record["request"].get("ws_events") or [record["request"]["body"]]
    bodies = [event for event in sent if event.get("type") == "response.create"]
    assert bodies
    emulator = Emulator("openai-responses")
    for body in bodies:
        notes = validate_lenient(body, "openai-responses")
        assert not [n for n in notes if n.startswith(("type", "generate"))]  # the SDK's event
        if "previous_response_id" in body:  # the recorded chain, onto the emulator's ids
            body = {**body, "previous_response_id": emulator.answered[-1]}
        reply = _answer(emulator, body)
        assert reply.status_code == 200, reply.text
        assert reply.json()["model"] == body["model"]


def test_a_continuation_is_read_after_the_conversation_it_continues() -> None:
    emulator = Emulator("openai-responses")
    first = {**codex_history(), "instructions": "You are Codex, a coding agent. " * 300}
    answered = _answer(emulator, first).json()
    text = [{"type": "input_text", "text": "and now?"}]
    new = [{"type": "message", "role": "user", "content": text}]
    follow = {**first, "previous_response_id": answered["id"], "input": new}
    expanded = emulator.expand(follow)
    assert expanded["input"] == [*first["input"], *answered["output"], *new]
    assert "previous_response_id" not in expanded
    reply = _answer(emulator, follow).json()
    alone = {k: v for k, v in follow.items() if k != "previous_response_id"}
    standalone = _answer(Emulator("openai-responses"), alone).json()
    assert reply["usage"]["input_tokens"] > standalone["usage"]["input_tokens"]
    # the first request's prefix is read from the cache (OpenAI caches from 1,024 tokens)
    assert reply["usage"]["input_tokens_details"]["cached_tokens"] >= 1024
    unknown = _answer(emulator, {**follow, "previous_response_id": "resp_gone"})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["param"] == "previous_response_id"
    assert "resp_gone" in unknown.json()["error"]["message"]
