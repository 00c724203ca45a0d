"""Reported cache figures: what the engine said, and "unknown" where it said nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.cache import analyze, reported_usage
from dtl_notebook.notebook.display import report_html
from dtl_notebook.wire.reply import ResponseFormatError
from tests.support import scenario


def test_engine_without_prompt_tokens_details_reports_unknown() -> None:
    """vLLM and SGLang send only prompt_tokens when nothing was cached."""
    usage = reported_usage({"usage": {"prompt_tokens": 812, "completion_tokens": 9}}, "openai-chat")
    assert usage is not None
    assert (usage.cached, usage.written, usage.uncached, usage.input) == (None, None, None, 812)
    assert usage.figures() == "unknown/unknown/unknown"
    null = reported_usage(
        {"usage": {"prompt_tokens": 5, "prompt_tokens_details": None}}, "openai-chat"
    )
    assert null is not None and null.cached is None


def test_responses_without_details_is_unknown_and_zero_is_zero() -> None:
    bare = reported_usage({"usage": {"input_tokens": 40}}, "openai-responses")
    assert bare is not None and bare.cached is None
    zero = reported_usage(
        {"usage": {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 0}}},
        "openai-responses",
    )
    assert zero is not None and (zero.cached, zero.written, zero.uncached) == (0, 0, 40)


def test_details_that_are_not_an_object_are_named() -> None:
    with pytest.raises(ResponseFormatError, match=r"usage\.prompt_tokens_details"):
        reported_usage({"usage": {"prompt_tokens": 5, "prompt_tokens_details": 3}}, "openai-chat")


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic", "openai-responses", "kimi"])
def test_usage_that_is_not_an_object_is_named(provider: str) -> None:
    with pytest.raises(ResponseFormatError, match=r"at usage: expected an object, got 'lots'"):
        reported_usage({"usage": "lots"}, provider)
    assert reported_usage({"usage": None}, provider) is None  # not reported at all


def test_kimi_cache_hits_at_the_top_of_usage_are_read() -> None:
    """Moonshot reports `usage.cached_tokens` beside prompt_tokens (as its chunks do in
    `choices[0].usage` when streaming); a `prompt_tokens_details` figure, where sent, wins."""
    top = {"prompt_tokens": 1336, "completion_tokens": 31, "cached_tokens": 1280}
    usage = reported_usage({"usage": top}, "kimi")
    assert usage is not None
    assert (usage.cached, usage.written, usage.uncached, usage.input) == (1280, 0, 56, 1336)
    both = {**top, "prompt_tokens_details": {"cached_tokens": 1024}}
    assert reported_usage({"usage": both}, "kimi").cached == 1024  # type: ignore[union-attr]


def test_unknown_cached_is_no_disagreement_and_shows_unknown() -> None:
    reqs = scenario.append_only_requests("openai-chat", "gpt-4.1")[:2]
    silent = {"usage": {"prompt_tokens": 3000}}
    report = analyze(reqs, responses=[silent, silent])
    assert all(e.reported is not None and e.reported.cached is None for e in report)
    assert all(e.disagreement is None for e in report)
    assert "unknown / unknown" in report_html(report)


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_known_figures_add_up_to_the_input(total: int, cached: int) -> None:
    cached = min(cached, total)
    usage = reported_usage(
        {"usage": {"prompt_tokens": total, "prompt_tokens_details": {"cached_tokens": cached}}},
        "openai-chat",
    )
    assert usage is not None and usage.cached == cached
    assert usage.cached + (usage.written or 0) + (usage.uncached or 0) == usage.input == total
