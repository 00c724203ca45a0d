"""The provider table's columns (wire/data/providers.json) and what reads the behaviour ones."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from importlib.resources import files
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.cache.capture_request import detect_provider
from dtl_notebook.cache.reported import Usage, reported_usage
from dtl_notebook.cache.retention import retention
from dtl_notebook.live.keep_warmer import refresh_request
from dtl_notebook.wire.providers import (
    PROVIDERS,
    SPECS,
    ProviderSpec,
    UnknownProviderError,
    marked_provider,
    spec,
)
from tests.support import scenario

_ROWS = json.loads(files("dtl_notebook.wire").joinpath("data/providers.json").read_text())


def test_every_provider_has_one_row_with_every_column_and_no_other() -> None:
    rows = {name: row for name, row in _ROWS.items() if not name.startswith("_")}
    assert set(rows) == set(SPECS)
    columns = {f.name for f in fields(ProviderSpec)} - {"name"}
    for name, row in rows.items():
        assert set(row) == columns, name
    described = set(_ROWS["_doc"].split())
    assert {f"{column}:" for column in columns} <= described, "a column left undescribed"


@pytest.mark.parametrize("name", PROVIDERS)
def test_each_row_holds_values_its_readers_take(name: str) -> None:
    row = spec(name)
    assert row.cache_marks in ("breakpoints", "automatic")
    assert row.diagnosis in (None, "message-diagnostics", "prompt-cache-diagnostics")
    assert (row.diagnosis is None) == (row.diagnosis_reasons is None)
    assert (row.usage_split is None) != (row.usage_details is None)
    assert row.key_header in ("x-api-key", "bearer")
    field, least = row.smallest_answer
    assert field.startswith("max_") and least >= 1
    assert retention(name).provider == row.retention
    assert row.harmony in (None, "responses", "chat")
    assert row.shape in ("messages", "responses", "chat")
    assert row.fit in (None, "claude", "openai")
    native = bool(SPECS[name].native_searches)
    assert (row.native_growth_effect is not None) == native


def test_an_unknown_provider_is_refused_by_name() -> None:
    with pytest.raises(UnknownProviderError, match="'gemini'"):
        spec("gemini")


def test_the_marks_ttl_is_the_marking_providers() -> None:
    assert marked_provider().marks_breakpoints
    assert [name for name in PROVIDERS if spec(name).marks_breakpoints] == [marked_provider().name]


_BLOCK = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
_CARRIER = {"role": "system", "tools": [{"type": "function", "function": {"name": "f"}}]}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"model": "gpt-5.4", "input": "hi"}, "openai-responses"),
        ({"model": "gpt-5.4", "instructions": "be brief"}, "openai-responses"),
        ({"model": "m", "max_tokens": 9, "system": "s", "messages": []}, "anthropic"),
        ({"model": "m", "max_tokens": 9, "messages": _BLOCK}, "anthropic"),
        ({"model": "claude-sonnet-4-6", "messages": []}, "anthropic"),
        ({"model": "kimi-k2", "messages": [_CARRIER]}, "kimi"),
        ({"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}, "openai-chat"),
        # the lower rank wins where a body shows two signs
        ({"input": "hi", "max_tokens": 9, "system": "s"}, "openai-responses"),
        ({"max_tokens": 9, "messages": [*_BLOCK, _CARRIER]}, "anthropic"),
        ({"model": "claude-x", "messages": [_CARRIER]}, "kimi"),
        # a sign missing one condition is not shown: blocks without max_tokens
        ({"model": "gpt-4.1", "messages": _BLOCK}, "openai-chat"),
    ],
)
def test_a_body_without_its_url_is_told_by_the_tables_signs(
    body: dict[str, Any], expected: str
) -> None:
    assert detect_provider(body) == expected


def test_the_url_wins_over_the_body() -> None:
    body = {"model": "claude-x", "max_tokens": 9, "system": "s"}
    assert detect_provider(body, "https://api.moonshot.ai/v1/chat/completions") == "kimi"


_KEYS = st.sampled_from(["input", "instructions", "max_tokens", "system", "messages", "model"])


@given(st.dictionaries(_KEYS, st.sampled_from(["x", "claude-1", 1, [], [_CARRIER], _BLOCK])))
def test_every_body_is_given_one_known_provider(body: dict[str, Any]) -> None:
    assert detect_provider(body) in PROVIDERS


def test_a_reply_is_read_by_its_providers_usage_columns() -> None:
    split = {"cache_read_input_tokens": 70, "cache_creation_input_tokens": 20, "input_tokens": 10}
    assert reported_usage({"usage": split}, "anthropic") == Usage(70, 20, 10, 100)
    chat = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 40}}
    assert reported_usage({"usage": chat}, "openai-chat") == Usage(40, 0, 60, 100)
    # another API's usage shape in the reply is read as that API's
    responses = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40}}
    assert reported_usage({"usage": responses}, "openai-chat") == Usage(40, 0, 60, 100)


_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai-responses": "gpt-5.4",
    "openai-chat": "gpt-4.1",
    "kimi": "kimi-k2",
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_keep_warm_refresh_asks_for_the_tables_smallest_answer(provider: str) -> None:
    request = scenario.append_only_requests(provider, _MODELS[provider])[0]
    field, least = spec(provider).smallest_answer
    assert refresh_request(request).payload[field] == least
    older = spec(provider).older_answer_field
    if older is not None:  # a body that names the field the older way keeps that name
        payload = {k: v for k, v in request.plain().items() if k != field}
        renamed = replace(request, payload={**payload, older: 500})
        refreshed = refresh_request(renamed).payload
        assert refreshed[older] == least and field not in refreshed
