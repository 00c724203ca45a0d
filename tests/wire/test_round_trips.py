"""Real model output replays as the model produced it: parse a recorded response, append it,
execute the calls, and find the blocks unchanged in the next request.

Sources (the real recordings, tests/support/real_recordings.py): anthropics/anthropic-sdk-python
`tests/lib/tools/__inline_snapshot__/test_runners/` (programmatic tool calling, anth_sdk/) and
vercel/ai `packages/anthropic/src/__fixtures__/anthropic-tool-search-bm25.1.json` and
`packages/openai/src/responses/__fixtures__/openai-client-tool-search.{1,2}.json` (vercel/).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic.types
import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.wire import build_request, parse_response
from tests.support.wire_requests import strip_cache_control

WEATHER = {
    "type": "object",
    "properties": {"location": {"type": "string"}, "units": {"type": "string"}},
    "required": ["location"],
}


def _fixture(real: Path, *parts: str) -> Any:
    return json.loads(real.joinpath(*parts).read_text())


def _weather_session(**kwargs: Any) -> Session:
    tool = Tool(
        "get_weather", description="Weather", parameters=WEATHER, execute=lambda **a: "Sunny"
    )
    return Session(tools=[tool], **kwargs)


def _answer_calls(s: Session) -> None:
    for call in s.pending_calls():
        s.execute(call)


@pytest.mark.parametrize("as_sdk", [False, True], ids=["dict", "sdk"])
def test_programmatic_tool_call_replays_with_its_caller(
    real_recordings: Path, as_sdk: bool
) -> None:
    """anth_sdk TestSyncRunTools_092be1de…: a code_execution server call, then a tool_use
    whose `caller` is that code execution; the SDK's own next request is the reference."""
    first, second = _fixture(
        real_recordings, "anth_sdk", "TestSyncRunTools_092be1de-d3f8-4c22-a4ea-a7ad54689836.json"
    )
    body = first["response"]["body"]
    response = anthropic.types.Message.model_validate(body) if as_sdk else body
    s = _weather_session(active=["get_weather"], search=None)
    s.user("What is the weather in SF, NY, and London in Celsius?")
    s.append(parse_response(response, "anthropic").message)
    assert [c.name for c in s.messages[-1].tool_calls] == ["get_weather"]  # still executed
    _answer_calls(s)
    payload = build_request(s, "anthropic", "claude-opus-4-5").payload
    sent_by_sdk = second["request"]["body"]["messages"][1]
    assert strip_cache_control(payload["messages"][1]) == sent_by_sdk
    assert payload["messages"][1]["content"] == body["content"]


def test_server_search_blocks_and_direct_callers_replay_verbatim(real_recordings: Path) -> None:
    """vercel anthropic-tool-search-bm25.1.json: server_tool_use, its result and a tool_use,
    each with `caller: {"type": "direct"}`."""
    body = _fixture(real_recordings, "vercel", "anthropic-tool-search-bm25.1.json")
    s = _weather_session(active=[], search=None)
    s.user("What is the weather in San Francisco?")
    reply = parse_response(body, "anthropic")
    s.append(reply.message)
    s.activate(reply.loaded_tool_names)
    _answer_calls(s)
    request = build_request(s, "anthropic", "claude-sonnet-4-5", search="native-bm25")
    assert request.payload["messages"][1]["content"] == body["content"]
    assert [lp.tools for lp in request.load_points] == [["get_weather"]]


def test_client_tool_search_items_replay_as_produced(real_recordings: Path) -> None:
    """vercel openai-client-tool-search.1.json / .2.json: a client tool_search_call, then a
    function_call; both replay as the model produced them (item ids are not required on
    input and are not kept), next to the client tool_search declaration."""
    search_body = _fixture(real_recordings, "vercel", "openai-client-tool-search.1.json")
    call_body = _fixture(real_recordings, "vercel", "openai-client-tool-search.2.json")
    s = _weather_session(active=["tool_search"])
    s.user("What is the weather in San Francisco?")
    # a dict: SDK 3.57's Response requires usage.input_tokens_details.cache_write_tokens,
    # which this real gpt-5.4 response does not carry
    s.append(parse_response(search_body, "openai-responses").message)
    _answer_calls(s)  # the recorded `goal` argument is not our engine's `query`: an error result
    s.append(parse_response(call_body, "openai-responses").message)
    s.activate(["get_weather"])
    _answer_calls(s)
    request = build_request(s, "openai-responses", "gpt-5.4", search="native-client")
    items = request.payload["input"]

    def produced(item: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in item.items() if k != "id"}

    search_call = produced(search_body["output"][0])
    assert search_call in items
    assert items[items.index(search_call) + 1]["type"] == "tool_search_output"
    function_call = {k: v for k, v in produced(call_body["output"][0]).items() if k != "status"}
    assert function_call in items
    declared = [t for t in request.payload["tools"] if t.get("type") == "tool_search"]
    assert declared and declared[0]["execution"] == "client"


def test_tool_search_load_mode_always_declares_the_client_tool_search() -> None:
    s = _weather_session(active=["tool_search"])
    s.user("weather?")
    before = build_request(s, "openai-responses", "gpt-5.4", load_mode="tool_search")
    s.assistant(tool_calls=[])
    s.user("weather in Paris?")
    s.assistant(tool_calls=[ToolCall(id="c1", name="tool_search", arguments={"query": "w"})])
    s.tool_result("c1", "found", added_tool_names=["get_weather"])
    after = build_request(s, "openai-responses", "gpt-5.4", load_mode="tool_search")
    kinds = [i.get("type") for i in after.payload["input"]]
    assert "tool_search_call" in kinds and "tool_search_output" in kinds
    for request in (before, after):
        declared = [t for t in request.payload["tools"] if t.get("type") == "tool_search"]
        assert [t["execution"] for t in declared] == ["client"]
    assert before.payload["tools"] == after.payload["tools"]  # declared from request 1
