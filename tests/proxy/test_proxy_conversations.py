"""Conversations recovered from interleaved traffic (hypothesis over interleavings)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.cache.conversation_key import Conversations

PROVIDERS = ["anthropic", "openai-responses", "openai-chat"]


def turns(agent: int, count: int, provider: str, user: str | None) -> list[dict[str, Any]]:
    """An append-only conversation: each request repeats the last with a reply and a new turn,
    the cache marker moving to the newest message as Claude Code moves it."""
    history: list[dict[str, Any]] = []
    bodies = []
    for i in range(count):
        history = [{k: v for k, v in m.items() if k != "cache_control"} for m in history]
        if i:
            history.append({"role": "assistant", "content": f"answer {agent}.{i}"})
        history.append(
            {
                "role": "user",
                "content": f"agent {agent} turn {i}",
                "cache_control": {"type": "ephemeral"},
            }
        )
        key = "input" if provider == "openai-responses" else "messages"
        body: dict[str, Any] = {"model": "m", key: list(history)}
        if user is not None:
            body["metadata"] = {"user_id": user}
        bodies.append(body)
    return bodies


@st.composite
def traffic(draw: st.DrawFn) -> tuple[list[tuple[int, str, dict[str, Any]]], int]:
    agents = draw(st.integers(1, 5))
    queues = []
    for agent in range(agents):
        provider = draw(st.sampled_from(PROVIDERS))
        user = draw(st.sampled_from([None, "user_a", "user_b"]))
        count = draw(st.integers(1, 5))
        queues.append([(agent, provider, b) for b in turns(agent, count, provider, user)])
    order = []
    while any(queues):
        live = [q for q in queues if q]
        order.append(draw(st.sampled_from(live)).pop(0))
    return order, agents


@settings(max_examples=150, deadline=None)
@given(traffic())
def test_interleaved_agents_are_told_apart(
    case: tuple[list[tuple[int, str, dict[str, Any]]], int],
) -> None:
    order, agents = case
    grouping = Conversations()
    named: dict[int, set[str]] = {}
    for agent, provider, body in order:
        named.setdefault(agent, set()).add(grouping.assign(provider, body))
    assert all(len(names) == 1 for names in named.values())  # one conversation per agent
    assert len({next(iter(n)) for n in named.values()}) == agents  # and never shared


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["k1", "k2", "k3"]), min_size=1, max_size=12))
def test_prompt_cache_key_and_previous_response_id_link_requests(keys: list[str]) -> None:
    grouping = Conversations()
    by_key: dict[str, str] = {}
    for i, key in enumerate(keys):  # unrelated inputs: only the key ties them together
        name = grouping.assign("openai-responses", {"input": f"task {i}", "prompt_cache_key": key})
        assert by_key.setdefault(key, name) == name
        grouping.answered(name, f"resp_{i}")
        follow = grouping.assign(
            "openai-responses", {"input": "go on", "previous_response_id": f"resp_{i}"}
        )
        assert follow == name
    assert len(set(by_key.values())) == len(set(keys))
    # a response id is no link across providers
    other = grouping.assign(
        "openai-chat",
        {"messages": [{"role": "user", "content": "go on"}], "previous_response_id": "resp_0"},
    )
    assert other not in by_key.values()


def test_memory_is_bounded_by_the_conversations_kept() -> None:
    grouping = Conversations(limit=10)
    for i in range(500):
        grouping.assign("anthropic", {"messages": [{"role": "user", "content": f"task {i}"}]})
    assert len(grouping) == 10
