from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from dtl_notebook.agent import (
    AssistantMessage,
    ImagePart,
    NativeBlock,
    SystemUpdate,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.agent.messages import MESSAGES, NativePart, ToolCallPart, ToolChange
from dtl_notebook.agent.tools import ToolSpec

SERVER_TOOL_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_01ABC123",
    "name": "tool_search_tool_regex",
    "input": {"pattern": "weather", "limit": 10},
}
SEARCH_RESULT = {
    "type": "tool_search_tool_result",
    "tool_use_id": "srvtoolu_01ABC123",
    "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}],
    },
}


def sample() -> list:
    return [
        SystemUpdate(sections={"preamble": "Be brief.", "tool_catalog": "- get_weather"}),
        UserMessage(
            content=[TextPart(text="Look"), ImagePart(media_type="image/png", data="iVBORw0K")]
        ),
        AssistantMessage(
            content=[
                TextPart(text="Searching."),
                NativePart(block=NativeBlock(provider="anthropic", data=SERVER_TOOL_USE)),
                NativePart(block=NativeBlock(provider="anthropic", data=SEARCH_RESULT)),
                ToolCallPart(
                    call=ToolCall(id="toolu_1", name="get_weather", arguments={"location": "SF"})
                ),
            ],
            provider="anthropic",
            model="claude-sonnet-4-6",
        ),
        ToolResultMessage(
            call_id="toolu_1",
            tool_name="get_weather",
            content=[TextPart(text="Sunny")],
            added_tool_names=["x"],
            added_tools=[ToolSpec(name="x", description="X")],
            non_append_change=None,
        ),
        ToolResultMessage(
            call_id="c2",
            content=[TextPart(text="oops")],
            is_error=True,
            non_append_change=ToolChange(removed=["a"], added=["b"]),
        ),
        SystemUpdate(sections={"tool_catalog": None}),
    ]


def test_lossless_json_round_trip() -> None:
    messages = sample()
    text = MESSAGES.dump_json(messages)
    again = MESSAGES.validate_json(text)
    assert again == messages
    assert MESSAGES.dump_json(again) == text


def test_native_blocks_kept_verbatim() -> None:
    msg = sample()[2]
    assert isinstance(msg, AssistantMessage)
    assert [b.data for b in msg.native_blocks] == [SERVER_TOOL_USE, SEARCH_RESULT]
    assert msg.native_blocks[0].type == "server_tool_use"
    assert msg.tool_calls[0].arguments == {"location": "SF"}
    assert msg.text == "Searching."
    dumped = json.loads(MESSAGES.dump_json([msg]))
    assert dumped[0]["content"][1]["block"]["data"] == SERVER_TOOL_USE


def test_marker_snapshot_lookup() -> None:
    result = sample()[3]
    assert isinstance(result, ToolResultMessage)
    assert result.snapshot("x") == ToolSpec(name="x", description="X")
    assert result.snapshot("y") is None


def test_unknown_role_or_key_is_rejected() -> None:
    with pytest.raises(ValidationError):
        MESSAGES.validate_python([{"role": "robot", "content": []}])
    with pytest.raises(ValidationError):
        MESSAGES.validate_python([{"role": "user", "content": [], "extra": 1}])
