"""Parts a reply says the API removed before the model saw them become `not_seen` segments
(the reply shapes are those of the anthropic and openai SDK types: BetaMessage and Response
`input_transformations`)."""

from __future__ import annotations

import json
from typing import Any

from anthropic.types.beta import BetaMessage
from hypothesis import given
from hypothesis import strategies as st
from openai.types.responses import Response

from dtl_notebook.cache import analyze
from dtl_notebook.context import model_context
from dtl_notebook.context.input_transformations import as_seen, removals

THOUGHT = "Weighing the two options carefully before calling the tool. " * 12
CLAUDE: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 200,
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "Which one?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": THOUGHT, "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]},
    ],
}


def claude_reply(*entries: dict[str, Any]) -> dict[str, Any]:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "A."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 400, "output_tokens": 3},
        "input_transformations": list(entries),
    }
    BetaMessage.model_validate(body)  # the SDK's own shape
    return body


def test_dropped_thinking_is_not_seen_and_counts_nothing() -> None:
    before = model_context(CLAUDE, provider="anthropic")
    (thinking,) = [s for s in before if s.source == "messages.1.content.0"]
    assert thinking.kind == "message" and thinking.tokens > 100  # current turn: kept
    reply = claude_reply(
        {
            "type": "thinking_dropped",
            "path": "messages.1.content.0",
            "reason": "model_binding_mismatch",
        }
    )
    after = as_seen(before, CLAUDE, reply)
    (dropped,) = [s for s in after if s.source == "messages.1.content.0"]
    assert dropped.kind == "not_seen" and dropped.tokens == 0
    assert "model_binding_mismatch" in dropped.label and "not seen by the model" in dropped.label
    assert after.total_tokens == before.total_tokens - thinking.tokens
    assert any("removed by the API" in n for n in after.notes)
    assert before.of_kind("not_seen") == []  # the request's own context is left as it was


def test_mismatch_allowed_keeps_the_block_and_says_so() -> None:
    before = model_context(CLAUDE, provider="anthropic")
    reply = claude_reply(
        {
            "type": "thinking_mismatch_allowed",
            "path": "messages.1.content.0",
            "reason": "prefix_binding_mismatch",
        }
    )
    after = as_seen(before, CLAUDE, reply)
    assert after.segments == before.segments
    assert any("shown to the model all the same" in n for n in after.notes)


def test_no_transformations_leave_the_context_itself() -> None:
    ctx = model_context(CLAUDE, provider="anthropic")
    assert as_seen(ctx, CLAUDE, claude_reply()) is ctx
    assert as_seen(ctx, CLAUDE, {"usage": {}}) is ctx
    unknown = claude_reply()
    unknown["input_transformations"] = [{"type": "something_new", "path": "messages.0"}]
    assert as_seen(ctx, CLAUDE, unknown) is ctx


def test_stream_uses_the_last_list_sent() -> None:
    """message_start carries the list; a final message_delta's list replaces it."""
    drop = {
        "type": "thinking_dropped",
        "path": "messages.1.content.0",
        "reason": "prefix_binding_mismatch",
    }
    start = {"type": "message_start", "message": {**claude_reply(drop), "content": []}}
    delta = {"type": "message_delta", "delta": {"input_transformations": []}, "usage": {}}
    text = "\n".join(f"data: {json.dumps(e)}" for e in (start, delta))
    assert removals(CLAUDE, text) == ([], [])
    assert removals(CLAUDE, f"data: {json.dumps(start)}")[0] == [
        ("messages.1.content.0", "prefix_binding_mismatch")
    ]


RESPONSES: dict[str, Any] = {
    "model": "gpt-5.4",
    "input": [
        {"role": "user", "content": "Plan it."},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Think about the plan step by step."}],
            "encrypted_content": "Z" * 4000,
        },
        {"type": "function_call", "call_id": "c1", "name": "plan", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "done"},
    ],
    "tools": [{"type": "function", "name": "plan", "parameters": {"type": "object"}}],
}


def test_withheld_reasoning_item_is_not_seen() -> None:
    reply = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-5.4",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "input_transformations": [
            {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "model_mismatch"}
        ],
        "usage": {
            "input_tokens": 60,
            "output_tokens": 1,
            "total_tokens": 61,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    Response.model_validate(reply)  # the SDK's own shape
    entry = analyze([RESPONSES], provider="openai-responses", responses=[reply])[0]
    (reasoning,) = [s for s in entry.context if s.source == "input.1"]
    assert reasoning.kind == "not_seen" and reasoning.tokens == 0
    plain = analyze([RESPONSES], provider="openai-responses")[0]
    assert entry.total_tokens < plain.total_tokens


@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_removals_take_out_exactly_the_parts_named(dropped: list[bool]) -> None:
    """Whatever thinking blocks a reply names, the context keeps its length, those segments
    become not_seen with 0 tokens, and the total falls by exactly their tokens."""
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": f"step {i}: " + "weigh it. " * (i + 3), "signature": "s"}
        for i in range(len(dropped))
    ]
    content.append({"type": "tool_use", "id": "t1", "name": "lookup", "input": {}})
    body = {
        **CLAUDE,
        "messages": [
            CLAUDE["messages"][0],
            {"role": "assistant", "content": content},
            CLAUDE["messages"][2],
        ],
    }
    paths = [f"messages.1.content.{i}" for i, drop in enumerate(dropped) if drop]
    reply = claude_reply(
        *(
            {"type": "thinking_dropped", "path": p, "reason": "prefix_binding_mismatch"}
            for p in paths
        )
    )
    before = model_context(body, provider="anthropic")
    after = as_seen(before, body, reply)
    assert len(after.segments) == len(before.segments)
    removed = [s for s in before if s.source in paths]
    assert after.total_tokens == before.total_tokens - sum(s.tokens for s in removed)
    assert {s.source for s in after if s.kind == "not_seen"} == set(paths)
