from __future__ import annotations

import itertools

import pytest

from dtl_notebook.agent import ToolResultMessage
from dtl_notebook.cache import cache_rule
from dtl_notebook.demo import DEMO_MODELS, recording_path, replay_demo


@pytest.mark.parametrize("provider", list(DEMO_MODELS))
def test_shipped_recording_replays_offline(provider: str) -> None:
    assert recording_path(provider).is_file()
    agent = replay_demo(provider)
    answers = [s.reply.message.text for s in agent.steps if not s.reply.message.tool_calls]
    assert len(answers) == 2
    assert "order_42" in (answers[0] or "") and "Paris" in (answers[1] or "")
    markers = [
        m.added_tool_names
        for m in agent.session.messages
        if isinstance(m, ToolResultMessage) and m.added_tool_names
    ]
    assert [m[0] for m in markers] == ["get_shipping_eta", "get_current_weather"]
    assert len(markers[0]) == 5  # tool_search's default limit
    text = recording_path(provider).read_text()
    assert "emulator-no-key" not in text


def test_cache_survives_loading_except_on_chat() -> None:
    for provider in ("anthropic", "openai-responses", "kimi"):
        steps = replay_demo(provider).steps
        minimum = cache_rule(provider, DEMO_MODELS[provider]).min_tokens
        for previous, step in itertools.pairwise(steps):
            brk = step.cache.cache_break
            if previous.context.total_tokens < minimum:  # nothing was cacheable yet
                assert brk is None, (provider, brk)  # below the minimum is not a break
                continue
            assert brk is None, (provider, step.cache.index, brk)
            assert step.cache.cached_tokens > 0, (provider, step.cache.index)
    chat = replay_demo("openai-chat").steps
    assert [s.cache.cache_break.cause for s in chat if s.cache.cache_break] == [
        "tool_set_changed",
        "tool_set_changed",
    ]
