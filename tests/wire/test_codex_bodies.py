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
        "`content: null` on a reasoning item (input.2): not in the SDK types, the API takes it",
        "an assistant message's `output_text` parts sent back without `annotations` or "
        "`status` (input.5): not in the SDK types, the API takes it",
        "`id` on an input message (the API takes the ids it returned) (input.6): not in the "
        "SDK types, the API takes it",
    ]


def test_the_emulator_answers_a_codex_history() -> None:
    reply = _answer(Emulator("openai-responses"), codex_history())
    assert reply.status_code == 200, reply.text
    assert reply.json()["object"] == "response"


def test_the_websocket_fields_are_named_not_refused() -> None:
    body = {**codex_history(), "type": "response.create", "generate": False}
    body["client_metadata"] = {"traceparent": "00-abc-def-01"}
    notes = validate_lenient(body, "openai-responses")
    assert [n.split(":")[0] for n in notes[:3]] == ["type", "generate", "client_metadata"]
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
def test_ids_on_messages_never_decide_validity(ids: list[str | None]) -> None:
    body = codex_history()
    users = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}]
    body["input"] += [{**users[0], **({"id": i} if i else {})} for i in ids]
    notes = validate_lenient(body, "openai-responses")
    carrying = [i for i in ids if i is not None]
    assert any("`id` on an input message" in n for n in notes)  # input.6 carries one already
    if carrying:
        assert str(len(body["input"]) - len(ids) + ids.index(carrying[0])) in notes[-1]


@pytest.mark.parametrize("name", TRACES)
def test_real_codex_bodies_validate_and_are_answered(real_recordings: Path, name: str) -> None:
    record = json.loads((real_recordings / "claude-tap" / name).read_text())
    sent = record["request"].get("ws_events") or [record["request"]["body"]]
    bodies = [event for event in sent if event.get("type") == "response.create"]
    assert bodies
    emulator = Emulator("openai-responses")
    for body in bodies:
        notes = validate_lenient(body, "openai-responses")
        assert notes[0].startswith('type: "response.create"')
        reply = _answer(emulator, body)
        assert reply.status_code == 200, reply.text
        assert reply.json()["model"] == body["model"]
