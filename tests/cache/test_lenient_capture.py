"""Captured traffic checked as the API takes it: Codex-shaped bodies (no top-level `tools`, the
catalog in a leading `additional_tools` item, function tools without `strict`) are analysed
with a note, never refused; requests this package builds stay strictly validated."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.cache import audit_capture, load_capture
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.notebook.records import from_capture
from dtl_notebook.wire import WireValidationError, validate_payload
from dtl_notebook.wire.lenient import captured_findings, validate_lenient, with_api_defaults


def _function(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": f"Runs {name}.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
    }


def codex_body(user: str = "list the files", *, tools: int = 4) -> dict[str, Any]:
    """A Codex 0.144-shaped Responses body: the whole catalog in a leading developer item."""
    catalog: list[dict[str, Any]] = [_function(f"tool_{i}") for i in range(tools)]
    catalog.append({"type": "custom", "name": "apply_patch", "description": "Apply a patch."})
    return {
        "model": "gpt-5.4",
        "instructions": "You are Codex, a coding agent.",
        "input": [
            {"type": "additional_tools", "role": "developer", "tools": catalog},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": user}]},
        ],
        "prompt_cache_key": "codex-session-1",
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }


def test_strict_validation_refuses_the_codex_shape_lenient_names_it() -> None:
    body = codex_body()
    with pytest.raises(WireValidationError, match=r"input\.0\.tools\.0: missing: field 'strict'"):
        validate_payload(body, "openai-responses")
    notes = validate_lenient(body, "openai-responses")
    assert notes == [
        "4 function tools without `strict` (input.0.tools.0, input.0.tools.1, input.0.tools.2 "
        "and 1 more): the SDK types require the field, the API takes the tool without it and "
        "applies its default"
    ]


def test_lenient_still_refuses_what_the_api_refuses() -> None:
    body = codex_body()
    body["input"][0]["role"] = "user"  # additional_tools is a developer item
    with pytest.raises(WireValidationError, match=r"input\.0.*role 'user' not allowed"):
        validate_lenient(body, "openai-responses")
    findings = captured_findings(body, "openai-responses")
    assert findings[-1].startswith("the SDK request types call this body invalid at input.0")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={"strict": st.none() | st.booleans(), "parameters": st.none()},
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_api_defaults_leave_the_body_as_it_came(extras: list[dict[str, Any]], top: bool) -> None:
    tools = [{**_function(f"t{i}"), **extra} for i, extra in enumerate(extras)]
    for tool, extra in zip(tools, extras, strict=True):
        if "parameters" not in extra and len(tool["name"]) % 2:
            del tool["parameters"]
    body = codex_body(tools=0)
    if top:
        body["tools"] = tools
    else:
        body["input"][0]["tools"] = tools
    before = copy.deepcopy(body)
    filled, notes = with_api_defaults(body, "openai-responses")
    assert body == before  # never changed in place
    missing = sum(k not in t for t in tools for k in ("strict", "parameters"))
    assert (filled is body) == (missing == 0)
    assert bool(notes) == (missing > 0)
    assert validate_lenient(body, "openai-responses") == notes


def test_a_codex_capture_is_analysed_with_a_note(tmp_path: Path) -> None:
    first = codex_body()
    second = codex_body()
    second["input"] += [
        {"role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "input_text", "text": "more"}]},
    ]
    path = tmp_path / "codex.jsonl"
    path.write_text("\n".join(json.dumps(b) for b in (first, second)) + "\n")
    exchanges = load_capture(path)
    assert all("without `strict`" in e.notes[0] for e in exchanges)
    audit = audit_capture(path)
    assert len(audit["openai-responses"]) == 2
    records = from_capture(path)
    assert any("without `strict`" in note for note in records[1].notes)


def test_the_emulator_over_http_answers_a_codex_body_as_the_api_does() -> None:
    with EmulatorServer() as upstream:
        reply = httpx2.post(f"{upstream.url}/v1/responses", json=codex_body(), timeout=120)
        assert reply.status_code == 200, reply.text
        assert reply.json()["object"] == "response"
        broken = codex_body()
        broken["input"][0]["role"] = "user"
        refused = httpx2.post(f"{upstream.url}/v1/responses", json=broken, timeout=120)
        assert refused.status_code == 400
        assert "role 'user' not allowed" in refused.json()["error"]["message"]


def test_requests_this_package_builds_stay_strict() -> None:
    from dtl_notebook.demo import demo_session
    from dtl_notebook.wire import build_request

    session = demo_session()
    session.user("What is the shipping ETA of order_42?")
    request = build_request(session, "openai-responses", "gpt-5.4")
    payload = copy.deepcopy(request.payload)
    functions = [t for t in payload["tools"] if t.get("type") == "function"]
    assert functions and all("strict" in t for t in functions)  # what it emits is complete
    tool = functions[0]
    del tool["strict"]
    with pytest.raises(WireValidationError, match="missing: field 'strict' required"):
        validate_payload(payload, "openai-responses")


def test_claude_tap_codex_websocket_trace_notes_the_prefetch(real_recordings: Path) -> None:
    trace = real_recordings / "claude-tap" / "codex_ws_multi_response_trace.jsonl"
    exchanges = load_capture(trace)
    prefetch = exchanges[0]
    assert prefetch.response is not None and prefetch.response["id"] == "resp_prefetch"
    assert prefetch.notes[0].startswith("generate: false: a WebSocket response.create field")
    chain = [e.request.get("previous_response_id") for e in exchanges]
    assert chain == [None, "resp_prefetch", "resp_tool"]
    assert all(any("without `strict`" in n for n in e.notes) for e in exchanges)
    records = from_capture(trace)
    assert [r.label for r in records] == ["captured"] * 3
