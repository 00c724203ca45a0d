"""Golden tests: requests and parsed responses against the providers' documented JSON.

Sources: the providers' own pages: Anthropic's tool search and prompt-caching pages
(docs.claude.com), OpenAI's tool search and prompt-caching guides (platform.openai.com).
Every request is built with strict validation on.
"""

from __future__ import annotations

import copy

import anthropic.types
import openai.types.chat
import openai.types.responses
import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import NativeBlock
from dtl_notebook.wire import build_request, parse_response, validate_payload
from tests.support.wire_requests import (
    ADDITIONAL_TOOLS_DOC,
    ANTHROPIC_MODEL,
    ANTHROPIC_SEARCH_CONTENT_DOC,
    ANTHROPIC_USAGE_DOC,
    BREAKPOINT_TOOLS_DOC,
    CLIENT_SEARCH_CALL,
    CRM_DESCRIPTION,
    GET_SHIPPING_ETA_DOC,
    GET_WEATHER_DOC,
    HOSTED_OUTPUT_DOC,
    HOSTED_TOOLS_DOC,
    RESPONSES_MODEL,
    RESPONSES_USAGE_DOC,
    anthropic_search_response,
    chat_body,
    doc_tools,
    responses_body,
)

# -- Anthropic requests ------------------------------------------------------------------


def test_custom_search_result_is_exactly_the_documented_tool_result() -> None:
    """§1.5: a client search result holds only the tool_reference, nothing else."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("weather?")
    s.assistant(
        tool_calls=[ToolCall(id="toolu_your_tool_id", name="tool_search", arguments={"query": "w"})]
    )
    s.tool_result("toolu_your_tool_id", "", added_tool_names=["get_weather"])
    req = build_request(s, "anthropic", ANTHROPIC_MODEL)

    assert req.mode == "tool_reference"
    last = req.payload["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_your_tool_id",
            "content": [{"type": "tool_reference", "tool_name": "get_weather"}],
        }
    ]  # empty output: no empty sibling text block
    assert [(lp.tools, lp.path) for lp in req.load_points] == [
        (["get_weather"], "messages.2.content.0.content")
    ]


def test_deferred_tool_is_the_documented_definition_without_cache_control() -> None:
    """§1.5: the deferred tool is its plain definition plus `defer_loading: true`."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("weather?")
    s.assistant(tool_calls=[ToolCall(id="t1", name="tool_search", arguments={"query": "weather"})])
    s.execute(s.pending_calls()[0])
    tools = build_request(s, "anthropic", ANTHROPIC_MODEL).payload["tools"]

    assert tools[-1] == GET_WEATHER_DOC
    assert "cache_control" not in tools[-1]
    # the breakpoint sits on the last immediate tool, and only there among the tools
    assert [t["name"] for t in tools if "cache_control" in t] == ["read_file"]
    assert tools[1]["cache_control"] == {"type": "ephemeral"}
    assert not any(t.get("defer_loading") for t in tools[:2])


def test_tool_breakpoint_fixture_shape() -> None:
    """§2: two immediate tools, the breakpoint on the last one (exactly the documented JSON)."""
    tools = doc_tools()
    tools[0] = tools[0].model_copy(
        update={
            "description": "Get the current weather in a given location",
            "parameters": BREAKPOINT_TOOLS_DOC[0]["input_schema"],
        }
    )
    # only these two registered: nothing else can be loaded later, so no deferred placeholder
    shown = [t for t in tools if t.name in ("get_weather", "get_time")]
    s = Session(tools=shown, active=["get_weather", "get_time"], search=None)
    s.user("What time is it in Paris, and how is the weather?")
    req = build_request(s, "anthropic", ANTHROPIC_MODEL)
    assert req.payload["tools"] == BREAKPOINT_TOOLS_DOC
    assert req.payload["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What time is it in Paris, and how is the weather?"}
            ],
        }
    ]


@pytest.mark.parametrize(
    ("search", "server_tool"),
    [
        (
            "native-bm25",
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
        ),
        (
            "native-regex",
            {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
        ),
    ],
)
def test_native_server_search_tools(search: str, server_tool: dict[str, str]) -> None:
    """§1.5: the server search tool, exactly; every other candidate deferred, never cached."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("weather in SF?")
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, search=search)
    tools = req.payload["tools"]

    assert req.mode == "native_search"
    assert tools[0] == server_tool
    assert [t["name"] for t in tools[1:]] == [
        "read_file",
        "get_weather",
        "get_time",
        "get_customer",
        "get_shipping_eta",
        "list_open_orders",
    ]
    assert "defer_loading" not in tools[1] and tools[1]["cache_control"] == {"type": "ephemeral"}
    for tool in tools[2:]:
        assert tool["defer_loading"] is True and "cache_control" not in tool
    assert tools[2] == GET_WEATHER_DOC
    # the session's own tool_search is not offered next to the server tool
    assert "tool_search" not in [t["name"] for t in tools]


# -- Responses requests ------------------------------------------------------------------


def _customer_session() -> Session:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("Who is customer C1?")
    s.assistant(tool_calls=[ToolCall(id="call_1", name="tool_search", arguments={"query": "x"})])
    s.tool_result("call_1", "found get_customer", added_tool_names=["get_customer"])
    return s


def test_additional_tools_item_is_the_documented_item_with_strict() -> None:
    """§3.3: `{"type":"additional_tools","role":"developer","tools":[...]}` right after the
    marked function_call_output; a function there carries `strict` (SDK type, §5)."""
    req = build_request(_customer_session(), "openai-responses", RESPONSES_MODEL)
    expected = copy.deepcopy(ADDITIONAL_TOOLS_DOC)
    expected["tools"][0]["strict"] = False

    assert req.mode == "additional_tools"
    items = req.payload["input"]
    assert items[-2] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "found get_customer",
    }
    assert items[-1] == expected
    assert [(lp.tools, lp.path) for lp in req.load_points] == [
        (["get_customer"], f"input.{len(items) - 1}")
    ]
    assert [t["name"] for t in req.payload["tools"]] == ["tool_search", "read_file"]


def test_client_tool_search_pair_is_the_documented_shape() -> None:
    """§3.3: a completed client tool_search_call + tool_search_output with one call_id,
    the output's tools deferred."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("ETA of order_42?")
    s.assistant(tool_calls=[ToolCall(id="call_1", name="tool_search", arguments={"query": "x"})])
    s.tool_result("call_1", "found it", added_tool_names=["get_shipping_eta"])
    req = build_request(s, "openai-responses", RESPONSES_MODEL, load_mode="tool_search")

    assert req.mode == "tool_search"
    call, output = req.payload["input"][-2:]
    call_id = call["call_id"]
    assert call_id.startswith("dtl_tool_load_")
    assert call == {
        "type": "tool_search_call",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "arguments": {"query": "get_shipping_eta", "limit": 1},
    }
    expected_tool = {**GET_SHIPPING_ETA_DOC, "strict": False}
    assert output == {
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": [expected_tool],
    }
    assert req.payload["input"][-3]["type"] == "function_call_output"


def test_hosted_search_is_the_documented_namespace_and_tool_search() -> None:
    """§3.3: namespaces from Tool.namespace, deferred members, then `{"type":"tool_search"}`."""
    s = Session(tools=doc_tools(), active=["tool_search"])
    for name in ["get_weather", "get_time", "get_customer", "get_shipping_eta", "read_file"]:
        s.registry.unregister(name)
    s.user("Open orders of CUST-12345?")
    req = build_request(
        s, "openai-responses", RESPONSES_MODEL, search="hosted", namespaces={"crm": CRM_DESCRIPTION}
    )
    expected = copy.deepcopy(HOSTED_TOOLS_DOC)
    expected[0]["tools"][0]["strict"] = False

    assert req.mode == "native_hosted"
    assert req.payload["tools"] == expected


def test_client_executed_tool_search_definition() -> None:
    """§3.3: `{"type":"tool_search","execution":"client","description":...,"parameters":...}`
    carrying the session's tool_search description and schema."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("ETA of order_42?")
    req = build_request(s, "openai-responses", RESPONSES_MODEL, search="native-client")
    local = s.registry["tool_search"]

    assert req.mode == "native_client"
    assert req.payload["tools"][-1] == {
        "type": "tool_search",
        "execution": "client",
        "description": local.description,
        "parameters": local.parameters,
    }
    assert [t.get("name") for t in req.payload["tools"][:-1]] == ["read_file"]


# -- parsing the documented responses ----------------------------------------------------


@pytest.mark.parametrize("as_sdk", [False, True], ids=["dict", "sdk"])
def test_parse_anthropic_server_search_response(as_sdk: bool) -> None:
    """§1.5: server_tool_use and tool_search_tool_result stay native, verbatim; tool_use is
    a neutral call; the usage fixture comes back as reported."""
    body = anthropic_search_response()
    response = anthropic.types.Message.model_validate(body) if as_sdk else body
    reply = parse_response(response, provider="anthropic", model=ANTHROPIC_MODEL)

    message = reply.message
    assert [b.data for b in message.native_blocks] == ANTHROPIC_SEARCH_CONTENT_DOC[1:3]
    assert all(b.provider == "anthropic" for b in message.native_blocks)
    assert message.tool_calls == [
        ToolCall(
            id="toolu_01XYZ789",
            name="get_weather",
            arguments={"location": "San Francisco", "unit": "fahrenheit"},
        )
    ]
    assert message.text == (
        "I'll search for tools to help with the weather information."
        "I found a weather tool. Let me get the weather for San Francisco."
    )
    kinds = [p.type for p in message.content]
    assert kinds == ["text", "native", "native", "text", "tool_call"]  # model order kept
    assert reply.loaded_tool_names == ["get_weather"]
    assert reply.usage == ANTHROPIC_USAGE_DOC
    assert reply.stop_reason == "tool_use"
    assert message.provider == "anthropic" and message.model == ANTHROPIC_MODEL


@pytest.mark.parametrize("as_sdk", [False, True], ids=["dict", "sdk"])
def test_parse_hosted_responses_output(as_sdk: bool) -> None:
    """§3.3: hosted tool_search items stay native; the namespaced function_call is neutral."""
    body = responses_body(HOSTED_OUTPUT_DOC, usage=None)
    if as_sdk:
        response = openai.types.responses.Response.model_validate(body)
        expected_native = [
            item.model_dump(mode="json", exclude_none=True, warnings=False)
            for item in response.output[:2]
        ]
    else:
        response = body
        expected_native = body["output"][:2]
    reply = parse_response(response, provider="openai-responses")

    natives = reply.message.native_blocks
    assert [b.data for b in natives] == expected_native
    assert [b.type for b in natives] == ["tool_search_call", "tool_search_output"]
    assert reply.message.tool_calls == [
        ToolCall(
            id="call_abc123",
            name="list_open_orders",
            arguments={"customer_id": "CUST-12345"},
            namespace="crm",
        )
    ]
    assert reply.loaded_tool_names == ["list_open_orders"]


def test_parse_hosted_output_verbatim_as_dict() -> None:
    """Plain-dict items are kept byte for byte, `call_id: null` included."""
    reply = parse_response(responses_body(HOSTED_OUTPUT_DOC), provider="openai-responses")
    assert [b.data for b in reply.message.native_blocks] == [
        {**item, "id": f"item_{i}"} for i, item in enumerate(HOSTED_OUTPUT_DOC[:2])
    ]


def test_namespace_equal_to_the_function_name_round_trips() -> None:
    """A real `function_call` may carry a `namespace` equal to its name (a plain tool). The
    API's error for a missing namespace asks clients to send the item back as it came, so the
    call keeps it and the next request replays it."""
    item = {
        "type": "function_call",
        "name": "get_shipping_eta",
        "namespace": "get_shipping_eta",
        "call_id": "call_xyz456",
        "arguments": '{"order_id":"order_42"}',
    }
    reply = parse_response(responses_body([item]), provider="openai-responses")
    assert reply.message.tool_calls == [
        ToolCall(
            id="call_xyz456",
            name="get_shipping_eta",
            arguments={"order_id": "order_42"},
            namespace="get_shipping_eta",
        )
    ]
    session = Session(tools=[Tool("get_shipping_eta", execute=lambda **_: "ok")], search=None)
    session.user("ETA of order_42?")
    session.append(reply.message)
    session.execute(reply.message.tool_calls[0])
    payload = build_request(session, "openai-responses", "gpt-5.4").payload
    replayed = [i for i in payload["input"] if i.get("type") == "function_call"]
    assert replayed[0]["namespace"] == "get_shipping_eta"
    assert replayed[0]["name"] == "get_shipping_eta"


@pytest.mark.parametrize("as_sdk", [False, True], ids=["dict", "sdk"])
def test_parse_client_tool_search_call_is_a_neutral_tool_search_call(as_sdk: bool) -> None:
    body = responses_body([CLIENT_SEARCH_CALL])
    response = openai.types.responses.Response.model_validate(body) if as_sdk else body
    reply = parse_response(response, provider="openai-responses")
    assert reply.message.tool_calls == [
        ToolCall(id="call_abc123", name="tool_search", arguments={"query": "shipping ETA order"})
    ]
    assert reply.message.native_blocks == []


def test_responses_usage_fixture_comes_back_verbatim() -> None:
    """§4: the usage object as the provider named it."""
    reply = parse_response(
        responses_body([], usage=RESPONSES_USAGE_DOC), provider="openai-responses"
    )
    assert reply.usage == RESPONSES_USAGE_DOC
    assert reply.stop_reason == "completed"


def test_responses_sdk_usage_keeps_cache_fields() -> None:
    usage = {
        **RESPONSES_USAGE_DOC,
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15010,
    }
    sdk = openai.types.responses.Response.model_validate(
        responses_body(
            [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
                }
            ],
            usage=usage,
        )
    )
    reply = parse_response(sdk, provider="openai-responses")
    assert reply.message.text == "Hi"
    assert reply.usage == usage


@pytest.mark.parametrize("as_sdk", [False, True], ids=["dict", "sdk"])
def test_parse_chat_completion(as_sdk: bool) -> None:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 20,
        "total_tokens": 1220,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    body = chat_body(
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                }
            ],
        },
        usage=usage,
    )
    response = openai.types.chat.ChatCompletion.model_validate(body) if as_sdk else body
    reply = parse_response(response, provider="openai-chat")
    assert reply.message.text == "Checking."
    assert reply.message.tool_calls == [
        ToolCall(id="call_1", name="get_weather", arguments={"location": "Paris"})
    ]
    assert reply.usage == usage
    assert reply.stop_reason == "tool_calls"
    assert reply.message.provider == "openai-chat"


def test_documented_native_transcript_replays_verbatim_and_validates() -> None:
    """The §1.5 response appended to a session replays unchanged on Anthropic (native search)
    and the whole request passes strict validation."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("What's the weather in San Francisco?")
    reply = parse_response(anthropic_search_response(), provider="anthropic")
    s.append(reply.message)
    s.activate(reply.loaded_tool_names)
    s.execute(s.pending_calls()[0])
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-regex")

    assert req.payload["messages"][1] == {
        "role": "assistant",
        "content": ANTHROPIC_SEARCH_CONTENT_DOC,
    }
    result = req.payload["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_01XYZ789"
    assert "is_error" not in result
    validate_payload(req.payload, "anthropic")


def test_native_block_keeps_its_provider() -> None:
    block = NativeBlock(provider="anthropic", data=ANTHROPIC_SEARCH_CONTENT_DOC[1])
    assert block.type == "server_tool_use"
