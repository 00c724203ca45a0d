"""Message-thread bodies against the SDK's thread types (with the beta) and the rules the
types cannot say: a continuation names no create-only field, and may answer the thread's last
`tool_use` and name the thread's tools."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.wire.anthropic_threads import as_continuation, as_create, without_markers
from dtl_notebook.wire.profiles import profile_for
from dtl_notebook.wire.validate import WireValidationError, required_betas, validate_payload

BASE: dict[str, Any] = {"model": "claude-sonnet-4-6", "max_tokens": 100}
CONTINUE = {"type": "continue", "previous_message_id": "msg_1"}


def _check(**body: Any) -> None:
    validate_payload({**BASE, **body}, "anthropic")


def test_create_and_continue_are_beta_bodies_of_the_sdk_types() -> None:
    create = {**BASE, "system": "s", "messages": [{"role": "user", "content": "hi"}]}
    validate_payload(as_create(create), "anthropic")
    assert required_betas(as_create(create), "anthropic") == ["message-threads-2026-08-12"]
    _check(thread=CONTINUE, messages=[{"role": "user", "content": "more"}])
    _check(thread=CONTINUE, messages=[])  # after a pause_turn: nothing new to send


@pytest.mark.parametrize(
    ("thread", "words"),
    [
        ({"type": "continue"}, "thread: missing: field 'previous_message_id'"),
        ({"type": "fork"}, "thread: literal_error: type 'fork'"),
        ({"type": "create", "previous_message_id": "m"}, "unexpected key 'previous_message_id'"),
    ],
)
def test_a_bad_thread_field_is_named(thread: dict[str, Any], words: str) -> None:
    with pytest.raises(WireValidationError, match=words.replace("(", r"\(")):
        _check(thread=thread, messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("field", ["system", "tools"])
def test_a_continuation_repeating_a_create_only_field_is_refused(field: str) -> None:
    value: Any = "s" if field == "system" else [{"name": "t", "input_schema": {"type": "object"}}]
    with pytest.raises(WireValidationError, match=f"at {field}: `{field}` cannot be sent"):
        _check(thread=CONTINUE, messages=[], **{field: value})


def test_a_continuation_answers_the_threads_tool_use_and_names_its_tools() -> None:
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "tool_reference", "tool_name": "get_weather"}],
    }
    _check(thread=CONTINUE, messages=[{"role": "user", "content": [result]}])
    # later messages are checked as usual, at their own paths
    later = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": [{**result, "tool_use_id": "toolu_9", "content": "r"}]},
    ]
    with pytest.raises(WireValidationError, match=r"at messages\.2\.content\.0: tool_result"):
        _check(thread=CONTINUE, messages=later)


def test_the_models_the_provider_page_lists_take_threads() -> None:
    for model in ("claude-sonnet-4-6", "claude-opus-4-8", "claude-haiku-4-5-20251001"):
        assert profile_for("anthropic", model)[0].message_threads, model
    for model in ("claude-opus-4-1", "claude-sonnet-4", "my-model"):
        assert not profile_for("anthropic", model)[0].message_threads, model


messages_st = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": st.lists(
                st.fixed_dictionaries(
                    {"type": st.just("text"), "text": st.text(max_size=5)},
                    optional={"cache_control": st.just({"type": "ephemeral"})},
                ),
                min_size=1,
                max_size=3,
            ),
        }
    ),
    max_size=6,
)


@given(messages=messages_st, held=st.integers(0, 6))
def test_a_continuation_carries_the_messages_after_the_held_ones(
    messages: list[dict[str, Any]], held: int
) -> None:
    full = {**BASE, "system": "s", "tools": [], "messages": messages}
    body = as_continuation(full, held, "msg_1")
    assert "system" not in body and "tools" not in body
    assert body["messages"] == messages[held:]
    assert body["thread"] == CONTINUE
    stripped = without_markers(messages)
    assert "cache_control" not in repr(stripped)
    assert [len(m["content"]) for m in stripped] == [len(m["content"]) for m in messages]
