"""Shared fixtures of the wire tests: the providers' documented JSON and small helpers.

The JSON here is copied from the providers' documented examples:
https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool,
https://docs.claude.com/en/docs/build-with-claude/prompt-caching,
https://platform.openai.com/docs/guides/tools-tool-search and
https://platform.openai.com/docs/guides/prompt-caching.
This module holds no tests of its own.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.wire import WireRequest, build_request

JSON = dict[str, Any]

ANTHROPIC_MODEL = "claude-opus-4-8"  # tool_reference, native search, mid-conversation system
RESPONSES_MODEL = "gpt-5.4"  # additional_tools and tool_search items
CHAT_MODEL = "gpt-5.4"
KIMI_MODEL = "kimi-k2"

# Every provider at its default mode, as (provider, model, options).
ALL_PROVIDERS: list[tuple[str, str, dict[str, Any]]] = [
    ("anthropic", ANTHROPIC_MODEL, {}),
    ("openai-responses", RESPONSES_MODEL, {}),
    ("openai-chat", CHAT_MODEL, {}),
    ("kimi", KIMI_MODEL, {}),
]

# -- documented tool definitions ---------------------------------------------------------

# Anthropic tool search page: the deferred tool of the tool search page.
GET_WEATHER_DOC: JSON = {
    "name": "get_weather",
    "description": "Get current weather for a location",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
    "defer_loading": True,
}

# Anthropic prompt caching: the tool breakpoint fixture.
BREAKPOINT_TOOLS_DOC: list[JSON] = [
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


def _strict_object(**props: Any) -> JSON:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


# OpenAI tool search guide: the namespace fixture's deferred function.
CRM_DESCRIPTION = "CRM tools for customer lookup and order management."
LIST_OPEN_ORDERS_DOC: JSON = {
    "type": "function",
    "name": "list_open_orders",
    "description": "List open orders for a customer ID.",
    "defer_loading": True,
    "parameters": _strict_object(customer_id={"type": "string"}),
}
# OpenAI tool search guide: the client-executed tool_search_output's tool.
GET_SHIPPING_ETA_DOC: JSON = {
    "type": "function",
    "name": "get_shipping_eta",
    "description": "Look up shipping ETA details for an order.",
    "defer_loading": True,
    "parameters": _strict_object(order_id={"type": "string"}),
}
# OpenAI tool search guide: the additional_tools item.
ADDITIONAL_TOOLS_DOC: JSON = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [
        {
            "type": "function",
            "name": "get_customer",
            "description": "Look up a customer by ID.",
            "parameters": _strict_object(customer_id={"type": "string"}),
        }
    ],
}
HOSTED_TOOLS_DOC: list[JSON] = [
    {
        "type": "namespace",
        "name": "crm",
        "description": CRM_DESCRIPTION,
        "tools": [LIST_OPEN_ORDERS_DOC],
    },
    {"type": "tool_search"},
]


def doc_tools() -> list[Tool]:
    """Tools whose definitions serialize to the documented JSON above."""
    return [
        Tool(
            "get_weather",
            description=GET_WEATHER_DOC["description"],
            parameters=copy.deepcopy(GET_WEATHER_DOC["input_schema"]),
            execute=lambda location, unit="celsius": f"18 degrees {unit} in {location}",
        ),
        Tool(
            "get_time",
            description="Get the current time in a given time zone",
            parameters={
                "type": "object",
                "properties": {"timezone": {"type": "string"}},
                "required": ["timezone"],
            },
            execute=lambda timezone: f"12:00 in {timezone}",
        ),
        Tool(
            "get_customer",
            description="Look up a customer by ID.",
            parameters=_strict_object(customer_id={"type": "string"}),
            execute=lambda customer_id: {"id": customer_id, "name": "Ada"},
        ),
        Tool(
            "get_shipping_eta",
            description=GET_SHIPPING_ETA_DOC["description"],
            parameters=copy.deepcopy(GET_SHIPPING_ETA_DOC["parameters"]),
            execute=lambda order_id: f"{order_id} arrives tomorrow",
        ),
        Tool(
            "list_open_orders",
            description=LIST_OPEN_ORDERS_DOC["description"],
            parameters=copy.deepcopy(LIST_OPEN_ORDERS_DOC["parameters"]),
            namespace="crm",
            execute=lambda customer_id: [{"id": "order_42"}],
        ),
        Tool(
            "read_file",
            description="Read a text file from the workspace",
            parameters={
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
            execute=lambda path: f"contents of {path}",
        ),
    ]


# -- documented responses ----------------------------------------------------------------

# Anthropic prompt caching: Anthropic usage fixture (prompt-caching page).
ANTHROPIC_USAGE_DOC: JSON = {
    "input_tokens": 2048,
    "cache_read_input_tokens": 1800,
    "cache_creation_input_tokens": 248,
    "output_tokens": 503,
    "cache_creation": {"ephemeral_5m_input_tokens": 148, "ephemeral_1h_input_tokens": 100},
}
# OpenAI prompt caching: Responses usage fixture (prompt-caching guide, request 2).
RESPONSES_USAGE_DOC: JSON = {
    "input_tokens": 15000,
    "input_tokens_details": {"cached_tokens": 12000, "cache_write_tokens": 3000},
}

# Anthropic tool search page: the server-side search response (content as documented).
ANTHROPIC_SEARCH_CONTENT_DOC: list[JSON] = [
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


def anthropic_search_response() -> JSON:
    """The §1.5 response as a complete Messages body (what the SDK's Message needs)."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC_MODEL,
        "content": copy.deepcopy(ANTHROPIC_SEARCH_CONTENT_DOC),
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": copy.deepcopy(ANTHROPIC_USAGE_DOC),
    }


# OpenAI tool search guide: the hosted search output.
HOSTED_OUTPUT_DOC: list[JSON] = [
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
        "tools": [
            {
                "type": "namespace",
                "name": "crm",
                "description": CRM_DESCRIPTION,
                "tools": [LIST_OPEN_ORDERS_DOC],
            }
        ],
    },
    {
        "type": "function_call",
        "name": "list_open_orders",
        "namespace": "crm",
        "call_id": "call_abc123",
        "arguments": '{"customer_id":"CUST-12345"}',
    },
]
# OpenAI tool search guide: the model's client-executed search call (our tool_search's parameters).
CLIENT_SEARCH_CALL: JSON = {
    "type": "tool_search_call",
    "execution": "client",
    "call_id": "call_abc123",
    "status": "completed",
    "arguments": {"query": "shipping ETA order"},
}


def responses_body(output: list[JSON], usage: JSON | None = None) -> JSON:
    """A Responses body around output items (ids added, as the SDK's Response needs)."""
    items = copy.deepcopy(output)
    for i, item in enumerate(items):
        item.setdefault("id", f"item_{i}")
    body: JSON = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": RESPONSES_MODEL,
        "status": "completed",
        "output": items,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if usage is not None:
        body["usage"] = copy.deepcopy(usage)
    return body


def chat_body(message: JSON, usage: JSON | None = None) -> JSON:
    body: JSON = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": CHAT_MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


# -- helpers ---------------------------------------------------------------------------


def strip_cache_control(value: Any) -> Any:
    """A deep copy without any `cache_control` key (breakpoints move between requests)."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def canon(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def breakpoints(payload: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """JSON paths of every `cache_control` in a payload (the top-level one is `()`)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(payload, dict):
        for key, value in payload.items():
            if key == "cache_control":
                found.append(path)
            else:
                found.extend(breakpoints(value, (*path, key)))
    elif isinstance(payload, list):
        for i, value in enumerate(payload):
            found.extend(breakpoints(value, (*path, i)))
    return found


def tool_names(payload: JSON) -> list[str]:
    """Top-level tool names, whatever the provider's tool shape."""
    names = []
    for tool in payload.get("tools", []):
        names.append(tool.get("name") or tool.get("function", {}).get("name") or tool["type"])
    return names


def blocks_of_type(payload: JSON, kind: str) -> list[JSON]:
    """Every dict anywhere in the payload whose `type` is `kind`."""
    found: list[JSON] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == kind:
                found.append(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(payload)
    return found


def searched_session(search: str = "bm25") -> Session:
    """A session whose first turn ran the real tool_search and loaded get_weather."""
    s = Session(
        system="You are a helpful agent.",
        tools=doc_tools(),
        active=["tool_search", "read_file"],
        search=search,
    )
    s.user("What's the weather in Paris?")
    call = ToolCall(id="toolu_search1", name="tool_search", arguments={"query": "weather"})
    s.assistant(tool_calls=[call])
    result = s.execute(call)
    assert result.added_tool_names == ["get_weather"], result
    return s


def build_all(session: Session) -> dict[str, WireRequest]:
    """The session for every provider at its default mode (each one strictly validated)."""
    return {p: build_request(session, p, m, **kw) for p, m, kw in ALL_PROVIDERS}
