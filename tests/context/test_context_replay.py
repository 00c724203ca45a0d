"""A grown request replays the earlier frozen units in one step, equal to a cold run."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook._reuse.frozen import freeze
from dtl_notebook.context.model import model_context
from tests.support.reuse_marks import shares

ROLES = st.sampled_from(["system", "developer", "user", "assistant"])


def _chat(roles: list[str], k: int) -> Any:
    return freeze({"role": roles[k % len(roles)], "content": f"message {k}"})


def _payload(provider: str, messages: list[Any]) -> dict[str, Any]:
    if provider == "openai-responses":
        return {"model": "gpt-5.4", "input": messages}
    model = "claude-opus-4-8" if provider == "anthropic" else "gpt-5.4"
    if provider == "anthropic":
        messages = [m for m in messages if m["role"] in ("user", "assistant")]
    return {"model": model, "messages": messages}


def _same_as_cold(provider: str, messages: list[Any]) -> None:
    payload = _payload(provider, messages)
    warm = model_context(payload, provider)
    with disabled():
        cold = model_context(payload, provider)
    assert warm.segments == cold.segments and warm.notes == cold.notes


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["openai-chat", "openai-responses", "anthropic", "kimi"]),
    st.lists(ROLES, min_size=1, max_size=6),
    st.lists(st.integers(0, 3), min_size=1, max_size=6),
)
def test_grown_lists_render_as_from_scratch(
    provider: str, roles: list[str], growth: list[int]
) -> None:
    messages: list[Any] = []
    for step, added in enumerate(growth):
        messages = [*messages, *(_chat(roles, len(messages) + j) for j in range(added))]
        if step % 3 == 2 and messages:  # an edited copy in the middle is rendered again
            middle = len(messages) // 2
            messages[middle] = freeze({**messages[middle], "content": f"edited {step}"})
        _same_as_cold(provider, messages)


def test_a_system_message_after_replayed_turns_is_a_patch() -> None:
    """The renderer's state (a conversation message seen) is restored over replayed units."""
    history = [
        freeze({"role": "system", "content": "rules"}),
        freeze({"role": "user", "content": "hi"}),
    ]
    first = model_context({"model": "gpt-5.4", "messages": history}, "openai-chat")
    grown = [*history, freeze({"role": "developer", "content": "more rules"})]
    second = model_context({"model": "gpt-5.4", "messages": grown}, "openai-chat")
    assert second.segments[: len(first.segments)] == first.segments
    assert second.segments[-1].kind == "system_patch"
    only_system = [freeze({"role": "system", "content": "rules"})]
    model_context({"model": "gpt-5.4", "messages": only_system}, "openai-chat")
    more = [*only_system, freeze({"role": "developer", "content": "more rules"})]
    assert (
        model_context({"model": "gpt-5.4", "messages": more}, "openai-chat").segments[-1].kind
        == "system"
    )


@shares
def test_the_replayed_segments_are_the_earlier_ones() -> None:
    """Replay lends the earlier Segment objects themselves (so the analyzer's chain is lent too)."""
    history = [freeze({"role": "user", "content": f"turn {k}"}) for k in range(50)]
    first = model_context({"model": "gpt-5.4", "messages": history}, "openai-chat")
    grown = [*history, freeze({"role": "user", "content": "next"})]
    second = model_context({"model": "gpt-5.4", "messages": grown}, "openai-chat")
    assert all(a is b for a, b in zip(first.segments, second.segments, strict=False))
    assert len(second.segments) == len(first.segments) + 1
