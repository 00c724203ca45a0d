"""Tests for dtl_notebook.wire.validate: strict SDK shapes plus provider rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dtl_notebook.wire.validate import WireValidationError, required_betas, validate_payload

# --------------------------------------------------------------------------- helpers

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["location"],
}


def anthropic_req(**kw: Any) -> dict[str, Any]:
    return {
        "model": "claude-opus-4-8",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What's the weather in San Francisco?"}],
        **kw,
    }


def responses_req(**kw: Any) -> dict[str, Any]:
    return {"model": "gpt-5.5", "input": [{"role": "user", "content": "Hi"}], **kw}


def chat_req(**kw: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi"}], **kw}


def a_tool(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name} tool", "input_schema": WEATHER_SCHEMA, **kw}


def chat_tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": "d", "parameters": {"type": "object"}},
    }


def assert_valid(payload: dict[str, Any], provider: str) -> None:
    try:
        validate_payload(payload, provider)
    except WireValidationError as exc:  # pragma: no cover - reported as a test failure
        pytest.fail(f"expected a valid payload, got: {exc}")


def fails(payload: dict[str, Any], provider: str) -> WireValidationError:
    with pytest.raises(WireValidationError) as info:
        validate_payload(payload, provider)
    assert info.value.provider == provider
    return info.value


# --------------------------------------------------------------------------- §1.5 fixtures

REGEX_TOOL = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
BM25_TOOL = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
GET_WEATHER_DEFERRED: dict[str, Any] = {
    "name": "get_weather",
    "description": "Get current weather for a location",
    "input_schema": WEATHER_SCHEMA,
    "defer_loading": True,
}
SEARCH_RESPONSE_CONTENT = [
    {"type": "text", "text": "I'll search for tools to help with the weather information."},
    {
        "type": "server_tool_use",
        "id": "srvtoolu_01ABC123",
        "name": "tool_search_tool_regex",
        "input": {"pattern": "weather", "limit": 10},
    },
    {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_01ABC123",
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}],
        },
    },
    {"type": "text", "text": "I found a weather tool. Let me get the weather for San Francisco."},
    {
        "type": "tool_use",
        "id": "toolu_01XYZ789",
        "name": "get_weather",
        "input": {"location": "San Francisco", "unit": "fahrenheit"},
    },
]


def server_search_conversation() -> dict[str, Any]:
    return anthropic_req(
        tools=[copy.deepcopy(REGEX_TOOL), copy.deepcopy(GET_WEATHER_DEFERRED)],
        messages=[
            {"role": "user", "content": "What's the weather in San Francisco?"},
            {"role": "assistant", "content": copy.deepcopy(SEARCH_RESPONSE_CONTENT)},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01XYZ789", "content": "59F"}
                ],
            },
        ],
    )


def client_search_conversation() -> dict[str, Any]:
    return anthropic_req(
        tools=[a_tool("search_tools"), a_tool("discovered_tool_name", defer_loading=True)],
        messages=[
            {"role": "user", "content": "Find a tool"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_your_tool_id",
                        "name": "search_tools",
                        "input": {"location": "x"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_your_tool_id",
                        "content": [
                            {"type": "tool_reference", "tool_name": "discovered_tool_name"}
                        ],
                    }
                ],
            },
        ],
    )


@pytest.mark.parametrize("search_tool", [REGEX_TOOL, BM25_TOOL])
def test_anthropic_search_tool_fixtures_pass(search_tool: dict[str, Any]) -> None:
    payload = anthropic_req(tools=[search_tool, GET_WEATHER_DEFERRED])
    assert_valid(payload, "anthropic")


def test_anthropic_server_search_response_replayed_passes() -> None:
    assert_valid(server_search_conversation(), "anthropic")


def test_anthropic_client_search_result_passes() -> None:
    assert_valid(client_search_conversation(), "anthropic")


def test_anthropic_search_error_result_fixture_passes() -> None:
    payload = server_search_conversation()
    payload["messages"][1]["content"] = [
        SEARCH_RESPONSE_CONTENT[1],
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srvtoolu_01ABC123",
            "content": {
                "type": "tool_search_tool_result_error",
                "error_code": "invalid_tool_input",
                "error_message": "Invalid regular expression pattern: missing ) at position 1",
            },
        },
    ]
    payload["messages"].pop()
    assert_valid(payload, "anthropic")
    # The old doc code is gone from the SDK Literal.
    payload["messages"][1]["content"][1]["content"]["error_code"] = "invalid_pattern"
    err = fails(payload, "anthropic")
    assert err.path == "messages.1.content.1.content.error_code"
    assert err.reason.startswith("literal_error:")


def test_anthropic_wrong_server_tool_name_fails() -> None:
    bad = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_bm25"}
    err = fails(anthropic_req(tools=[bad, GET_WEATHER_DEFERRED]), "anthropic")
    assert err.path == "tools.0.name"
    assert "literal_error" in err.reason and "tool_search_tool_regex" in err.reason


def test_anthropic_tool_addition_is_validated_against_the_beta_types() -> None:
    payload = anthropic_req(tools=[REGEX_TOOL, GET_WEATHER_DEFERRED])
    payload["messages"].append(
        {
            "role": "system",
            "content": [
                {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_weather"}}
            ],
        }
    )
    assert_valid(payload, "anthropic")  # BetaSystemMessageParam takes tool blocks
    assert required_betas(payload, "anthropic") == ["mid-conversation-tool-changes-2026-07-01"]
    payload["messages"][1]["content"][0]["tool"] = {"type": "tool_reference", "tool_name": "x"}
    err = fails(payload, "anthropic")
    assert err.path == "messages.1.content.0.tool"
    assert "name" in err.reason


# --------------------------------------------------------------------------- §2 fixtures


def test_anthropic_tool_breakpoint_fixture_passes() -> None:
    tools = [
        {
            "name": "get_weather",
            "description": "Get the current weather in a given location",
            "input_schema": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        },
        {
            "name": "get_time",
            "description": "Get the current time in a given time zone",
            "input_schema": {
                "type": "object",
                "properties": {"timezone": {"type": "string"}},
                "required": ["timezone"],
            },
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert_valid(anthropic_req(tools=tools), "anthropic")


def test_anthropic_automatic_plus_explicit_fixture_passes() -> None:
    payload = {
        "model": "claude-opus-4-8",
        "max_tokens": 1024,
        "cache_control": {"type": "ephemeral"},
        "system": [
            {
                "type": "text",
                "text": "You are a helpful assistant.",
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": [{"role": "user", "content": "What are the key terms?"}],
    }
    assert_valid(payload, "anthropic")


# --------------------------------------------------------------------------- anthropic shapes


def test_typo_key_reported_at_its_tool() -> None:
    tools = [REGEX_TOOL, a_tool("a"), {**a_tool("b"), "defer_loadng": True}]
    err = fails(anthropic_req(tools=tools), "anthropic")
    assert err.path == "tools.2"
    assert err.reason == "extra_forbidden: unexpected key 'defer_loadng'"
    assert str(err) == (
        "anthropic request invalid at tools.2: extra_forbidden: unexpected key 'defer_loadng'"
    )


def test_unknown_block_inside_tool_result_content_is_found() -> None:
    payload = client_search_conversation()
    payload["messages"][2]["content"][0]["content"] = [{"type": "bogus", "x": 1}]
    err = fails(payload, "anthropic")
    assert err.path == "messages.2.content.0.content.0"
    assert err.reason.startswith("literal_error: type 'bogus'")
    assert "'tool_reference'" in err.reason  # lists the allowed types


def test_missing_required_field_is_short() -> None:
    err = fails(anthropic_req(tools=[{"name": "x"}]), "anthropic")
    assert err.path == "tools.0"
    assert err.reason == "missing: field 'input_schema' required"


def test_extra_key_on_message_text_block_rejected_despite_response_models() -> None:
    # MessageContentParam also accepts response models (extra="allow"); strictness must hold.
    payload = anthropic_req(
        messages=[{"role": "user", "content": [{"type": "text", "text": "x", "oops": 1}]}]
    )
    err = fails(payload, "anthropic")
    assert (err.path, err.reason) == (
        "messages.0.content.0",
        "extra_forbidden: unexpected key 'oops'",
    )


def test_unknown_top_level_key_and_missing_root_field() -> None:
    err = fails(anthropic_req(temperture=0.2), "anthropic")
    assert (err.path, err.reason) == ("", "extra_forbidden: unexpected key 'temperture'")
    assert "at <root>:" in str(err)
    err = fails({"model": "m", "messages": []}, "anthropic")
    assert err.reason == "missing: field 'max_tokens' required"


@pytest.mark.parametrize(
    ("provider", "model"),
    [("anthropic", "claude-opus-4-8"), ("openai-chat", "gpt-5.4"), ("kimi", "kimi-k2.5")],
)
def test_empty_messages_refused_naming_the_field(provider: str, model: str) -> None:
    body: dict[str, Any] = {"model": model, "messages": []}
    if provider == "anthropic":
        body["max_tokens"] = 16
    err = fails(body, provider)
    assert err.path == "messages"
    assert err.reason == "too_short: 'messages' must hold a message, got []"


def test_unknown_role_reports_allowed_roles() -> None:
    err = fails(anthropic_req(messages=[{"role": "usr", "content": "x"}]), "anthropic")
    assert err.path == "messages.0"
    assert "role 'usr'" in err.reason and "'user'" in err.reason


def test_sdk_type_configs_are_restored_after_building() -> None:
    from anthropic.types import ToolParam
    from anthropic.types.tool_param import InputSchemaTyped
    from pydantic import TypeAdapter

    validate_payload(anthropic_req(tools=[a_tool("a")]), "anthropic")
    assert "__pydantic_config__" not in ToolParam.__dict__
    assert InputSchemaTyped.__pydantic_config__ == {"extra": "allow"}  # type: ignore[attr-defined]
    lenient = TypeAdapter(ToolParam).validate_python({**a_tool("a"), "extra": 1})
    assert "extra" not in lenient


def test_input_schema_keeps_extra_json_schema_keywords() -> None:
    schema = {**WEATHER_SCHEMA, "additionalProperties": False, "$defs": {}}
    assert_valid(anthropic_req(tools=[a_tool("a", input_schema=schema)]), "anthropic")


# --------------------------------------------------------------------------- anthropic rules


def test_all_tools_deferred() -> None:
    tools = [a_tool("a", defer_loading=True), a_tool("b", defer_loading=True)]
    err = fails(anthropic_req(tools=tools), "anthropic")
    assert err.path == "tools"
    assert (
        "At least one tool must have defer_loading=false. All tools cannot be deferred."
        in err.reason
    )


def test_cache_control_on_deferred_tool() -> None:
    tools = [a_tool("a"), a_tool("b", defer_loading=True, cache_control={"type": "ephemeral"})]
    err = fails(anthropic_req(tools=tools), "anthropic")
    assert err.path == "tools.1.cache_control"
    assert "defer_loading" in err.reason and "cache_control" in err.reason


def test_dangling_tool_reference_in_tool_result() -> None:
    payload = client_search_conversation()
    payload["messages"][2]["content"][0]["content"][0]["tool_name"] = "unknown_tool"
    err = fails(payload, "anthropic")
    assert err.path == "messages.2.content.0.content.0"
    assert "Tool reference 'unknown_tool' not found in available tools" in err.reason


def test_dangling_tool_reference_in_server_search_result() -> None:
    payload = server_search_conversation()
    result = payload["messages"][1]["content"][2]
    result["content"]["tool_references"][0]["tool_name"] = "unknown_tool"
    err = fails(payload, "anthropic")
    assert err.path == "messages.1.content.2.content.tool_references.0"
    assert "Tool reference 'unknown_tool' not found in available tools" in err.reason


def test_more_than_four_breakpoints() -> None:
    cc = {"type": "ephemeral"}
    payload = anthropic_req(
        tools=[a_tool("a", cache_control=cc), a_tool("b", cache_control=cc)],
        system=[{"type": "text", "text": "s", "cache_control": cc}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "q", "cache_control": cc}]}
        ],
    )
    assert_valid(payload, "anthropic")  # exactly 4
    payload["cache_control"] = cc  # top-level automatic caching takes a 5th slot
    err = fails(payload, "anthropic")
    assert err.path == "cache_control"
    assert "too many cache_control breakpoints: 5" in err.reason


def test_breakpoints_nested_in_tool_result_are_counted() -> None:
    cc = {"type": "ephemeral"}
    payload = client_search_conversation()
    payload["tools"][0]["cache_control"] = cc
    payload["system"] = [{"type": "text", "text": "s", "cache_control": cc}]
    payload["messages"][1]["content"][0]["cache_control"] = cc
    result = payload["messages"][2]["content"][0]
    result["cache_control"] = cc
    result["content"][0]["cache_control"] = cc
    err = fails(payload, "anthropic")
    assert err.path == "messages.2.content.0.content.0.cache_control"
    assert "too many cache_control breakpoints" in err.reason


def test_ttl_1h_after_5m_is_rejected() -> None:
    payload = anthropic_req(
        tools=[a_tool("a", cache_control={"type": "ephemeral", "ttl": "1h"})],
        system=[{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        messages=[
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "q",
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    }
                ],
            }
        ],
    )
    err = fails(payload, "anthropic")
    assert err.path == "messages.0.content.0.cache_control"
    assert "1h" in err.reason and "system.0.cache_control" in err.reason
    # 1h then 5m is the allowed order.
    payload["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "5m"}
    assert_valid(payload, "anthropic")


def test_bad_ttl_value_caught_by_types() -> None:
    tools = [a_tool("a", cache_control={"type": "ephemeral", "ttl": "2h"})]
    err = fails(anthropic_req(tools=tools), "anthropic")
    assert err.path == "tools.0.cache_control.ttl"
    assert err.reason.startswith("literal_error")


def test_is_error_tool_result_must_be_text_only() -> None:
    payload = client_search_conversation()
    payload["messages"][2]["content"][0]["is_error"] = True
    err = fails(payload, "anthropic")
    assert err.path == "messages.2.content.0.content.0"
    assert "all content must be type 'text' if 'is_error' is true" in err.reason
    payload["messages"][2]["content"][0]["content"] = [{"type": "text", "text": "boom"}]
    assert_valid(payload, "anthropic")


def test_tool_result_needs_tool_use_in_preceding_assistant_message() -> None:
    payload = client_search_conversation()
    payload["messages"][2]["content"][0]["tool_use_id"] = "toolu_other"
    err = fails(payload, "anthropic")
    assert err.path == "messages.2.content.0"
    assert "'toolu_other'" in err.reason and "preceding assistant message" in err.reason


def test_tool_result_for_an_older_tool_use_fails() -> None:
    payload = client_search_conversation()
    payload["messages"] += [
        {"role": "assistant", "content": "ok"},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_your_tool_id", "content": "x"}
            ],
        },
    ]
    err = fails(payload, "anthropic")
    assert err.path == "messages.4.content.0"


def test_duplicate_anthropic_tool_names() -> None:
    err = fails(anthropic_req(tools=[a_tool("a"), a_tool("b"), a_tool("a")]), "anthropic")
    assert err.path == "tools.2"
    assert "duplicate tool name 'a'" in err.reason and "tools.0" in err.reason


# --------------------------------------------------------------------------- §3.3 fixtures

CRM_NAMESPACE: dict[str, Any] = {
    "type": "namespace",
    "name": "crm",
    "description": "CRM tools for customer lookup and order management.",
    "tools": [
        {
            "type": "function",
            "name": "list_open_orders",
            "description": "List open orders for a customer ID.",
            "defer_loading": True,
            "parameters": {
                "type": "object",
                "properties": {"customer_id": {"type": "string"}},
                "required": ["customer_id"],
                "additionalProperties": False,
            },
        }
    ],
}
SHIPPING_ETA: dict[str, Any] = {
    "type": "function",
    "name": "get_shipping_eta",
    "description": "Look up shipping ETA details for an order.",
    "defer_loading": True,
    "strict": None,  # not in the doc fixture; the SDK type requires the key (nullable)
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
        "additionalProperties": False,
    },
}
CLIENT_SEARCH_TOOL: dict[str, Any] = {
    "type": "tool_search",
    "execution": "client",
    "description": "Find project tools needed to continue the task.",
    "parameters": {
        "type": "object",
        "properties": {"goal": {"type": "string"}},
        "required": ["goal"],
        "additionalProperties": False,
    },
}


def hosted_search_request() -> dict[str, Any]:
    return responses_req(
        tools=[copy.deepcopy(CRM_NAMESPACE), {"type": "tool_search"}],
        input=[
            {"role": "user", "content": "List open orders for CUST-12345"},
            {
                "type": "tool_search_call",
                "execution": "server",
                "call_id": None,
                "status": "completed",
                "arguments": {"paths": ["crm"]},
            },
            {
                "type": "tool_search_output",
                "execution": "server",
                "call_id": None,
                "status": "completed",
                "tools": [copy.deepcopy(CRM_NAMESPACE)],
            },
            {
                "type": "function_call",
                "name": "list_open_orders",
                "namespace": "crm",
                "call_id": "call_abc123",
                "arguments": '{"customer_id":"CUST-12345"}',
            },
            {"type": "function_call_output", "call_id": "call_abc123", "output": "[]"},
        ],
    )


def client_search_request() -> dict[str, Any]:
    return responses_req(
        tools=[copy.deepcopy(CLIENT_SEARCH_TOOL)],
        input=[
            {"role": "user", "content": "When does order_42 arrive?"},
            {
                "type": "tool_search_call",
                "execution": "client",
                "call_id": "call_abc123",
                "status": "completed",
                "arguments": {"goal": "Find the shipping ETA tool for order_42."},
            },
            {
                "type": "tool_search_output",
                "execution": "client",
                "call_id": "call_abc123",
                "status": "completed",
                "tools": [copy.deepcopy(SHIPPING_ETA)],
            },
            {
                "type": "function_call",
                "name": "get_shipping_eta",
                "namespace": "get_shipping_eta",
                "call_id": "call_xyz456",
                "arguments": '{"order_id":"order_42"}',
            },
            {"type": "function_call_output", "call_id": "call_xyz456", "output": "Dec 5"},
        ],
    )


def test_responses_namespace_fixture_passes() -> None:
    payload = responses_req(tools=[CRM_NAMESPACE, {"type": "tool_search"}])
    assert_valid(payload, "openai-responses")


def test_responses_hosted_search_output_fixture_passes() -> None:
    assert_valid(hosted_search_request(), "openai-responses")


def test_responses_client_search_fixture_passes() -> None:
    assert_valid(client_search_request(), "openai-responses")


def test_responses_top_level_function_in_search_output_needs_strict_key() -> None:
    payload = client_search_request()
    del payload["input"][2]["tools"][0]["strict"]  # the doc fixture as printed
    err = fails(payload, "openai-responses")
    assert (err.path, err.reason) == ("input.2.tools.0", "missing: field 'strict' required")


def test_responses_additional_tools_fixture_needs_strict_key() -> None:
    item: dict[str, Any] = {
        "type": "additional_tools",
        "role": "developer",
        "tools": [
            {
                "type": "function",
                "name": "get_customer",
                "description": "Look up a customer by ID.",
                "parameters": {
                    "type": "object",
                    "properties": {"customer_id": {"type": "string"}},
                    "required": ["customer_id"],
                    "additionalProperties": False,
                },
            }
        ],
    }
    payload = responses_req(input=[{"role": "user", "content": "Hi"}, item])
    err = fails(payload, "openai-responses")  # the doc fixture as printed
    assert (err.path, err.reason) == ("input.1.tools.0", "missing: field 'strict' required")
    item["tools"][0]["strict"] = None
    assert_valid(payload, "openai-responses")
    item["role"] = "user"
    err = fails(payload, "openai-responses")
    assert err.path == "input.1"
    assert err.reason == "literal_error: role 'user' not allowed (expected 'developer')"


def test_responses_explicit_cache_mode_fixture_passes() -> None:
    payload = {
        "model": "gpt-6.1-sol",
        "reasoning": {"effort": "low", "context": "all_turns"},
        "text": {"verbosity": "medium"},
        "prompt_cache_options": {"mode": "explicit"},
        "input": [
            {
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": "Stable instructions and shared reference material...",
                        "prompt_cache_breakpoint": {"mode": "explicit"},
                    }
                ],
            },
            {"role": "developer", "content": "Dynamic developer instructions..."},
            {"role": "user", "content": "The user's current question..."},
        ],
    }
    assert_valid(payload, "openai-responses")


# --------------------------------------------------------------------------- responses rules


def test_responses_defer_loading_on_namespace_caught_by_types() -> None:
    payload = responses_req(tools=[{**CRM_NAMESPACE, "defer_loading": True}])
    err = fails(payload, "openai-responses")
    assert (err.path, err.reason) == ("tools.0", "extra_forbidden: unexpected key 'defer_loading'")


def test_responses_bad_key_in_input_content_part() -> None:
    payload = responses_req(
        input=[{"role": "user", "content": [{"type": "input_text", "text": "x", "bad": 1}]}]
    )
    err = fails(payload, "openai-responses")
    assert (err.path, err.reason) == ("input.0.content.0", "extra_forbidden: unexpected key 'bad'")


def test_responses_function_call_output_without_call() -> None:
    payload = hosted_search_request()
    payload["input"][4]["call_id"] = "call_nope"
    err = fails(payload, "openai-responses")
    assert err.path == "input.4"
    assert "'call_nope'" in err.reason and "function_call" in err.reason
    # An output before its call is also unpaired.
    payload = hosted_search_request()
    payload["input"][3], payload["input"][4] = payload["input"][4], payload["input"][3]
    assert fails(payload, "openai-responses").path == "input.3"


def test_responses_server_side_history_skips_call_pairing() -> None:
    payload = responses_req(
        previous_response_id="resp_123",
        input=[{"type": "function_call_output", "call_id": "call_prev", "output": "ok"}],
    )
    assert_valid(payload, "openai-responses")


def test_responses_client_search_output_without_call() -> None:
    payload = client_search_request()
    payload["input"][2]["call_id"] = "call_other"
    err = fails(payload, "openai-responses")
    assert err.path == "input.2"
    assert "tool_search_output" in err.reason and "'call_other'" in err.reason


def test_responses_duplicate_top_level_names_and_namespace_clash() -> None:
    fn = {"type": "function", "name": "crm", "parameters": None, "strict": None}
    err = fails(responses_req(tools=[CRM_NAMESPACE, fn]), "openai-responses")
    assert err.path == "tools.1" and "duplicate tool name 'crm'" in err.reason
    other = {**fn, "name": "lookup"}
    err = fails(responses_req(tools=[other, other]), "openai-responses")
    assert err.path == "tools.1"


def test_responses_duplicate_names_inside_namespace() -> None:
    ns = copy.deepcopy(CRM_NAMESPACE)
    ns["tools"].append(copy.deepcopy(ns["tools"][0]))
    err = fails(responses_req(tools=[ns]), "openai-responses")
    assert err.path == "tools.0.tools.1"
    assert "'list_open_orders'" in err.reason and "namespace 'crm'" in err.reason


# --------------------------------------------------------------------------- chat / kimi


def test_chat_rejects_defer_loading_in_function() -> None:
    tool = chat_tool("f")
    tool["function"]["defer_loading"] = True
    err = fails(chat_req(tools=[tool]), "openai-chat")
    assert (err.path, err.reason) == (
        "tools.0.function",
        "extra_forbidden: unexpected key 'defer_loading'",
    )


def test_chat_tool_message_pairing() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]
    assert_valid(chat_req(messages=messages, tools=[chat_tool("f")]), "openai-chat")
    messages.append({"role": "tool", "tool_call_id": "call_2", "content": "ok"})
    err = fails(chat_req(messages=messages), "openai-chat")
    assert err.path == "messages.3" and "'call_2'" in err.reason


def test_chat_duplicate_function_names() -> None:
    err = fails(chat_req(tools=[chat_tool("f"), chat_tool("g"), chat_tool("f")]), "openai-chat")
    assert err.path == "tools.2" and "duplicate function name 'f'" in err.reason


def test_chat_unknown_role() -> None:
    err = fails(chat_req(messages=[{"role": "bot", "content": "x"}]), "openai-chat")
    assert err.path == "messages.0" and "role 'bot'" in err.reason


def kimi_req() -> dict[str, Any]:
    return chat_req(
        tools=[chat_tool("search_tools")],
        messages=[
            {"role": "user", "content": "Hi"},
            {"role": "system", "tools": [chat_tool("get_weather"), chat_tool("add")]},
            {"role": "user", "content": "Weather?"},
        ],
    )


def test_kimi_system_tools_message_passes() -> None:
    assert_valid(kimi_req(), "kimi")


def test_kimi_carrier_is_not_plain_openai_chat() -> None:
    err = fails(kimi_req(), "openai-chat")
    assert err.path == "messages.1"


def test_kimi_bad_key_inside_carrier_tool() -> None:
    payload = kimi_req()
    payload["messages"][1]["tools"][1]["function"]["defer_loadng"] = True
    err = fails(payload, "kimi")
    assert (err.path, err.reason) == (
        "messages.1.tools.1.function",
        "extra_forbidden: unexpected key 'defer_loadng'",
    )


def test_kimi_extra_key_on_carrier_message() -> None:
    payload = kimi_req()
    payload["messages"][1]["name"] = "x"
    err = fails(payload, "kimi")
    assert (err.path, err.reason) == ("messages.1", "extra_forbidden: unexpected key 'name'")


def test_kimi_error_after_carrier_keeps_original_index() -> None:
    payload = kimi_req()
    payload["messages"][2]["oops"] = 1
    err = fails(payload, "kimi")
    assert (err.path, err.reason) == ("messages.2", "extra_forbidden: unexpected key 'oops'")


def test_kimi_duplicates_inside_one_carrier() -> None:
    payload = kimi_req()
    payload["messages"][1]["tools"].append(chat_tool("add"))
    err = fails(payload, "kimi")
    assert err.path == "messages.1.tools.2" and "duplicate function name 'add'" in err.reason


# --------------------------------------------------------------------------- misc


def test_unknown_provider_raises_value_error() -> None:
    with pytest.raises(ValueError, match=r"anthropic.*openai-responses.*openai-chat.*kimi"):
        validate_payload(chat_req(), "gemini")
    with pytest.raises(ValueError) as info:
        validate_payload(chat_req(), "gemini")
    assert not isinstance(info.value, WireValidationError)


def test_error_is_a_value_error_with_attributes() -> None:
    err = fails(chat_req(tools=[chat_tool("f"), chat_tool("f")]), "openai-chat")
    assert isinstance(err, ValueError)
    assert str(err) == f"openai-chat request invalid at {err.path}: {err.reason}"
    assert "\n" not in err.reason
