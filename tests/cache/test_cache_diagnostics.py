"""The providers' own cache diagnostics: requested by the builders, answered by the emulator
from its cache, parsed from SDK-shaped responses, and set next to the predicted cause."""

from __future__ import annotations

from typing import Any

import anthropic.types
import httpx2
import openai.types.responses

from dtl_notebook import Session
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.cache.diagnostics import ProviderDiagnosis, agreement, provider_diagnosis
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.wire import build_request
from tests.support.wire_requests import doc_tools

URLS = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai-responses": "https://api.openai.com/v1/responses",
}
SDK_TYPES: dict[str, Any] = {
    "anthropic": anthropic.types.Message,
    "openai-responses": openai.types.responses.Response,
}


def _turns(provider: str, model: str, **options: Any) -> list[tuple[Any, dict[str, Any]]]:
    """Three requests, each asking for diagnostics against the previous response: a plain
    follow-up, then one more active tool outside a tool run (a divergence in `tools`)."""
    emulator = Emulator(provider)
    s = Session(system="Be brief. " * 300, tools=doc_tools(), active=["read_file"], search=None)
    out: list[tuple[Any, dict[str, Any]]] = []
    previous = None
    for text, active in [("hi", None), ("and now?", None), ("and the time?", "get_time")]:
        if active:
            s.set_active_tools([*s.active_tools, active])
        s.user(text)
        request = build_request(
            s, provider, model, diagnostics=True, previous_response_id=previous, **options
        )
        response = emulator.handle(httpx2.Request("POST", URLS[provider], json=request.payload))
        body = response.json()
        assert response.status_code == 200, body
        SDK_TYPES[provider].model_validate(body)  # shaped exactly like the SDK's response type
        s.assistant(text="ok")
        out.append((request, body))
        previous = body["id"]
    return out


def test_anthropic_diagnostics_are_requested_and_answered_from_the_emulated_cache() -> None:
    turns = _turns("anthropic", "claude-opus-4-8")
    assert turns[0][0].payload["diagnostics"] == {"previous_message_id": None}
    assert turns[1][0].payload["diagnostics"] == {"previous_message_id": turns[0][1]["id"]}
    assert [body["diagnostics"] for _, body in turns[:2]] == [None, None]
    reason = turns[2][1]["diagnostics"]["cache_miss_reason"]
    assert reason["type"] == "tools_changed" and reason["cache_missed_input_tokens"] > 0
    analyzer = CacheAnalyzer()
    entries = [analyzer.add(request, body) for request, body in turns]
    assert [e.diagnosis_agreement for e in entries] == ["unavailable", "agree", "agree"]
    assert entries[1].diagnosis == ProviderDiagnosis("anthropic", "hit")
    assert entries[2].diagnosis is not None and entries[2].diagnosis.reason == "tools_changed"
    assert entries[2].cache_break is not None
    assert entries[2].cache_break.cause == "tool_set_changed"


def test_responses_diagnostics_use_prompt_cache_options() -> None:
    turns = _turns("openai-responses", "gpt-5.6")
    assert "prompt_cache_options" not in turns[0][0].payload
    assert any("previous response id" in n for n in turns[0][0].notes)
    assert turns[1][0].payload["prompt_cache_options"] == {
        "comparison_response_id": turns[0][1]["id"]
    }
    diagnoses = [body.get("prompt_cache_diagnostics") for _, body in turns]
    assert diagnoses[:2] == [None, {"type": "cache_hit"}]
    assert diagnoses[2] is not None and diagnoses[2]["type"] == "cache_miss"
    assert diagnoses[2]["reason"] == "tools_changed"
    analyzer = CacheAnalyzer()
    entries = [analyzer.add(request, body) for request, body in turns]
    assert [e.diagnosis_agreement for e in entries] == ["unavailable", "agree", "agree"]


def test_models_without_prompt_cache_options_get_a_note_instead() -> None:
    s = Session(tools=doc_tools(), active=["read_file"], search=None)
    s.user("hi")
    request = build_request(
        s, "openai-responses", "gpt-5.4", diagnostics=True, previous_response_id="resp_1"
    )
    assert "prompt_cache_options" not in request.payload
    assert any("no prompt cache diagnostics requested" in n for n in request.notes)


def test_sdk_objects_parse_into_the_neutral_model() -> None:
    message = anthropic.types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
            "diagnostics": {
                "cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 812}
            },
        }
    )
    diagnosis = provider_diagnosis(message, "anthropic")
    assert diagnosis == ProviderDiagnosis("anthropic", "miss", "tools_changed", 812)
    assert str(diagnosis) == "tools_changed (812 tokens)"
    assert agreement(BreakCause("tool_set_changed"), diagnosis) == "agree"
    assert agreement(None, diagnosis) == "disagree"  # we predicted a hit
    pending = {"diagnostics": {"cache_miss_reason": None}}
    assert provider_diagnosis(pending, "anthropic") == ProviderDiagnosis("anthropic", "pending")
    missing = {"diagnostics": {"cache_miss_reason": {"type": "previous_message_not_found"}}}
    assert agreement(BreakCause("history_rewritten"), provider_diagnosis(missing, "anthropic")) == (
        "unavailable"
    )
    # a null diagnostics means nothing unless the request asked for a comparison
    assert provider_diagnosis({"diagnostics": None}, "anthropic") is None
    asked = {"diagnostics": {"previous_message_id": "msg_0"}}
    assert provider_diagnosis({}, "anthropic", asked) == ProviderDiagnosis("anthropic", "hit")


def test_unknown_comparison_ids_are_reported_as_not_found() -> None:
    emulator = Emulator("openai-responses")
    s = Session(tools=doc_tools(), active=["read_file"], search=None)
    s.user("hi")
    payload = build_request(
        s, "openai-responses", "gpt-5.6", diagnostics=True, previous_response_id="resp_nope"
    ).payload
    body = emulator.respond(payload)
    openai.types.responses.Response.model_validate(body)
    assert body["prompt_cache_diagnostics"] == {"type": "comparison_response_not_found"}
    assert provider_diagnosis(body, "openai-responses") == ProviderDiagnosis(
        "openai-responses", "not_found", "comparison_response_not_found"
    )
