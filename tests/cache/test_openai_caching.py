"""OpenAI's automatic caching as its prompt-caching guide states it: from 1,024 tokens in
128-token steps, routed by `prompt_cache_key`, and the provider's own leading prompt of hosted
tools shared across conversations (platform.openai.com/docs/guides/prompt-caching)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.cache import CacheAnalyzer, analyze, cache_rule
from dtl_notebook.cache.prefix_rules import cache_namespace

SYSTEM = "Answer questions about the shipping policy, citing the clause you rely on. " * 120


def conversation(question: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-5.4",
        "instructions": SYSTEM,
        "input": [{"role": "user", "content": question}],
        **extra,
    }


@given(st.integers(0, 200_000))
def test_cached_tokens_are_1024_then_steps_of_128(tokens: int) -> None:
    rule = cache_rule("openai-responses", "gpt-4.1")
    cached = rule.floor(tokens)
    assert cached <= tokens and cached % 128 == 0
    assert cached == 0 if tokens < 1024 else tokens - cached < 128


def test_a_prefix_is_read_across_conversations_under_the_same_routing_key() -> None:
    """Two conversations sharing the instructions: the second reads them (same key)."""
    first, second = conversation("Can I return shoes?"), conversation("Do you ship to Oslo?")
    report = analyze([first, second], provider="openai-responses")
    assert report[1].cached_tokens >= 1024
    keyed = analyze(
        [{**first, "prompt_cache_key": "shop"}, {**second, "prompt_cache_key": "shop"}],
        provider="openai-responses",
    )
    assert keyed[1].cached_tokens == report[1].cached_tokens


def test_a_different_prompt_cache_key_routes_elsewhere() -> None:
    first = {**conversation("Can I return shoes?"), "prompt_cache_key": "user-1"}
    second = {**conversation("Do you ship to Oslo?"), "prompt_cache_key": "user-2"}
    analyzer = CacheAnalyzer("openai-responses")
    analyzer.add(first)
    assert analyzer.add(second).cached_tokens == 0
    # back under the first key: what it wrote is still there
    again = {**conversation("And sandals?"), "prompt_cache_key": "user-1"}
    assert analyzer.add(again).cached_tokens >= 1024


def test_compatible_engines_do_not_route_by_key() -> None:
    rule = cache_rule("openai-chat", "served-model", cache_granularity=16)
    assert not rule.routes_by_key and not rule.shared_hidden
    assert cache_namespace(rule, {"prompt_cache_key": "x"}) == ""
    assert cache_rule("anthropic", "claude-sonnet-4-5").routes_by_key is False


def test_hosted_tool_prompt_is_named_where_its_size_is_not_published() -> None:
    """A hidden prompt every request with web search shares is read from the cache even on a
    conversation's first request; its size is not published, so the entry names it and a
    reported read above the prediction says why."""
    body = {
        **conversation("Latest news?"),
        "instructions": "Be brief.",
        "tools": [{"type": "web_search"}],
    }
    reply = {
        "usage": {
            "input_tokens": 4200,
            "input_tokens_details": {"cached_tokens": 3968, "cache_write_tokens": 0},
        }
    }
    entry = analyze([body], provider="openai-responses", responses=[reply])[0]
    assert entry.shared_unpredicted == ("web_search",)
    assert entry.below_minimum is not None and entry.cache_break is None  # a fact, not a break
    assert entry.disagreement is not None and "web_search" in entry.disagreement
    client = {**body, "tools": [{"type": "tool_search", "execution": "client"}]}
    assert analyze([client], provider="openai-responses")[0].shared_unpredicted == ()


def test_a_request_schema_is_not_a_shared_provider_prompt() -> None:
    """A structured-output schema ahead of the tools is the request's own: a first request
    with a large one reads nothing from the cache."""
    properties = {f"field_{i}": {"type": "string", "description": "x " * 20} for i in range(60)}
    schema = {"type": "object", "properties": properties}
    body = {
        **conversation("Fill the form."),
        "instructions": "Be brief.",
        "text": {"format": {"type": "json_schema", "name": "form", "schema": schema}},
    }
    entry = analyze([body], provider="openai-responses")[0]
    assert entry.total_tokens > 1024 and entry.cached_tokens == 0
