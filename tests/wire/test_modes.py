"""Providers, search modes and load modes are written once (wire/modes.py): every per-provider
table covers exactly the providers, and the one check of how the options combine."""

from __future__ import annotations

from typing import get_args

import pytest

from dtl_notebook.agent.search import ENGINES as ENGINE_CLASSES
from dtl_notebook.agent.search import LOCAL_ENGINES
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.transport import KEY_VARIABLES
from dtl_notebook.wire import anthropic
from dtl_notebook.wire.modes import (
    ENGINES,
    LOAD_MODE_PROVIDERS,
    LOAD_MODES,
    NATIVE_SEARCH,
    PROVIDERS,
    SEARCH_MODES,
    AnthropicSearch,
    ModeConflictError,
    Provider,
    check_modes,
    search_mode,
)
from dtl_notebook.wire.validate import SEMANTIC_CHECKS


def test_every_per_provider_table_covers_the_providers() -> None:
    assert get_args(Provider) == PROVIDERS
    for table in (KEY_VARIABLES, DEMO_MODELS, SEMANTIC_CHECKS, NATIVE_SEARCH):
        assert set(table) == set(PROVIDERS), table


def test_search_names_come_from_one_place() -> None:
    assert set(anthropic.NATIVE_SEARCH) == set(get_args(AnthropicSearch))
    assert tuple(ENGINE_CLASSES) == LOCAL_ENGINES
    natives = [e for p in PROVIDERS for e in NATIVE_SEARCH[p]]
    assert (*LOCAL_ENGINES, *natives) == ENGINES
    assert ("client", *natives) == SEARCH_MODES
    assert [search_mode(e) for e in ENGINES] == [None] * len(LOCAL_ENGINES) + natives


@pytest.mark.parametrize("provider", PROVIDERS)
def test_check_modes_accepts_exactly_what_a_provider_takes(provider: str) -> None:
    for search in SEARCH_MODES:
        fits = bool(NATIVE_SEARCH[provider]) and (
            search == "client" or search in NATIVE_SEARCH[provider]
        )
        if fits:
            check_modes(provider, search)
        else:
            with pytest.raises(ModeConflictError, match=f"search='{search}' does not apply"):
                check_modes(provider, search)
    for load_mode in LOAD_MODES:
        if provider in LOAD_MODE_PROVIDERS[load_mode]:
            check_modes(provider, None, load_mode)
        else:
            with pytest.raises(ModeConflictError) as info:
                check_modes(provider, None, load_mode)
            assert (info.value.field, info.value.value) == ("load_mode", load_mode)


def test_every_load_mode_names_its_providers() -> None:
    assert set(LOAD_MODE_PROVIDERS) == set(LOAD_MODES)
    assert LOAD_MODE_PROVIDERS["bridge"] == ("openai-chat", "kimi")
    with pytest.raises(ModeConflictError, match="applies to openai-chat, kimi only, not anthropic"):
        check_modes("anthropic", None, "bridge")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("gemini",), "unknown provider 'gemini'; choose one of anthropic, openai-responses"),
        (("anthropic", "grep"), "unknown search 'grep'; choose one of client, native-bm25"),
        (("openai-responses", None, "eager"), "unknown load_mode 'eager'; choose one of"),
        (("openai-responses", 5), "unknown search 5"),
    ],
)
def test_unknown_values_name_the_field_and_the_choices(
    args: tuple[object, ...], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check_modes(*args)  # type: ignore[arg-type]
