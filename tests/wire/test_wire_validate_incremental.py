"""Incremental validation never accepts a body that validation from scratch rejects."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook._reuse.frozen import FrozenDict
from dtl_notebook.wire import build_request
from dtl_notebook.wire.validate import WireValidationError, validate_payload

MODES = {
    "anthropic": ("claude-opus-4-8", {}),
    "openai-responses": ("gpt-5.4", {"load_mode": "additional_tools"}),
    "openai-chat": ("gpt-5.4", {}),
    "kimi": ("kimi-k2.5", {}),
}


def _session() -> Session:
    tools = [
        Tool(f"tool_{i}", description=f"tool {i}", parameters={"type": "object"}, execute=str)
        for i in range(6)
    ]
    session = Session(system="You help.", tools=tools, active=["tool_search"])
    for i in range(3):
        session.user(f"task {i}")
        call = ToolCall(id=f"c{i}", name="tool_search", arguments={"query": "tool"})
        session.assistant(tool_calls=[call])
        session.execute(call)
        session.assistant(f"done {i}")
    return session


def _outcome(payload: dict[str, Any], provider: str, cached: bool) -> str | None:
    try:
        validate_payload(payload, provider, cached=cached)
    except WireValidationError as exc:
        return str(exc)
    return None


def _containers(value: Any, found: list[Any]) -> list[Any]:
    """Every dict and list inside ``value`` (depth first)."""
    if isinstance(value, dict | list):
        found.append(value)
        for child in value.values() if isinstance(value, dict) else value:
            _containers(child, found)
    return found


MUTANTS = st.sampled_from([True, 1, 1.0, 0, "x", None, [], {}, {"type": "text"}, -0.0])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    provider=st.sampled_from(sorted(MODES)),
    picks=st.lists(st.tuples(st.integers(0, 10_000), st.booleans(), MUTANTS), max_size=3),
    new_turn=st.booleans(),
)
def test_cached_and_uncached_validation_agree(
    provider: str, picks: list[tuple[int, bool, Any]], new_turn: bool
) -> None:
    session = _session()
    model, options = MODES[provider]
    first = build_request(session, provider, model, validate=False, **options).payload
    validate_payload(first, provider)  # warms the item cache with valid items
    if new_turn:
        session.user("one more")
    body = copy.deepcopy(build_request(session, provider, model, validate=False, **options).payload)
    for index, add_key, value in picks:  # mutate old and new items alike
        containers = _containers(body, [])
        target = containers[index % len(containers)]
        if isinstance(target, dict) and target:
            key = "unexpected_key" if add_key else sorted(target)[index % len(target)]
            target[key] = copy.deepcopy(value)
        elif isinstance(target, list) and target:
            target[index % len(target)] = copy.deepcopy(value)
    assert _outcome(body, provider, True) == _outcome(body, provider, False)


def test_numbers_must_match_in_type_to_be_reused() -> None:
    body = {
        "model": "claude-opus-4-8",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "t", "input_schema": {"type": "object"}, "strict": True}],
    }
    validate_payload(body, "anthropic")
    again = copy.deepcopy(body)
    again["tools"][0]["strict"] = 1  # equal to True in Python, an int to the validator
    assert _outcome(again, "anthropic", True) == _outcome(again, "anthropic", False)


def test_a_kimi_carrier_is_known_valid_only_while_it_cannot_change() -> None:
    session = _session()
    session.user("one more")
    body = build_request(session, "kimi", "kimi-k2.5").payload  # validated: carriers remembered
    carriers = [m for m in body["messages"] if m.get("role") == "system" and "tools" in m]
    assert carriers and all(type(c) is FrozenDict for c in carriers[:-1])
    validate_payload(body, "kimi")  # the frozen carriers are found valid by identity
    edited = copy.deepcopy(body)  # plain copies: each carrier is looked at again
    validate_payload(edited, "kimi")
    edited["messages"][body["messages"].index(carriers[0])]["tools"][0]["type"] = "tool"
    problem = _outcome(edited, "kimi", True)
    assert problem is not None and "messages." in problem
    assert problem == _outcome(edited, "kimi", False)
