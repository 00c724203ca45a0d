from __future__ import annotations

import pytest

from dtl_notebook.context.model import KINDS, model_context
from tests.support.scenario import append_only_requests

PROVIDERS = [
    ("anthropic", "claude-sonnet-4-6"),
    ("openai-responses", "gpt-5.4"),
    ("openai-chat", "gpt-4.1"),
    ("kimi", "kimi-k2"),
]


def kinds(ctx) -> list[str]:
    return [s.kind for s in ctx.segments]


def test_anthropic_order_and_deferred_tool_expanded_at_reference() -> None:
    reqs = append_only_requests("anthropic", "claude-sonnet-4-6")
    ctx = model_context(reqs[2])
    order = kinds(ctx)
    assert order[0] == "hidden"
    assert order.index("tool_schema") < order.index("system") < order.index("message")
    labels = [s.label for s in ctx.of_kind("tool_schema")]
    assert labels == ["tool_search", "read_file"]  # get_weather is deferred: not up front
    loaded = ctx.of_kind("loaded_schema")
    assert [s.label for s in loaded] == ["get_weather"]
    assert loaded[0].load_point == reqs[2].load_points[0].path
    assert loaded[0].source.endswith(".content.0")
    assert '"defer_loading"' not in loaded[0].text
    # the expansion sits between the search call and the get_weather call
    pos = ctx.segments.index(loaded[0])
    later = [s.text for s in ctx.segments[pos + 1 :]]
    assert any('"tool_use":"get_weather"' in t for t in later)
    assert ctx.exact_tokens is False and "estimate" in ctx.tokenizer


def test_anthropic_hidden_prompt_published_size_for_old_models() -> None:
    payload = {
        "model": "claude-3-opus-20240229",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "t", "input_schema": {"type": "object"}}],
    }
    ctx = model_context(payload, provider="anthropic")
    assert ctx.segments[0].kind == "hidden" and ctx.segments[0].tokens == 530
    payload["tool_choice"] = {"type": "any"}
    assert model_context(payload, provider="anthropic").segments[0].tokens == 281


def test_responses_loaded_schema_at_additional_tools_item() -> None:
    reqs = append_only_requests("openai-responses", "gpt-5.4")
    ctx = model_context(reqs[2])
    loaded = ctx.of_kind("loaded_schema")
    assert [s.label for s in loaded] == ["get_weather"]
    assert loaded[0].source == "input.4.tools.0"
    assert loaded[0].load_point == "input.4"
    assert ctx.exact_tokens and ctx.tokenizer.startswith("o200k_base")


def test_responses_hosted_deferred_functions_are_summaries() -> None:
    payload = {
        "model": "gpt-5.4",
        "input": "hi",
        "tools": [
            {
                "type": "namespace",
                "name": "crm",
                "description": "CRM tools.",
                "tools": [
                    {
                        "type": "function",
                        "name": "list_open_orders",
                        "description": "List orders.",
                        "defer_loading": True,
                        "parameters": {"type": "object"},
                    }
                ],
            },
            {
                "type": "function",
                "name": "lookup",
                "description": "Look up.",
                "defer_loading": True,
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                "strict": None,
            },
            {"type": "tool_search"},
        ],
    }
    ctx = model_context(payload, provider="openai-responses")
    summaries = ctx.of_kind("tool_summary")
    assert [s.label for s in summaries] == ["crm", "lookup"]
    assert "list_open_orders" not in "".join(s.text for s in ctx.segments)
    assert '"properties"' not in summaries[1].text


def test_kimi_tools_in_system_message_are_loaded_schemas() -> None:
    reqs = append_only_requests("kimi", "kimi-k2")
    ctx = model_context(reqs[2])
    loaded = ctx.of_kind("loaded_schema")
    assert [s.label for s in loaded] == ["get_weather"]
    assert loaded[0].load_point == reqs[2].load_points[0].path


@pytest.mark.parametrize(("provider", "model"), PROVIDERS)
def test_segments_cover_the_request(provider: str, model: str) -> None:
    req = append_only_requests(provider, model)[-1]
    ctx = model_context(req)
    assert ctx.total_tokens == sum(s.tokens for s in ctx.segments) > 1000
    assert {s.kind for s in ctx.segments} <= set(KINDS)
    assert any("order_42" in s.text for s in ctx.segments)
    # sources are JSON paths into the payload
    for seg in ctx.segments:
        node = req.payload
        for part in seg.source.split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]


def test_raw_payload_needs_provider() -> None:
    with pytest.raises(ValueError, match="provider"):
        model_context({"model": "x", "messages": []})
    with pytest.raises(ValueError, match="unknown provider"):
        model_context({"model": "x"}, provider="nope")
