"""Tokens a call generated enter the cache with its prefix (issue 32): in a Responses tool loop
with reasoning, the first call's reasoning and function call are part of the prefix the
follow-up reads, even where the first request alone was too short to be cached. The rule and
its source are `dtl_notebook/cache/data/generated.json`; the shape is the measured example
(a follow-up after a 124-token first request reported 2,048 cached of 2,087). The real
Responses recordings in ../shared/fixtures/real/claude-tap report no cached tokens, so the
rule is tested on this shape alone.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from dtl_notebook.cache.analyze import analyze
from dtl_notebook.cache.prefix_rules import cache_rule, generated_items

JSON = dict[str, Any]
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city today",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
# ~1,900 tokens of reasoning, as its encrypted size counts it
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "A" * 10_200}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city": "Paris"}',
}


def first() -> JSON:
    return {
        "model": "gpt-5",
        "instructions": "Answer with the weather tool.",
        "input": [{"role": "user", "content": "What is the weather in Paris today?"}],
        "tools": TOOLS,
    }


def follow_up(output: str = '{"sky": "clear", "celsius": 21}') -> JSON:
    body = first()
    result = {"type": "function_call_output", "call_id": "call_1", "output": output}
    body["input"] = [*body["input"], REASONING, CALL, result]
    return body


def test_the_first_calls_reasoning_and_call_are_read_by_the_follow_up() -> None:
    report = analyze([first(), follow_up()], "openai-responses")
    head, follow = report.entries
    assert head.total_tokens < 1024 and head.cached_tokens == 0  # too short to be cached alone
    # everything up to the tool output (input.3): the first request and what its call made
    generated = sum(s.tokens for s in follow.context.segments if not s.source.startswith("input.3"))
    assert follow.cached_tokens == generated - generated % 128  # in 128-token steps
    assert follow.cached_tokens >= 1024


def test_a_follow_up_alone_reads_nothing_of_a_call_never_seen() -> None:
    assert analyze([follow_up()], "openai-responses").entries[0].cached_tokens == 0


def test_a_changed_first_request_breaks_the_generated_prefix_too() -> None:
    changed = follow_up()
    changed["input"][0]["content"] = "What is the weather in Lyon today?"
    report = analyze([first(), changed], "openai-responses")
    assert report.entries[1].cached_tokens == 0


@pytest.mark.parametrize("provider", ["openai-responses", "openai-chat", "anthropic", "kimi"])
def test_each_provider_rule_names_its_source(provider: str) -> None:
    text = resources.files("dtl_notebook.cache").joinpath("data/generated.json").read_text()
    row = json.loads(text)["providers"][provider]
    assert row["note"]
    assert row["source"].startswith("https://") or not row["caches_output"]
    rule = cache_rule(provider, "gpt-5" if provider.startswith("openai") else "kimi-k2")
    if provider != "anthropic":
        assert rule.output_items == generated_items(provider)
    assert bool(generated_items(provider)) == row["caches_output"]


def test_a_call_without_reasoning_is_predicted_as_before() -> None:
    plain = follow_up()
    plain["input"].remove(REASONING)
    report = analyze([first(), plain], "openai-responses")
    assert report.entries[1].cached_tokens == 0  # the 60-token request alone: below the minimum
