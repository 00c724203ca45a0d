from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import HarmonyError

from dtl_notebook.context import harmony
from dtl_notebook.context.harmony import HarmonyRendering, render_harmony
from tests.support.scenario import append_only_requests

WEATHER_PARAMS = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City name"}},
    "required": ["location"],
}
ETA_PARAMS = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "description": "Order identifier"}},
    "required": ["order_id"],
}


def weather_tool(**extra: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "name": "get_weather",
        "description": "Get current weather for a location",
        "parameters": WEATHER_PARAMS,
        "strict": False,
        **extra,
    }


def eta_tool(**extra: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "name": "get_shipping_eta",
        "description": "Look up shipping ETA for an order",
        "parameters": ETA_PARAMS,
        "strict": False,
        **extra,
    }


def responses_payload() -> dict[str, Any]:
    """A call, its output, a mid-conversation load, then more conversation."""
    return {
        "model": "gpt-oss-120b",
        "instructions": "You are a logistics assistant.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"location":"Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21C"},
            {"type": "additional_tools", "role": "developer", "tools": [eta_tool()]},
            {"role": "assistant", "content": "It is sunny in Paris."},
            {"role": "user", "content": [{"type": "input_text", "text": "ETA of order_42?"}]},
        ],
        "tools": [weather_tool()],
    }


def decode(tokens: list[int]) -> str:
    return str(harmony.harmony_encoding().decode_utf8(tokens))


def test_immediate_function_tool_and_user_text() -> None:
    r = render_harmony(responses_payload(), "openai-responses")
    assert "namespace functions" in r.text
    assert "type get_weather = " in r.text
    assert "// Get current weather for a location" in r.text
    assert "Weather in Paris?" in r.text
    assert "# Instructions\n\nYou are a logistics assistant." in r.text
    # instructions and immediate tools come before the conversation
    assert r.text.index("type get_weather = ") < r.text.index("Weather in Paris?")
    assert r.text.endswith("<|start|>assistant")


def test_function_call_and_output() -> None:
    r = render_harmony(responses_payload(), "openai-responses")
    call = "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
    assert call + '<|message|>{"location":"Paris"}<|call|>' in r.text
    output = "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"
    assert output + "Sunny, 21C<|end|>" in r.text
    assert r.text.index(call) < r.text.index(output)
    assert "<|channel|>final<|message|>It is sunny in Paris.<|end|>" in r.text


def test_additional_tools_rendered_as_developer_message_at_its_position() -> None:
    r = render_harmony(responses_payload(), "openai-responses")
    assert len(r.loads) == 1 and r.load_paths == ["input.3"]
    load = decode(r.tokens[r.loads[0] :])
    assert load.startswith("<|start|>developer<|message|># Tools\n\n## functions")
    assert "type get_shipping_eta = " in load
    before = decode(r.tokens[: r.loads[0]])
    assert "Sunny, 21C<|end|>" in before
    assert "get_shipping_eta" not in before
    # the loaded message ends before the later assistant and user messages
    end = r.text.index("} // namespace functions<|end|>", len(before))
    assert end < r.text.index("It is sunny in Paris.") < r.text.index("ETA of order_42?")


def test_offsets_follow_the_wire_load_points() -> None:
    for provider, model in [("openai-responses", "gpt-5.4"), ("kimi", "kimi-k2")]:
        request = append_only_requests(provider, model)[2]
        r = render_harmony(request)
        assert r.load_paths == [p.path for p in request.load_points]
        assert len(r.loads) == 1
        assert decode(r.tokens[r.loads[0] :]).startswith("<|start|>developer<|message|># Tools")
        assert "type get_weather = " not in decode(r.tokens[: r.loads[0]])


def test_tool_search_output_is_a_load() -> None:
    payload = responses_payload()
    payload["input"][3:4] = [
        {
            "type": "tool_search_call",
            "call_id": "ts_1",
            "execution": "client",
            "status": "completed",
            "arguments": {"query": "eta"},
        },
        {
            "type": "tool_search_output",
            "call_id": "ts_1",
            "execution": "client",
            "status": "completed",
            "tools": [eta_tool(defer_loading=True)],
        },
    ]
    r = render_harmony(payload, "openai-responses")
    assert r.load_paths == ["input.4"]
    assert "to=functions.tool_search<|channel|>commentary" in decode(r.tokens[: r.loads[0]])
    assert "type get_shipping_eta = (_: {" in decode(r.tokens[r.loads[0] :])


def test_deferred_functions_and_namespaces_summarized_not_rendered() -> None:
    payload = {
        "model": "gpt-5.4",
        "input": [{"role": "user", "content": "hi"}],
        "tools": [
            weather_tool(),
            eta_tool(defer_loading=True),
            {
                "type": "namespace",
                "name": "crm",
                "description": "CRM tools for customer lookup.",
                "tools": [
                    {
                        "type": "function",
                        "name": "list_open_orders",
                        "description": "List open orders for a customer ID.",
                        "defer_loading": True,
                        "parameters": {
                            "type": "object",
                            "properties": {"customer_id": {"type": "string"}},
                        },
                    }
                ],
            },
            {"type": "tool_search"},
        ],
    }
    r = render_harmony(payload, "openai-responses")
    assert "type get_weather = (_: {" in r.text
    assert "- get_shipping_eta: Look up shipping ETA for an order" in r.text
    assert "- namespace crm: CRM tools for customer lookup." in r.text
    for hidden in ("type get_shipping_eta", "order_id", "list_open_orders", "customer_id"):
        assert hidden not in r.text
    assert r.text.index("# Deferred tools") < r.text.index("<|start|>user")
    assert r.loads == []
    assert any("hosted tool_search" in n for n in r.notes)
    assert any("closest public rendering" in n for n in r.notes)


def test_chat_payload() -> None:
    payload = {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
            {"role": "system", "content": "<system_update>Date: Monday</system_update>"},
            {"role": "assistant", "content": "Sunny."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Get current weather for a location",
                    "parameters": WEATHER_PARAMS,
                },
            }
        ],
    }
    r = render_harmony(payload, "openai-chat")
    assert "# Instructions\n\nBe brief." in r.text
    assert "type get_weather = " in r.text
    assert "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>" in r.text
    assert "<|start|>assistant to=functions.get_weather<|channel|>commentary" in r.text
    assert "<|start|>functions.get_weather to=assistant<|channel|>commentary" in r.text
    patch = "<|start|>developer<|message|><system_update>Date: Monday</system_update><|end|>"
    assert r.text.index("Sunny<|end|>") < r.text.index(patch) < r.text.index("Sunny.")
    assert r.loads == []


def test_kimi_system_tools_message_is_a_load() -> None:
    payload = {
        "model": "kimi-k2",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "ETA?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "tool_search", "arguments": '{"query":"eta"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "found get_shipping_eta"},
            {
                "role": "system",
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "get_shipping_eta",
                            "description": "Look up shipping ETA for an order",
                            "parameters": ETA_PARAMS,
                        },
                    }
                ],
            },
            {"role": "user", "content": "order_42"},
        ],
    }
    r = render_harmony(payload, "kimi")
    assert r.load_paths == ["messages.4.tools"]
    before, after = decode(r.tokens[: r.loads[0]]), decode(r.tokens[r.loads[0] :])
    assert before.endswith("found get_shipping_eta<|end|>")
    assert after.startswith("<|start|>developer<|message|># Tools")
    assert "type get_shipping_eta = " in after
    assert after.index("type get_shipping_eta") < after.index("order_42")
    assert any("Kimi" in n for n in r.notes)


def test_wire_requests_of_every_openai_family_provider_render() -> None:
    for provider, model in [
        ("openai-responses", "gpt-5.4"),
        ("openai-chat", "gpt-4.1"),
        ("kimi", "kimi-k2"),
    ]:
        for request in append_only_requests(provider, model):
            r = render_harmony(request)
            assert "What is the weather in Paris?" in r.text
            assert r.token_count == len(r.tokens) > 0


def test_token_count_and_decoding_consistent() -> None:
    r = render_harmony(responses_payload(), "openai-responses")
    assert isinstance(r, HarmonyRendering)
    assert r.token_count == len(r.tokens)
    assert decode(r.tokens) == r.text
    encoding = harmony.harmony_encoding()
    assert encoding.encode(r.text, allowed_special="all") == r.tokens
    # a prefix of the tokens decodes to a prefix of the text
    assert r.text.startswith(decode(r.tokens[: r.loads[0]]))
    with pytest.raises(AttributeError):
        r.tokens = []  # type: ignore[misc]


def test_special_token_text_in_content_stays_ordinary_text() -> None:
    payload = {"model": "gpt-oss-20b", "input": "say <|end|> please"}
    r = render_harmony(payload, "openai-responses")
    assert "<|start|>user<|message|>say <|end|> please<|end|>" in r.text
    assert r.text.count("<|start|>") == 3  # system, user, and the assistant's turn


def test_reasoning_effort_and_left_out_content_noted() -> None:
    payload = {
        "model": "gpt-oss-20b",
        "reasoning": {"effort": "high"},
        "input": [
            {"role": "user", "content": [{"type": "input_image", "image_url": "data:,"}]},
            {"type": "reasoning", "summary": []},
        ],
        "tools": [{"type": "web_search"}],
    }
    r = render_harmony(payload, "openai-responses")
    assert "Reasoning: high" in r.text
    assert any("input_image" in n for n in r.notes)
    assert any("'reasoning' item" in n for n in r.notes)
    assert any("'web_search' tool" in n for n in r.notes)


def test_anthropic_and_unknown_providers_rejected() -> None:
    with pytest.raises(ValueError, match="openai-responses, openai-chat, kimi"):
        render_harmony({"model": "claude-sonnet-4-6", "messages": []}, "anthropic")
    request = append_only_requests("anthropic", "claude-sonnet-4-6")[0]
    with pytest.raises(ValueError, match="anthropic"):
        render_harmony(request)
    with pytest.raises(ValueError):
        render_harmony({"model": "x", "messages": []})
    with pytest.raises(ValueError, match="does not match"):
        render_harmony(append_only_requests("kimi", "kimi-k2")[0], "openai-chat")


def test_no_network_and_env_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    harmony.harmony_encoding.cache_clear()
    try:
        r = render_harmony(responses_payload(), "openai-responses")
        assert "type get_weather = " in r.text
        assert "TIKTOKEN_ENCODINGS_BASE" not in os.environ
        render_harmony(responses_payload(), "openai-responses")
        assert harmony.harmony_encoding.cache_info().misses == 1
    finally:
        harmony.harmony_encoding.cache_clear()


def test_no_download_in_a_fresh_process(tmp_path: Path) -> None:
    """The Rust loader would download into TIKTOKEN_RS_CACHE_DIR through the proxy; it must not."""
    cache = tmp_path / "tiktoken-rs-cache"
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_ENCODINGS_BASE"}
    dead = "http://127.0.0.1:9"
    env.update(
        TIKTOKEN_RS_CACHE_DIR=str(cache),
        HTTPS_PROXY=dead,
        https_proxy=dead,
        HTTP_PROXY=dead,
        http_proxy=dead,
        ALL_PROXY=dead,
        all_proxy=dead,
        NO_PROXY="",
        no_proxy="",
    )
    script = (
        "import json, os, sys\n"
        "from dtl_notebook.context.harmony import render_harmony\n"
        "payload = json.loads(sys.argv[1])\n"
        "r = render_harmony(payload, 'openai-responses')\n"
        "assert 'TIKTOKEN_ENCODINGS_BASE' not in os.environ\n"
        "print(r.token_count)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(responses_payload())],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 0
    assert list(cache.iterdir()) == []


def test_existing_env_var_is_respected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # An explicitly set folder is used as is: an empty one makes loading fail.
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_RS_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    harmony.harmony_encoding.cache_clear()
    try:
        with pytest.raises(HarmonyError, match="vocab"):
            harmony.harmony_encoding()
        assert os.environ["TIKTOKEN_ENCODINGS_BASE"] == str(tmp_path)
    finally:
        harmony.harmony_encoding.cache_clear()
