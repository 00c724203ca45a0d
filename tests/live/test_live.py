from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook import Session, ToolCall, ToolResultMessage
from dtl_notebook.agent import SystemUpdate
from dtl_notebook.live import (
    Agent,
    MissingKeyError,
    ProviderError,
    ReplayTransport,
    ScriptedPolicy,
    TurnError,
    emulator_transport,
    live_transport,
    redact,
)
from dtl_notebook.wire import build_request
from tests.support.scenario import LONG_SYSTEM
from tests.support.tools import make_tools

MODES = [
    ("anthropic", "claude-sonnet-4-6", {}, "tool_reference"),
    ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}, "native_search"),
    ("anthropic", "claude-opus-4-8", {"search": "native-regex"}, "native_search"),
    ("openai-responses", "gpt-5.4", {}, "additional_tools"),
    ("openai-responses", "gpt-5.4", {"load_mode": "tool_search"}, "tool_search"),
    ("openai-responses", "gpt-5.4", {"search": "hosted"}, "native_hosted"),
    ("openai-responses", "gpt-5.4", {"search": "native-client"}, "native_client"),
    ("openai-chat", "gpt-4.1", {}, "full_list"),
    ("kimi", "kimi-k2", {}, "kimi"),
]


def new_session() -> Session:
    return Session(system=LONG_SYSTEM, tools=make_tools(), active=["tool_search", "read_file"])


def cached(step: Any) -> int:
    usage = step.reply.usage
    if "cache_read_input_tokens" in usage:
        return int(usage["cache_read_input_tokens"])
    details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    return int(details.get("cached_tokens") or 0)


@pytest.mark.parametrize(("provider", "model", "options", "mode"), MODES)
def test_search_load_call_answer(provider: str, model: str, options: dict, mode: str) -> None:
    s = new_session()
    agent = Agent(s, provider, model, **options)
    first = agent.run("What is the weather in Paris?")
    assert first.text is not None and "Sunny, 21C in Paris" in first.text
    assert "emulated, not an LLM" in first.text
    assert all(step.request.mode == mode for step in agent.steps)
    assert "get_weather" in s.active_tools
    second = agent.run("And the shipping ETA of order_42?")
    assert second.text is not None and "2026-12-05" in second.text
    markers = [m for m in s.messages if isinstance(m, ToolResultMessage) and m.added_tool_names]
    if mode in ("native_search", "native_hosted"):
        assert markers == []  # the provider's server search loaded them: no client marker
        assert any(step.reply.loaded_tool_names == ["get_weather"] for step in agent.steps)
    else:
        assert [m.added_tool_names[0] for m in markers] == ["get_weather", "get_shipping_eta"]
    if mode not in ("full_list",):
        figures = [cached(step) for step in agent.steps]
        assert figures[0] == 0
        assert all(b >= a for a, b in itertools.pairwise(figures)), figures
        grew = True
        if provider == "openai-responses":  # cached in 128-token steps: more once one is crossed
            inputs = [int(step.reply.usage["input_tokens"]) for step in agent.steps]
            grew = inputs[-2] // 128 > inputs[0] // 128  # what steps 1 and -1 could read
        assert figures[-1] > figures[1] > 0 if grew else figures[-1] == figures[1] > 0
    for step in agent.steps:
        assert step.cache.reported is not None
        assert step.cache.disagreement is None


def test_chat_misses_the_cache_when_a_tool_loads() -> None:
    agent = Agent(new_session(), "openai-chat", "gpt-4.1")
    agent.run("What is the weather in Paris?")
    load_step = agent.steps[1]
    assert load_step.cache.cache_break is not None
    assert load_step.cache.cache_break.cause == "tool_set_changed"
    assert cached(load_step) == 0


def _broken(provider: str, model: str, mutate) -> Any:
    s = new_session()
    s.user("hi")
    call = ToolCall(id="call_1", name="tool_search", arguments={"query": "weather"})
    s.assistant(tool_calls=[call])
    s.tool_result("call_1", "found", added_tool_names=["get_weather"])
    request = build_request(s, provider, model)
    request.payload = request.plain()  # its shared parts are read-only: break a copy
    mutate(request.payload)
    return request


@pytest.mark.parametrize(
    ("mutate", "text"),
    [
        (
            lambda p: [t.update(defer_loading=True) for t in p["tools"]],
            "At least one tool must have defer_loading=false. All tools cannot be deferred.",
        ),
        (
            lambda p: p["messages"][2]["content"][0]["content"][0].update(tool_name="ghost"),
            "Tool reference 'ghost' not found in available tools",
        ),
        (lambda p: p["tools"][-1].update(cache_control={"type": "ephemeral"}), "cache_control"),
    ],
)
def test_emulator_rejects_broken_requests_with_real_texts(mutate, text: str) -> None:
    transport = emulator_transport("anthropic")
    with pytest.raises(ProviderError) as err:
        transport.send(_broken("anthropic", "claude-sonnet-4-6", mutate))
    assert err.value.status == 400
    assert text in str(err.value)


def test_emulator_rejects_openai_orphan_output() -> None:
    transport = emulator_transport("openai-responses")
    request = _broken(
        "openai-responses",
        "gpt-5.4",
        lambda p: p["input"].append(
            {"type": "function_call_output", "call_id": "nope", "output": "x"}
        ),
    )
    with pytest.raises(ProviderError) as err:
        transport.send(request)
    assert err.value.status == 400 and "nope" in str(err.value)


class FailingTransport:
    """Answers normally, then raises on the n-th request."""

    def __init__(self, provider: str, fail_at: int, exc: BaseException) -> None:
        self.inner = emulator_transport(provider)
        self.name = "emulator"
        self.fail_at, self.exc, self.sent = fail_at, exc, 0

    def send(self, request):
        self.sent += 1
        if self.sent == self.fail_at:
            raise self.exc
        return self.inner.send(request)


def _state(s: Session) -> tuple:
    return (json.dumps(s.to_dict(), sort_keys=True), s.active_tools, dict(s.prompt))


@pytest.mark.parametrize(
    "exc", [ProviderError("anthropic", "overloaded", 529), ConnectionError("network down")]
)
def test_failed_turn_leaves_the_session_unchanged(exc: Exception) -> None:
    s = new_session()
    agent = Agent(
        s, "anthropic", "claude-sonnet-4-6", transport=FailingTransport("anthropic", 4, exc)
    )
    agent.run("What is the weather in Paris?")  # three requests
    s.prompt["rules"] = "Be brief."
    before, steps = _state(s), len(agent.steps)
    with pytest.raises(TurnError, match="turn failed at step 1") as err:
        agent.run("And the shipping ETA of order_42?")
    assert "session is unchanged" in str(err.value)
    assert _state(s) == before
    assert len(agent.steps) == steps
    assert not any(isinstance(m, SystemUpdate) and "rules" in m.sections for m in s.messages)


def test_failure_mid_turn_after_tools_ran_rolls_back_markers() -> None:
    s = new_session()
    agent = Agent(
        s,
        "openai-responses",
        "gpt-5.4",
        transport=FailingTransport("openai-responses", 2, ProviderError("x", "boom")),
    )
    before = _state(s)
    with pytest.raises(TurnError, match="step 2"):
        agent.run("What is the weather in Paris?")
    assert _state(s) == before
    assert "get_weather" not in s.active_tools


def test_keyboard_interrupt_restores_and_propagates() -> None:
    s = new_session()
    agent = Agent(s, "kimi", "kimi-k2", transport=FailingTransport("kimi", 2, KeyboardInterrupt()))
    before = _state(s)
    with pytest.raises(KeyboardInterrupt):
        agent.run("What is the weather in Paris?")
    assert _state(s) == before


class MalformedTransport:
    name = "emulator"

    def send(self, request):
        return {"content": "not a list"}


def test_malformed_response_is_a_clear_failed_turn() -> None:
    s = new_session()
    before = _state(s)
    agent = Agent(s, "anthropic", "claude-sonnet-4-6", transport=MalformedTransport())
    with pytest.raises(TurnError, match="malformed anthropic response at content"):
        agent.run("hi")
    assert _state(s) == before


def test_step_limit_says_so() -> None:
    policy = ScriptedPolicy([{"call": "read_file", "arguments": {"path": "a.txt"}}] * 5)
    agent = Agent(new_session(), "anthropic", "claude-sonnet-4-6", policy=policy, max_steps=3)
    result = agent.run("loop")
    assert result.text is None
    assert result.stopped == "step limit (3) reached"
    assert len(result.steps) == 3


def test_scripted_model_never_calls_a_tool_outside_its_context() -> None:
    policy = ScriptedPolicy([{"call": "get_weather", "arguments": {"location": "Paris"}}])
    result = Agent(new_session(), "openai-responses", "gpt-5.4", policy=policy).run("weather")
    assert result.text is not None
    assert "cannot call 'get_weather'" in result.text and "not in my context" in result.text


def test_scripted_scenario_plays_in_order() -> None:
    policy = ScriptedPolicy(
        [
            {"search": "shipping eta"},
            {"call": "get_shipping_eta", "arguments": {"order_id": "order_42"}},
            {"text": "It arrives on 2026-12-05."},
        ]
    )
    s = new_session()
    result = Agent(s, "anthropic", "claude-sonnet-4-6", policy=policy).run("ETA of order_42?")
    assert result.text == "It arrives on 2026-12-05."
    assert [c.name for st in result.steps for c in st.reply.message.tool_calls] == [
        "tool_search",
        "get_shipping_eta",
    ]


def test_record_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    agent = Agent(new_session(), "openai-responses", "gpt-5.4", record=str(path))
    agent.run("What is the weather in Paris?")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == len(agent.steps) == 3
    assert lines[0]["request"] == agent.steps[0].request.payload
    replayed = Agent(new_session(), "openai-responses", "gpt-5.4", transport=ReplayTransport(path))
    result = replayed.run("What is the weather in Paris?")
    assert result.text == agent.steps[-1].reply.message.text
    diverged = Agent(new_session(), "openai-responses", "gpt-5.4", transport=ReplayTransport(path))
    with pytest.raises(TurnError, match="differs from the recording"):
        diverged.run("Something else")


def test_keys_are_redacted_in_recordings(tmp_path: Path) -> None:
    class LeakyTransport:
        name = "live"

        def send(self, request):
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": "key sk-ant-abcdefghijklmnop"}],
                "usage": {"input_tokens": 1},
                "headers": {"x-api-key": "sk-secret-value-1"},
            }

    path = tmp_path / "rec.jsonl"
    agent = Agent(
        new_session(),
        "anthropic",
        "claude-sonnet-4-6",
        transport=LeakyTransport(),
        record=str(path),
        metadata={"user_id": "Bearer abcdefghijklmnopq"},
    )
    agent.run("hi")
    text = path.read_text()
    assert "sk-ant-abcdefghijklmnop" not in text and "sk-secret-value-1" not in text
    assert "abcdefghijklmnopq" not in text
    assert text.count("[redacted]") >= 3
    assert "abcdefghijklmnopq" not in json.dumps(agent.steps[0].shown_request)


def test_redact_masks_headers_and_keys() -> None:
    data = {"Authorization": "Bearer abc", "api_key": "x", "nested": ["sk-proj-1234567890abc"]}
    assert redact(data) == {
        "Authorization": "[redacted]",
        "api_key": "[redacted]",
        "nested": ["[redacted]"],
    }


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        live_transport("anthropic")
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        Agent(new_session(), "openai-chat", "gpt-4.1", transport="live")
    local = live_transport("openai-chat", base_url="http://127.0.0.1:8000/v1")
    assert local.name == "live"


def test_bad_transport_and_model_arguments() -> None:
    with pytest.raises(
        ValueError, match="unknown transport 'carrier-pigeon'; choose one of emulator, live, "
    ):
        Agent(new_session(), "anthropic", "claude-sonnet-4-6", transport="carrier-pigeon")
    with pytest.raises(ValueError, match="unknown provider 'gemini'; choose one of anthropic, "):
        Agent(new_session(), "gemini", "x")


@pytest.mark.parametrize(
    ("provider", "options", "message"),
    [
        ("anthropic", {"search": "hosted"}, "search='hosted' does not apply to anthropic"),
        ("kimi", {"search": "native-bm25"}, "kimi takes no search option"),
        ("anthropic", {"load_mode": "tool_search"}, "applies to openai-responses only"),
        (
            "openai-responses",
            {"search": "hosted", "load_mode": "full_list"},
            "cannot be combined with load_mode='full_list'",
        ),
        ("openai-responses", {"load_mode": "eager"}, "unknown load_mode 'eager'"),
    ],
)
def test_agent_checks_search_and_load_mode_against_the_provider(
    provider: str, options: dict[str, str], message: str
) -> None:
    """The one cross-field check: at construction and at a switch, before anything changes."""
    with pytest.raises(ValueError, match=re.escape(message)):
        Agent(new_session(), provider, "m", **options)
    agent = Agent(new_session(), "anthropic", "claude-sonnet-4-6")
    with pytest.raises(ValueError, match=re.escape(message)):
        agent.switch(provider, "m", **options)
    assert (agent.provider, agent.options) == ("anthropic", {})


LIVE = [
    ("anthropic", "ANTHROPIC_API_KEY", "claude-sonnet-4-6"),
    ("openai-responses", "OPENAI_API_KEY", "gpt-5.4"),
]


@pytest.mark.parametrize(("provider", "variable", "model"), LIVE)
def test_live_provider_turn(provider: str, variable: str, model: str) -> None:
    if not os.environ.get(variable):
        pytest.skip(f"{variable} not set: live provider test skipped")
    agent = Agent(new_session(), provider, model, transport="live")
    result = agent.run("What is the weather in Paris? Search for a tool first.")
    assert result.steps and all(step.cache.reported is not None for step in result.steps)
