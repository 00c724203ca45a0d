"""The agent loop asks the provider why its cache missed, against the previous response."""

from __future__ import annotations

import pytest

from dtl_notebook import Session
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent


@pytest.mark.parametrize(
    ("provider", "model", "field", "key"),
    [
        ("anthropic", "claude-sonnet-4-6", "diagnostics", "previous_message_id"),
        ("openai-responses", "gpt-5.6", "prompt_cache_options", "comparison_response_id"),
    ],
)
def test_each_request_names_the_previous_response(
    provider: str, model: str, field: str, key: str
) -> None:
    agent = Agent(
        Session(tools=demo_catalog(), active=["tool_search"]),
        provider=provider,
        model=model,
        diagnostics=True,
    )
    agent.run("What's the weather in Paris?")
    ids = [step.response["id"] for step in agent.steps]
    sent = [step.request.payload.get(field, {}).get(key) for step in agent.steps[1:]]
    assert sent == ids[:-1]
    assert [step.cache.diagnosis_agreement for step in agent.steps[1:]] == ["agree"] * len(sent)


def test_a_provider_switch_starts_the_comparison_afresh() -> None:
    agent = Agent(
        Session(tools=demo_catalog(), active=["tool_search"]),
        provider="openai-responses",
        model="gpt-5.6",
        diagnostics=True,
    )
    agent.run("What's the weather in Paris?")
    agent.switch("anthropic", "claude-sonnet-4-6", diagnostics=True)
    agent.run("And in Tokyo?")
    first = next(step for step in agent.steps if step.request.provider == "anthropic")
    assert first.request.payload["diagnostics"] == {"previous_message_id": None}
