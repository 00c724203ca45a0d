"""Scans that resume over what a request shares with an earlier one give the verdict and the
rendering of a scan from scratch: the Responses tool rules over a shared frozen catalog, and
the model context and validation of a body parsed from bytes next to the one built here."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool
from dtl_notebook._reuse import registry
from dtl_notebook._reuse.frozen import built_here, freeze
from dtl_notebook.context.model import model_context
from dtl_notebook.wire import WireValidationError, build_request, validate_payload


def _function(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": f"does {name}",
        "parameters": {"type": "object", "properties": {}},
        "strict": False,
    }


def _responses(tools: list[Any]) -> dict[str, Any]:
    return {"model": "gpt-5.4", "input": "hi", "tools": tools}


def _verdict(payload: dict[str, Any]) -> str | None:
    try:
        validate_payload(payload, "openai-responses")
    except WireValidationError as error:
        return str(error)
    return None


def test_a_duplicate_after_a_shared_frozen_catalog_names_both_places() -> None:
    catalog = freeze([_function(f"tool_{i}") for i in range(200)])
    assert _verdict(_responses(list(catalog))) is None  # accepted: its scan is kept
    error = _verdict(_responses([*catalog, _function("tool_37")]))
    assert error is not None
    assert "duplicate tool name 'tool_37'" in error and "tools.200" in error
    assert "first at tools.37" in error


def test_a_duplicate_inside_a_namespace_after_a_shared_catalog() -> None:
    catalog = freeze([_function(f"tool_{i}") for i in range(50)])
    _verdict(_responses(list(catalog)))
    namespace = {
        "type": "namespace",
        "name": "crm",
        "description": "CRM",
        "tools": [_function("find"), _function("find")],
    }
    error = _verdict(_responses([*catalog, namespace]))
    assert error is not None and "tools.50.tools.1" in error and "namespace" in error


NAMES = st.lists(st.sampled_from([f"t{i}" for i in range(12)]), min_size=1, max_size=12)


@settings(max_examples=60)
@given(NAMES, NAMES)
def test_resumed_tool_rules_give_the_verdict_of_a_fresh_scan(
    first: list[str], extra: list[str]
) -> None:
    unique = list(dict.fromkeys(first))
    shared = freeze([_function(n) for n in unique])
    _verdict(_responses(list(shared)))
    payload = _responses([*shared, *(_function(n) for n in extra)])
    resumed = _verdict(payload)
    with registry.disabled():
        fresh = _verdict(json.loads(json.dumps(payload)))
    assert resumed == fresh


def _session() -> Session:
    tools = [
        Tool(
            f"lookup_{i}",
            description=f"looks up record kind {i}",
            parameters={"type": "object", "properties": {"id": {"type": "string"}}},
        )
        for i in range(30)
    ]
    return Session(system="You help.", tools=tools, active=[t.name for t in tools[:5]])


@pytest.mark.parametrize(
    ("provider", "model", "options"),
    [
        ("anthropic", "claude-opus-4-8", {}),
        ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
        ("openai-responses", "gpt-5.4", {"search": "hosted"}),
        ("openai-chat", "gpt-5.4", {}),
    ],
)
def test_built_and_parsed_bodies_render_as_from_scratch_turn_after_turn(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    session = _session()
    for turn in range(4):
        session.user(f"question {turn}")
        request = build_request(session, provider, model, **options)
        parsed = json.loads(json.dumps(request.payload))
        assert not built_here(parsed)
        built_context = model_context(request)  # the agent's side, then the server's
        parsed_context = model_context(parsed, provider, model)
        validate_payload(parsed, provider)
        with registry.disabled():
            fresh = model_context(json.loads(json.dumps(request.payload)), provider, model)
        assert built_context.segments == fresh.segments
        assert parsed_context.segments == fresh.segments
        session.assistant(f"answer {turn}")


@pytest.mark.parametrize("strict", [1, "yes", None, True])
def test_a_parsed_body_that_differs_in_one_value_gets_the_verdict_of_a_fresh_check(
    strict: Any,
) -> None:
    session = _session()
    session.user("hi")
    request = build_request(session, "openai-responses", "gpt-5.4")
    validate_payload(request.payload, "openai-responses")
    validate_payload(json.loads(json.dumps(request.payload)), "openai-responses")
    changed = json.loads(json.dumps(request.payload))
    changed["tools"][0]["strict"] = strict
    resumed = _verdict(changed)
    with registry.disabled():
        assert resumed == _verdict(json.loads(json.dumps(changed)))
