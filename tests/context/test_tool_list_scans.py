"""A `tools` list of a few items made anew each request before a shared read-only catalog (what
native and hosted search send) is read by scans that resume over the catalog: the tool rules,
the beta names, the kinds of tools, the breakpoints and the shape check give what a cold read
of the whole list gives, wherever a duplicate, a deferred breakpoint or a beta tool sits."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook._reuse.frozen import freeze, thaw
from dtl_notebook.context.request_kinds import request_kind, tool_kinds
from dtl_notebook.wire.betas import body_features
from dtl_notebook.wire.rules import tool_reference
from dtl_notebook.wire.validate import WireValidationError, validate_payload

SCHEMA = {"type": "object"}
MESSAGES = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "t0", "input": {}}]},
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "a", "content": [tool_reference("t3")]}],
    },
]


def _tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "input_schema": SCHEMA, **extra}


POOL: list[Any] = [
    _tool("t0"),
    _tool("t1", defer_loading=True),
    _tool("t2", defer_loading=True),
    _tool("t3", defer_loading=True),
    _tool("t1"),  # a second t1
    _tool("t4", defer_loading=True, cache_control={"type": "ephemeral"}),  # not allowed
    _tool("t5", cache_control={"type": "ephemeral", "ttl": "1h"}),
    {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    {"type": "mcp_toolset", "mcp_server_name": "s"},  # a beta tool
    "not a tool",
]
FILLER = [freeze(_tool(f"f{i}", defer_loading=True)) for i in range(70)]  # a long catalog
FROZEN_POOL = [freeze(item) if isinstance(item, dict) else item for item in POOL]
picks = st.lists(st.integers(0, len(POOL) - 1), max_size=6)


def _verdicts(tools: list[Any]) -> tuple[Any, ...]:
    payload = {"model": "claude-opus-4-8", "max_tokens": 16, "tools": tools, "messages": MESSAGES}
    try:
        validate_payload(payload, "anthropic")
        error = None
    except WireValidationError as exc:
        error = (exc.path, exc.reason)
    return error, body_features(payload), tool_kinds(tools), request_kind("anthropic", payload)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(picks, picks, st.booleans()), min_size=1, max_size=5))
def test_a_made_head_and_a_shared_catalog_read_as_a_cold_pass_does(
    requests: list[tuple[list[int], list[int], bool]],
) -> None:
    catalog: list[Any] = []
    for head, grown, restart in requests:
        # the catalog only grows (a registry's items), or starts over (another registry)
        catalog = (
            [*FILLER, *(FROZEN_POOL[i] for i in grown)]
            if restart
            else [*catalog, *(FROZEN_POOL[i] for i in grown)]
        )
        tools = [dict(POOL[i]) if isinstance(POOL[i], dict) else POOL[i] for i in head] + catalog
        with disabled():  # every item plain: read in one pass, nothing shared
            cold = _verdicts([thaw(t) for t in tools])
        assert _verdicts(tools) == cold
        assert _verdicts(list(tools)) == cold  # again, from the state kept this time


def test_a_duplicate_across_the_made_head_and_the_catalog_is_named_at_its_place() -> None:
    catalog = [freeze(_tool(f"c{i}", defer_loading=True)) for i in range(100)]
    tools = [_tool("t0"), _tool("c7"), *catalog]
    assert _verdicts(tools)[0] == ("tools.9", "duplicate tool name 'c7' (first at tools.1)")
    tools = [_tool("t0"), _tool("c7"), _tool("t0"), *catalog]  # an earlier duplicate wins
    assert _verdicts(tools)[0] == ("tools.2", "duplicate tool name 't0' (first at tools.0)")
    marked = [*catalog[:50], freeze({**catalog[50], "cache_control": {"type": "ephemeral"}})]
    assert _verdicts([_tool("t0"), *marked])[0][0] == "tools.51.cache_control"
    assert _verdicts(catalog)[0][0] == "tools"  # all deferred
