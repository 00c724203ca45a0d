"""Every mode of every provider, the fallbacks, system prompt patches, caching, profiles."""

from __future__ import annotations

import json

import pytest

from dtl_notebook import Session, ToolCall
from dtl_notebook.agent import NativeBlock
from dtl_notebook.wire import build_request, parse_response, profile_for
from dtl_notebook.wire.anthropic import MAX_NEW_BLOCKS
from tests.support.wire_requests import (
    ANTHROPIC_MODEL,
    CHAT_MODEL,
    CLIENT_SEARCH_CALL,
    CRM_DESCRIPTION,
    HOSTED_OUTPUT_DOC,
    KIMI_MODEL,
    RESPONSES_MODEL,
    anthropic_search_response,
    blocks_of_type,
    breakpoints,
    doc_tools,
    responses_body,
    searched_session,
    tool_names,
)


def _parallel_session() -> Session:
    """One assistant message with three calls: a search that loads get_weather (empty
    output), an ordinary read, and a failing search that loads get_time."""
    s = Session(system="Be brief.", tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("Weather and time in Paris?")
    s.assistant(
        tool_calls=[
            ToolCall(id="c1", name="tool_search", arguments={"query": "weather"}),
            ToolCall(id="c2", name="read_file", arguments={"path": "notes.txt"}),
            ToolCall(id="c3", name="tool_search", arguments={"query": "time"}),
        ]
    )
    s.tool_result("c1", "", added_tool_names=["get_weather"])
    s.execute(s.pending_calls()[0])
    s.tool_result("c3", "index unavailable", added_tool_names=["get_time"], is_error=True)
    return s


# -- Anthropic: client search with tool_reference -----------------------------------------


def test_siblings_follow_all_tool_results_of_a_parallel_group() -> None:
    req = build_request(_parallel_session(), "anthropic", ANTHROPIC_MODEL)
    assert req.mode == "tool_reference"
    last = req.payload["messages"][-1]
    assert last["role"] == "user"
    assert [b["type"] for b in last["content"]] == [
        "tool_result",
        "tool_result",
        "tool_result",
        "text",
    ]
    first, ordinary, failed, sibling = last["content"]
    # empty output: references alone and no empty sibling for c1
    assert first == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": [{"type": "tool_reference", "tool_name": "get_weather"}],
    }
    assert ordinary == {
        "type": "tool_result",
        "tool_use_id": "c2",
        "content": [{"type": "text", "text": "contents of notes.txt"}],
    }
    # documented choice (anthropic.py docstring): the references win, `is_error` is dropped
    # and the error text follows as a sibling block prefixed with "Error:"
    assert failed == {
        "type": "tool_result",
        "tool_use_id": "c3",
        "content": [{"type": "tool_reference", "tool_name": "get_time"}],
    }
    assert sibling == {"type": "text", "text": "Error: index unavailable"}
    assert any("error result 'c3' carries tool references" in n for n in req.notes)
    assert [(lp.message_index, lp.tools, lp.path) for lp in req.load_points] == [
        (3, ["get_weather"], "messages.2.content.0.content"),
        (5, ["get_time"], "messages.2.content.2.content"),
    ]
    tools = req.payload["tools"]
    assert [(t["name"], t.get("defer_loading", False)) for t in tools] == [
        ("tool_search", False),
        ("read_file", False),
        ("deferred_tool_placeholder", True),
        ("get_weather", True),
        ("get_time", True),
    ]


def test_sibling_content_of_a_search_result_moves_after_the_reference() -> None:
    req = build_request(searched_session(), "anthropic", ANTHROPIC_MODEL)
    result, sibling = req.payload["messages"][-1]["content"]
    assert result["content"] == [{"type": "tool_reference", "tool_name": "get_weather"}]
    assert sibling["type"] == "text" and "get_weather" in sibling["text"]


def test_error_result_without_references_keeps_is_error_and_text_only() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("x")
    s.assistant(tool_calls=[ToolCall(id="c1", name="read_file", arguments={})])
    result = s.execute(s.pending_calls()[0])  # missing required argument
    assert result.is_error
    block = build_request(s, "anthropic", ANTHROPIC_MODEL).payload["messages"][-1]["content"][0]
    assert block["is_error"] is True
    assert [c["type"] for c in block["content"]] == ["text"]


def test_a_tool_is_referenced_once_per_request() -> None:
    s = searched_session()
    s.assistant(tool_calls=[ToolCall(id="c2", name="tool_search", arguments={"query": "x"})])
    s.tool_result("c2", "again", added_tool_names=["get_weather", "get_time"])
    req = build_request(s, "anthropic", ANTHROPIC_MODEL)
    refs = [b["tool_name"] for b in blocks_of_type(req.payload, "tool_reference")]
    assert refs == ["get_weather", "get_time"]


def test_unsupported_model_gets_the_full_list_with_a_note() -> None:
    req = build_request(searched_session(), "anthropic", "claude-opus-4-1")
    assert req.mode == "full_list"
    assert any("does not support defer_loading/tool_reference" in n for n in req.notes)
    assert tool_names(req.payload) == ["tool_search", "read_file", "get_weather"]
    assert not any(t.get("defer_loading") for t in req.payload["tools"])
    assert blocks_of_type(req.payload, "tool_reference") == []
    assert req.load_points == []
    # the search result is ordinary content again
    result = req.payload["messages"][-1]["content"][0]
    assert result["content"][0]["type"] == "text"


def test_unsupported_model_without_deferred_tools_reports_full_list() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("hi")
    assert build_request(s, "anthropic", "claude-opus-4-1").mode == "full_list"
    assert build_request(s, "anthropic", ANTHROPIC_MODEL).mode == "tool_reference"


def test_all_deferred_falls_back_to_all_immediate_with_a_note() -> None:
    s = searched_session()
    s.set_active_tools(["get_weather"])  # only the loaded tool is left
    # removed tools stay declared by default; a rewrite drops them and leaves only deferred ones
    assert build_request(s, "anthropic", ANTHROPIC_MODEL).mode == "tool_reference"
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, tool_changes="rewrite")
    assert req.mode == "full_list"
    assert any("every active tool is deferred" in n for n in req.notes)
    # the deferred placeholder stays (it keeps the hidden deferred-tool prompt constant)
    assert tool_names(req.payload) == ["get_weather", "deferred_tool_placeholder"]
    assert "defer_loading" not in req.payload["tools"][0]
    assert req.payload["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert blocks_of_type(req.payload, "tool_reference") == []


# -- Anthropic: native server search ------------------------------------------------------


def test_native_search_replays_server_blocks_and_keeps_loaded_tools_deferred() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("What's the weather in San Francisco?")
    before = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-regex")
    reply = parse_response(anthropic_search_response(), provider="anthropic")
    s.append(reply.message)
    s.activate(reply.loaded_tool_names)  # what an agent loop does to run the loaded tool
    s.execute(s.pending_calls()[0])
    after = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-regex")

    assert after.mode == "native_search"
    assert after.payload["tools"] == before.payload["tools"]  # tool prefix untouched
    assistant = after.payload["messages"][1]
    assert assistant["content"][1:3] == anthropic_search_response()["content"][1:3]
    # no tool_result ever answers a server tool id
    results = blocks_of_type(after.payload, "tool_result")
    assert [r["tool_use_id"] for r in results] == ["toolu_01XYZ789"]


def test_native_search_offers_the_session_tool_search_only_once_used() -> None:
    s = searched_session()
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-bm25")
    names = tool_names(req.payload)
    assert req.payload["tools"][0]["type"] == "tool_search_tool_bm25_20251119"
    assert "tool_search" in names  # the transcript calls it, so it stays declared
    assert blocks_of_type(req.payload, "tool_reference")  # its load point still references


def test_native_search_on_an_unsupported_model_is_refused_unless_overridden() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("x")
    with pytest.raises(ValueError, match="does not support Anthropic's tool search"):
        build_request(s, "anthropic", "claude-opus-4-1", search="native-bm25")
    req = build_request(
        s,
        "anthropic",
        "claude-opus-4-1",
        search="native-bm25",
        profile={"native_tool_search": True},
    )
    assert req.mode == "native_search"


def test_bad_anthropic_options_are_refused() -> None:
    s = searched_session()
    with pytest.raises(ValueError, match="search='hosted' does not apply to anthropic"):
        build_request(s, "anthropic", ANTHROPIC_MODEL, search="hosted")
    with pytest.raises(ValueError, match="unknown search 'grep'; choose one of client, "):
        build_request(s, "anthropic", ANTHROPIC_MODEL, search="grep")
    with pytest.raises(ValueError, match="cache must be one of"):
        build_request(s, "anthropic", ANTHROPIC_MODEL, cache="always")


# -- Anthropic: system prompt patches ------------------------------------------------------


def _patched_session() -> Session:
    s = searched_session()
    s.assistant("Loaded the weather tool.")
    s.prompt["rules"] = "Answer in French."
    s.user("Now in Lyon?")
    return s


def test_patch_is_a_system_message_on_a_supporting_model() -> None:
    s = _patched_session()
    before = build_request(searched_session(), "anthropic", ANTHROPIC_MODEL)
    req = build_request(s, "anthropic", ANTHROPIC_MODEL)
    assert req.payload["system"] == before.payload["system"]
    assert req.payload["system"] == [{"type": "text", "text": "You are a helpful agent."}]
    messages = req.payload["messages"]
    # the last breakpoint stays on the user text: one on a trailing system message is never read
    assert messages[-2] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Now in Lyon?", "cache_control": {"type": "ephemeral"}}
        ],
    }
    assert messages[-1] == {
        "role": "system",
        "content": [
            {
                "type": "text",
                "text": "<system_update>\n<rules>\nAnswer in French.\n</rules>\n</system_update>",
            }
        ],
    }
    assert not any("re-rendered" in n for n in req.notes)


def test_patch_rerenders_the_system_prompt_on_a_model_without_support() -> None:
    req = build_request(_patched_session(), "anthropic", "claude-sonnet-4-6")
    assert req.mode == "tool_reference"
    assert req.payload["system"] == [
        {"type": "text", "text": "You are a helpful agent."},
        {"type": "text", "text": "<rules>\nAnswer in French.\n</rules>"},
    ]
    assert all(m["role"] != "system" for m in req.payload["messages"])
    assert any("takes no mid-conversation system messages" in n for n in req.notes)


def _system_placement_ok(messages: list[dict]) -> bool:
    """Anthropic's rule: right after a user turn, and last or before an assistant turn."""
    for i, message in enumerate(messages):
        if message["role"] != "system":
            continue
        if i == 0 or messages[i - 1]["role"] != "user":
            return False
        if i + 1 < len(messages) and messages[i + 1]["role"] not in ("assistant", "system"):
            return False
    return True


def test_patch_after_tool_results_is_placed_after_the_user_text() -> None:
    """A user turn right after tool results: the system message may not sit between the
    tool results and the user text (it must be last or followed by an assistant turn)."""
    s = searched_session()  # ends with tool results
    s.prompt["rules"] = "Answer in French."
    s.user("Also: the time?")
    s.prompt["rules"] = "Answer in German."
    req = build_request(s, "anthropic", ANTHROPIC_MODEL)
    messages = req.payload["messages"]
    assert _system_placement_ok(messages), json.dumps(messages, indent=1)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "system"]
    assert messages[2]["content"][-1] == {
        "type": "text",
        "text": "Also: the time?",
        "cache_control": {"type": "ephemeral"},  # not on the trailing system message
    }
    s.assistant("Sure.")
    s.user("And Berlin?")  # records the second patch
    messages = build_request(s, "anthropic", ANTHROPIC_MODEL).payload["messages"]
    assert _system_placement_ok(messages)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "system",
        "assistant",
        "user",
        "system",
    ]


# -- Anthropic: caching ---------------------------------------------------------------------


def test_automatic_caching_uses_top_level_cache_control() -> None:
    req = build_request(searched_session(), "anthropic", ANTHROPIC_MODEL)
    assert req.payload["cache_control"] == {"type": "ephemeral"}
    assert breakpoints(req.payload) == [(), ("tools", 1)]


def test_explicit_caching_marks_the_last_block_and_ttl_applies_everywhere() -> None:
    req = build_request(
        searched_session(), "anthropic", ANTHROPIC_MODEL, cache="explicit", ttl="1h"
    )
    assert "cache_control" not in req.payload
    assert breakpoints(req.payload) == [("messages", 2, "content", 1), ("tools", 1)]
    for path in breakpoints(req.payload):
        node = req.payload
        for key in path:
            node = node[key]
        assert node["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_no_caching_means_no_breakpoint() -> None:
    req = build_request(searched_session(), "anthropic", ANTHROPIC_MODEL, cache="none")
    assert breakpoints(req.payload) == []


@pytest.mark.parametrize("cache", ["automatic", "explicit"])
def test_intermediate_breakpoint_when_a_turn_adds_many_blocks(cache: str) -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("Read all twenty files.")
    calls = [ToolCall(id=f"c{i}", name="read_file", arguments={"path": f"f{i}"}) for i in range(20)]
    s.assistant(tool_calls=calls)
    for call in calls:
        s.execute(call)
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, cache=cache)
    new_blocks = sum(len(m["content"]) for m in req.payload["messages"][1:])
    assert new_blocks > MAX_NEW_BLOCKS
    found = breakpoints(req.payload)
    # where the previous request ended, the cache it wrote is read back
    assert ("messages", 0, "content", 0) in found
    assert len(found) <= 4
    if cache == "explicit":
        assert ("messages", 2, "content", 19) in found


def test_few_new_blocks_need_no_intermediate_breakpoint() -> None:
    s = searched_session()
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, cache="explicit")
    assert ("messages", 0, "content", 0) not in breakpoints(req.payload)


def test_building_never_mutates_the_transcript() -> None:
    """Breakpoints are placed on copies: a native block that ends the request must not keep
    a cache_control in the session (it would pile up breakpoints request after request)."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("weather?")
    blocks = anthropic_search_response()["content"][1:3]
    s.assistant(native=[NativeBlock(provider="anthropic", data=b) for b in blocks])
    snapshot = [m.model_dump() for m in s.messages]
    first = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-regex", cache="explicit")
    assert first.payload["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert [m.model_dump() for m in s.messages] == snapshot
    second = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-regex", cache="explicit")
    assert second.json() == first.json()
    build_request(s, "openai-responses", RESPONSES_MODEL)
    assert [m.model_dump() for m in s.messages] == snapshot


# -- OpenAI Responses -------------------------------------------------------------------------


def test_additional_tools_mode_keeps_deferred_tools_out_of_the_top_level() -> None:
    req = build_request(_parallel_session(), "openai-responses", RESPONSES_MODEL)
    assert req.mode == "additional_tools"
    assert tool_names(req.payload) == ["tool_search", "read_file"]
    kinds = [item.get("type", item.get("role")) for item in req.payload["input"]]
    assert kinds == [
        "user",
        "function_call",
        "function_call",
        "function_call",
        "function_call_output",
        "additional_tools",
        "function_call_output",
        "function_call_output",
        "additional_tools",
    ]
    items = req.payload["input"]
    assert [t["name"] for t in items[5]["tools"]] == ["get_weather"]
    assert [t["name"] for t in items[8]["tools"]] == ["get_time"]
    assert items[7]["output"] == "Error: index unavailable"
    assert [(lp.tools, lp.path) for lp in req.load_points] == [
        (["get_weather"], "input.5"),
        (["get_time"], "input.8"),
    ]


def test_tool_search_mode_ids_are_deterministic_and_derived_from_call_and_names() -> None:
    a = build_request(
        _parallel_session(), "openai-responses", RESPONSES_MODEL, load_mode="tool_search"
    )
    b = build_request(
        _parallel_session(), "openai-responses", RESPONSES_MODEL, load_mode="tool_search"
    )
    assert a.json() == b.json()
    pairs = [
        i for i in a.payload["input"] if i.get("type") in ("tool_search_call", "tool_search_output")
    ]
    ids = [i["call_id"] for i in pairs]
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]
    assert all(i["execution"] == "client" and i["status"] == "completed" for i in pairs)
    assert all(t["defer_loading"] is True for i in pairs[1::2] for t in i["tools"])
    # the client tool_search declaration that client search items need, from request 1
    assert tool_names(a.payload) == ["tool_search", "read_file", "tool_search"]
    loader = a.payload["tools"][-1]
    assert loader["type"] == "tool_search" and loader["execution"] == "client"


def test_tool_search_mode_is_chosen_when_only_items_are_supported() -> None:
    req = build_request(
        searched_session(),
        "openai-responses",
        RESPONSES_MODEL,
        profile={"additional_tools": False},
    )
    assert req.mode == "tool_search"
    assert req.payload["input"][-1]["type"] == "tool_search_output"


def test_responses_full_list_fallback_with_a_note() -> None:
    req = build_request(searched_session(), "openai-responses", "gpt-5.2")
    assert req.mode == "full_list"
    assert any("supports neither additional_tools nor tool_search" in n for n in req.notes)
    assert tool_names(req.payload) == ["tool_search", "read_file", "get_weather"]
    assert not any(t.get("defer_loading") for t in req.payload["tools"])
    kinds = {i.get("type") for i in req.payload["input"]}
    assert kinds.isdisjoint({"additional_tools", "tool_search_call", "tool_search_output"})


def test_responses_system_patch_is_a_developer_message() -> None:
    before = build_request(searched_session(), "openai-responses", RESPONSES_MODEL)
    req = build_request(_patched_session(), "openai-responses", RESPONSES_MODEL)
    assert (
        req.payload["instructions"]
        == before.payload["instructions"]
        == ("You are a helpful agent.")
    )
    assert req.payload["input"][-2] == {
        "role": "developer",
        "content": "<system_update>\n<rules>\nAnswer in French.\n</rules>\n</system_update>",
    }
    assert req.payload["input"][-1]["role"] == "user"


def test_bad_responses_options_are_refused() -> None:
    s = searched_session()
    with pytest.raises(ValueError, match="unknown load_mode 'inline'; choose one of "):
        build_request(s, "openai-responses", RESPONSES_MODEL, load_mode="inline")
    with pytest.raises(ValueError, match="search='native-bm25' does not apply to openai-resp"):
        build_request(s, "openai-responses", RESPONSES_MODEL, search="native-bm25")
    for search in ("hosted", "native-client"):
        with pytest.raises(ValueError, match="does not support OpenAI tool_search"):
            build_request(s, "openai-responses", "gpt-5.2", search=search)
        with pytest.raises(ValueError, match="cannot be combined with load_mode='full_list'"):
            build_request(
                s, "openai-responses", RESPONSES_MODEL, search=search, load_mode="full_list"
            )
    forced = build_request(
        s, "openai-responses", "gpt-5.2", search="hosted", profile={"native_tool_search": True}
    )
    assert forced.mode == "native_hosted"
    assert forced.payload["tools"][-1] == {"type": "tool_search"}


def test_hosted_search_replays_items_and_keeps_loaded_tools_deferred() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("Open orders of CUST-12345?")
    options = {"search": "hosted", "namespaces": {"crm": CRM_DESCRIPTION}}
    before = build_request(s, "openai-responses", RESPONSES_MODEL, **options)
    reply = parse_response(responses_body(HOSTED_OUTPUT_DOC), provider="openai-responses")
    s.append(reply.message)
    s.activate(reply.loaded_tool_names)  # so the loaded tool can run
    result = s.execute(s.pending_calls()[0])
    assert not result.is_error
    after = build_request(s, "openai-responses", RESPONSES_MODEL, **options)

    assert after.mode == "native_hosted"
    assert after.payload["tools"] == before.payload["tools"]
    crm = next(t for t in after.payload["tools"] if t["type"] == "namespace")
    assert crm["tools"][0]["defer_loading"] is True
    items = after.payload["input"]
    assert items[1:3] == [{**x, "id": f"item_{i}"} for i, x in enumerate(HOSTED_OUTPUT_DOC[:2])]
    assert items[3] == {
        "type": "function_call",
        "call_id": "call_abc123",
        "name": "list_open_orders",
        "arguments": '{"customer_id":"CUST-12345"}',
        "namespace": "crm",
    }
    assert items[4] == {
        "type": "function_call_output",
        "call_id": "call_abc123",
        "output": '[{"id": "order_42"}]',
    }


def test_native_client_search_is_answered_with_the_same_call_id() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file", "get_time"])
    s.user("ETA of order_42?")
    reply = parse_response(responses_body([CLIENT_SEARCH_CALL]), provider="openai-responses")
    s.append(reply.message)
    result = s.execute(s.pending_calls()[0])
    assert result.added_tool_names == ["get_shipping_eta"]
    req = build_request(s, "openai-responses", RESPONSES_MODEL, search="native-client")

    assert req.mode == "native_client"
    call, output = req.payload["input"][1:]
    assert call == {
        "type": "tool_search_call",
        "call_id": "call_abc123",
        "execution": "client",
        "status": "completed",
        "arguments": {"query": "shipping ETA order"},
    }
    assert output["type"] == "tool_search_output"
    assert output["call_id"] == "call_abc123"
    assert output["execution"] == "client" and output["status"] == "completed"
    registry = set(s.registry.names())
    assert [t["name"] for t in output["tools"]] == ["get_shipping_eta"]
    assert all(t["name"] in registry and t["defer_loading"] is True for t in output["tools"])
    assert [(lp.tools, lp.path) for lp in req.load_points] == [(["get_shipping_eta"], "input.2")]
    assert tool_names(req.payload) == ["read_file", "get_time", "tool_search"]


def test_native_client_failed_search_gives_an_empty_output_and_a_note() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("ETA?")
    bad = {**CLIENT_SEARCH_CALL, "arguments": {"goal": "no query field"}}
    s.append(parse_response(responses_body([bad]), provider="openai-responses").message)
    assert s.execute(s.pending_calls()[0]).is_error
    req = build_request(s, "openai-responses", RESPONSES_MODEL, search="native-client")
    assert req.payload["input"][-1]["tools"] == []
    assert req.payload["input"][-1]["call_id"] == "call_abc123"
    assert any("tool_search call 'call_abc123' failed" in n for n in req.notes)


# -- Chat Completions and Kimi -------------------------------------------------------------


def test_chat_sends_the_full_list_newest_last_in_activation_order() -> None:
    s = searched_session()
    s.assistant("ok")
    s.set_active_tools([*s.active_tools, "get_time"])  # activated outside a tool run
    s.user("time?")
    req = build_request(s, "openai-chat", CHAT_MODEL)
    assert req.mode == "full_list"
    assert s.active_tools == ["tool_search", "read_file", "get_weather", "get_time"]
    assert tool_names(req.payload) == s.active_tools
    assert any("no deferred-loading protocol" in n for n in req.notes)
    for provider, model in [("anthropic", "claude-opus-4-1"), ("openai-responses", "gpt-5.2")]:
        assert tool_names(build_request(s, provider, model).payload) == s.active_tools


def test_chat_system_patch_append_or_rerender() -> None:
    s = _patched_session()
    appended = build_request(s, "openai-chat", CHAT_MODEL)
    messages = appended.payload["messages"]
    assert messages[0] == {"role": "system", "content": "You are a helpful agent."}
    assert messages[-2] == {
        "role": "system",
        "content": "<system_update>\n<rules>\nAnswer in French.\n</rules>\n</system_update>",
    }
    rerendered = build_request(s, "openai-chat", CHAT_MODEL, system_updates="rerender")
    messages = rerendered.payload["messages"]
    assert messages[0] == {
        "role": "system",
        "content": "You are a helpful agent.\n\n<rules>\nAnswer in French.\n</rules>",
    }
    assert [m["role"] for m in messages].count("system") == 1
    assert any("re-rendered" in n for n in rerendered.notes)
    with pytest.raises(ValueError, match="system_updates must be one of"):
        build_request(s, "openai-chat", CHAT_MODEL, system_updates="drop")


def test_kimi_system_tools_message_follows_the_whole_batch() -> None:
    req = build_request(_parallel_session(), "kimi", KIMI_MODEL)
    assert req.mode == "kimi"
    messages = req.payload["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "system",
    ]
    carrier = messages[-1]
    assert set(carrier) == {"role", "tools"}  # no content
    assert [t["function"]["name"] for t in carrier["tools"]] == ["get_weather", "get_time"]
    assert tool_names(req.payload) == ["tool_search", "read_file"]
    assert [(lp.message_index, lp.tools, lp.path) for lp in req.load_points] == [
        (5, ["get_weather", "get_time"], "messages.6.tools")
    ]
    # the next turn comes after the carrier; the carrier stays where it was
    s = _parallel_session()
    s.assistant("Done.")
    s.user("Thanks")
    later = build_request(s, "kimi", KIMI_MODEL).payload["messages"]
    assert later[: len(messages)] == messages


# -- profiles ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model"),
    [("anthropic", "claude-next-9"), ("openai-responses", "o9-mini"), ("kimi", "moonshot-x")],
)
def test_unknown_model_gets_a_conservative_profile_and_a_note(provider: str, model: str) -> None:
    req = build_request(searched_session(), provider, model)
    assert any(f"model {model!r} is not in the {provider} profile table" in n for n in req.notes)
    profile = req.profile
    assert profile is not None and not profile.known
    assert not (profile.tool_reference or profile.additional_tools or profile.tool_search_items)
    if provider != "kimi":
        assert req.mode == "full_list"


def test_profile_override_enables_a_feature() -> None:
    s = searched_session()
    req = build_request(s, "anthropic", "claude-opus-4-1", profile={"tool_reference": True})
    assert req.mode == "tool_reference"
    assert blocks_of_type(req.payload, "tool_reference")
    proxy = build_request(
        s, "openai-responses", "my-proxy-model", profile={"additional_tools": True}
    )
    assert proxy.mode == "additional_tools"
    assert not any("not in the" in n for n in proxy.notes)
    off = build_request(
        s,
        "openai-responses",
        RESPONSES_MODEL,
        profile={"additional_tools": False, "tool_search_items": False},
    )
    assert off.mode == "full_list"


def test_unknown_profile_flag_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown profile flag\(s\) \['tool_refs'\]"):
        build_request(searched_session(), "anthropic", ANTHROPIC_MODEL, profile={"tool_refs": True})


def test_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown provider 'gemini'"):
        build_request(searched_session(), "gemini", "gemini-3")
    with pytest.raises(ValueError, match="unknown provider"):
        parse_response({}, provider="gemini")


@pytest.mark.parametrize(
    ("model", "tool_reference", "mid_system"),
    [
        ("claude-opus-4-8", True, True),
        ("claude-opus-4-8-20260528", True, True),
        ("claude-sonnet-4-6", True, False),
        ("claude-haiku-4-5", True, False),
        ("claude-opus-4-1", False, False),
        ("claude-sonnet-4-20250514", False, False),
    ],
)
def test_anthropic_profiles(model: str, tool_reference: bool, mid_system: bool) -> None:
    profile, notes = profile_for("anthropic", model)
    assert profile.known and notes == []
    assert profile.tool_reference is tool_reference
    assert profile.native_tool_search is tool_reference
    assert profile.mid_conversation_system is mid_system


@pytest.mark.parametrize(
    ("model", "search"),
    [("gpt-5.4", True), ("gpt-5.5", True), ("gpt-5.2", False), ("gpt-5.4-nano", False)],
)
def test_openai_profiles(model: str, search: bool) -> None:
    responses, _ = profile_for("openai-responses", model)
    chat, _ = profile_for("openai-chat", model)
    assert responses.additional_tools is search and responses.tool_search_items is search
    assert not (chat.additional_tools or chat.tool_search_items)


def test_extra_options_go_into_the_body_and_still_validate() -> None:
    s = searched_session()
    req = build_request(s, "anthropic", ANTHROPIC_MODEL, max_tokens=512, stop_sequences=["END"])
    assert req.payload["max_tokens"] == 512 and req.payload["stop_sequences"] == ["END"]
    chat = build_request(s, "openai-chat", CHAT_MODEL, parallel_tool_calls=False)
    assert chat.payload["parallel_tool_calls"] is False
