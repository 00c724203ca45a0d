"""The references-only rule: a `tool_result` whose content carries `tool_reference` blocks
holds only `tool_reference` blocks. One rule (`wire.rules`), obeyed by the Anthropic builder,
enforced by the validator and answered by the emulator with Anthropic's 400."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, ToolCall
from dtl_notebook.agent import ImagePart, TextPart
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.wire import build_request
from dtl_notebook.wire.rules import (
    REFERENCES_ONLY_RULE,
    references_only_problem,
    split_references,
    tool_reference,
)
from dtl_notebook.wire.validate import WireValidationError, validate_payload
from tests.support.wire_requests import ANTHROPIC_MODEL, doc_tools

TEXT = {"type": "text", "text": "found get_weather"}
IMAGE = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}


def _body(content: Any) -> dict[str, Any]:
    """A client search turn whose tool_result holds `content`."""
    use = {"type": "tool_use", "id": "c1", "name": "tool_search", "input": {"query": "weather"}}
    return {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 64,
        "tools": [
            {"name": "tool_search", "input_schema": {"type": "object"}},
            {"name": "get_weather", "input_schema": {"type": "object"}, "defer_loading": True},
        ],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", **content}]},
        ],
    }


def test_split_keeps_the_order_within_each_side() -> None:
    blocks = [TEXT, tool_reference("a"), {"type": "image"}, tool_reference("b")]
    assert split_references(blocks) == (
        [tool_reference("a"), tool_reference("b")],
        [TEXT, {"type": "image"}],
    )
    assert split_references([TEXT]) == ([], [TEXT])


def test_the_problem_names_the_first_ordinary_block() -> None:
    problem = references_only_problem([tool_reference("a"), TEXT], ("r",))
    assert problem is not None and problem.path == ("r", "content", 1)
    assert problem.message == f"{REFERENCES_ONLY_RULE} (found 'text')"
    assert references_only_problem([TEXT, TEXT], ("r",)) is None  # no reference: no rule
    assert references_only_problem("plain text", ("r",)) is None
    assert references_only_problem([tool_reference("a")], ("r",)) is None


# -- (a) the validator ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "index", "found"),
    [
        ([tool_reference("get_weather"), TEXT], 1, "'text'"),
        ([TEXT, tool_reference("get_weather")], 0, "'text'"),
        ([tool_reference("get_weather"), tool_reference("get_weather"), IMAGE], 2, "'image'"),
    ],
)
def test_the_validator_rejects_a_reference_beside_ordinary_content(
    content: list[Any], index: int, found: str
) -> None:
    with pytest.raises(WireValidationError) as info:
        validate_payload(_body({"content": content}), "anthropic")
    assert info.value.path == f"messages.2.content.0.content.{index}"
    assert info.value.reason == f"{REFERENCES_ONLY_RULE} (found {found})"


def test_references_alone_with_the_result_in_a_sibling_block_pass() -> None:
    body = _body({"content": [tool_reference("get_weather")]})
    body["messages"][2]["content"].append(TEXT)
    validate_payload(body, "anthropic")
    validate_payload(_body({"content": [TEXT]}), "anthropic")  # no reference, no rule


def test_a_dangling_reference_is_still_named_first() -> None:
    with pytest.raises(WireValidationError) as info:
        validate_payload(_body({"content": [tool_reference("ghost")]}), "anthropic")
    assert info.value.path == "messages.2.content.0.content.0"
    assert info.value.reason == "Tool reference 'ghost' not found in available tools"


# -- (b) the builder --------------------------------------------------------------------------

CHART = "https://example.com/chart.png"
OUTPUTS: dict[str, Any] = {  # a result's content, and the blocks it becomes
    "text": ("found it", [{"type": "text", "text": "found it"}]),
    "empty": ("", []),
    "image": (
        [TextPart(text="a chart"), ImagePart(url=CHART)],
        [
            {"type": "text", "text": "a chart"},
            {"type": "image", "source": {"type": "url", "url": CHART}},
        ],
    ),
}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(sorted(OUTPUTS)), st.booleans(), st.booleans()),
        min_size=1,
        max_size=4,
    )
)
def test_built_results_hold_references_alone_and_the_rest_follows(
    results: list[tuple[str, bool, bool]],
) -> None:
    """Each result: (its output, whether it failed, whether it loads a tool)."""
    loadable = iter(["get_weather", "get_time", "get_customer", "get_shipping_eta"])
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("Find tools.")
    calls = [ToolCall(id=f"c{i}", name="tool_search", arguments={}) for i in range(len(results))]
    s.assistant(tool_calls=calls)
    expected_siblings: list[Any] = []
    expected_content: list[list[Any] | None] = []
    for call, (output, failed, loads) in zip(calls, results, strict=True):
        content, blocks = OUTPUTS[output]
        message = s.tool_result(
            call.id, content, added_tool_names=[next(loadable)] if loads else [], is_error=failed
        )
        if loads:  # the references stay, the ordinary result (or error text) follows
            expected_content.append([tool_reference(n) for n in message.added_tool_names or []])
            failure = [{"type": "text", "text": f"Error: {message.text}"}]
            expected_siblings += failure if failed else blocks
        else:
            expected_content.append(None)
    request = build_request(s, "anthropic", ANTHROPIC_MODEL)  # validated, so the rule holds
    blocks = request.payload["messages"][-1]["content"]
    shown = [b for b in blocks if b["type"] == "tool_result"]
    assert [b["tool_use_id"] for b in shown] == [c.id for c in calls]
    assert blocks[len(shown) :] == expected_siblings
    for block, content in zip(shown, expected_content, strict=True):
        assert references_only_problem(block.get("content"), ()) is None
        if content is None:
            assert split_references(block.get("content", []))[0] == []
        else:
            assert block["content"] == content and "is_error" not in block


# -- (c) the emulator -------------------------------------------------------------------------


def test_the_emulator_answers_anthropics_400_for_a_mixed_result() -> None:
    emulator = Emulator("anthropic")
    body = _body({"content": [tool_reference("get_weather"), TEXT]})
    request = httpx2.Request(
        "POST", "http://emulator.invalid/v1/messages", content=json.dumps(body).encode()
    )
    response = emulator.handle(request)
    assert response.status_code == 400
    path = "messages.2.content.0.content.1"
    assert response.json() == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"{path}: {REFERENCES_ONLY_RULE} (found 'text')",
        },
    }
    assert len(emulator.requests) == 0  # refused: not logged as an accepted body
    fixed = _body({"content": [tool_reference("get_weather")]})
    fixed["messages"][2]["content"].append(TEXT)
    ok = emulator.handle(httpx2.Request("POST", request.url, content=json.dumps(fixed).encode()))
    assert ok.status_code == 200
