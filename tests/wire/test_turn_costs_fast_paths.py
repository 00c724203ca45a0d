"""The fast paths behind "a turn costs what it adds" give the results of the slow ones.

BM25 ranking with numpy (only the top candidates sorted), `Tool.spec()` without re-running
the JSON Schema meta-check, and the one-pass Anthropic tool rules (same first error reported).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook import Tool
from dtl_notebook.agent.errors import ToolDefinitionError
from dtl_notebook.agent.search import BM25Engine, tokenize, top_positive
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.wire import WireValidationError, validate_payload
from dtl_notebook.wire.validate import ALL_DEFERRED_MESSAGE


def _reference_ranking(scores: list[float], limit: int) -> list[int]:
    """Every positive score sorted best first, ties by position: the plain definition."""
    return sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))[:limit]


SCORES = st.lists(
    st.one_of(st.just(0.0), st.sampled_from([0.5, 1.25, 2.0]), st.floats(0, 10, width=32)),
    max_size=60,
)


@given(SCORES, st.integers(1, 12))
def test_top_positive_is_the_full_sort(scores: list[float], limit: int) -> None:
    array = np.array(scores, dtype=np.float32)  # bm25s scores are float32
    assert top_positive(array, limit) == _reference_ranking(array.tolist(), limit)


def test_bm25_search_ranks_like_a_full_sort_over_its_scores() -> None:
    words = "order eta shipping invoice refund weather flight hotel".split()
    tools = [
        Tool(f"tool_{i}", description=f"{words[i % 8]} {words[(i * 3) % 8]} {words[i % 5]}")
        for i in range(40)
    ]
    engine = BM25Engine()
    engine.index([t.spec() for t in tools])
    assert engine._bm25 is not None
    for query in ("order eta", "shipping", "weather hotel refund", "invoice order"):
        scores = engine._bm25.get_scores(tokenize(query)).tolist()
        expected = [tools[i].name for i in _reference_ranking(scores, 5)]
        assert engine.search(query, 5) == expected
        assert expected  # every query word is in some document


def test_spec_is_a_validated_equal_copy_and_the_schema_is_read_only() -> None:
    parameters: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}}
    tool = Tool("edit_me", description="d", parameters=parameters, execute=lambda x: x)
    spec = tool.spec()
    assert type(spec) is ToolSpec
    assert spec == ToolSpec("edit_me", description="d", parameters=parameters)
    assert spec.model_fields_set == set(ToolSpec.model_fields)
    with pytest.raises(TypeError, match="read-only"):
        tool.parameters["properties"]["y"] = {"type": "string"}  # an in-place edit
    parameters["properties"]["y"] = {"type": "string"}  # the caller's dict was copied
    assert "y" not in tool.parameters["properties"] and spec.parameters is tool.parameters
    edited = Tool("edit_me", description="d", parameters=parameters, execute=lambda x, y: x)
    assert edited.spec() == edited and edited != spec


def test_a_bad_schema_is_still_rejected_when_the_tool_is_built() -> None:
    with pytest.raises(ToolDefinitionError, match="parameters"):
        Tool("bad", parameters={"type": "object", "properties": {"x": {"type": 5}}})


def _tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "input_schema": {"type": "object"}, **extra}


def _first_problem(tools: list[dict[str, Any]]) -> str:
    payload = {
        "model": "claude-opus-4-8",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": tools,
    }
    with pytest.raises(WireValidationError) as caught:
        validate_payload(payload, "anthropic")
    return str(caught.value)


def test_anthropic_tool_rules_report_in_the_documented_order() -> None:
    marked = {"defer_loading": True, "cache_control": {"type": "ephemeral"}}
    deferred = {"defer_loading": True}
    # a deferred breakpoint, all deferred and a duplicate at once: the duplicate comes first
    problem = _first_problem([_tool("a", **marked), _tool("b", **deferred), _tool("a", **deferred)])
    assert (
        "duplicate tool name 'a'" in problem
        and "at tools.2:" in problem
        and "first at tools.0" in problem
    )
    # all deferred outranks the breakpoint on a deferred tool
    assert ALL_DEFERRED_MESSAGE in _first_problem([_tool("a", **deferred), _tool("b", **marked)])
    problem = _first_problem([_tool("a"), _tool("b", **deferred), _tool("c", **marked)])
    assert (
        "defer_loading=true cannot have cache_control" in problem
        and "at tools.2.cache_control:" in problem
    )
