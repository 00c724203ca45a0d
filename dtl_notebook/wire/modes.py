"""The search modes and load modes: each written once, with the one check of how they combine
with a provider.

Every layer above takes its lists from here (the providers, and which modes each takes, come
from the provider table in wire/providers.py; the local search engines from agent/search.py).
`check_modes` is the cross-field rule that `build_request`, `Agent(...)`, `Agent.switch` and the
notebook magics all apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from dtl_notebook.agent.checks import choice, shown
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.search import LOCAL_ENGINES, LocalEngine
from dtl_notebook.wire.providers import PROVIDERS, SPECS, Provider, check_provider

__all__ = [
    "ENGINES",
    "LOAD_MODES",
    "LOAD_MODE_PROVIDERS",
    "LOCAL_ENGINES",
    "NATIVE_SEARCH",
    "PROVIDERS",
    "SEARCH_MODES",
    "AnthropicSearch",
    "Engine",
    "LoadMode",
    "LocalEngine",
    "ModeConflictError",
    "NativeSearch",
    "Provider",
    "ResponsesSearch",
    "SearchMode",
    "check_modes",
    "check_provider",
    "search_mode",
]

# Anthropic's server-side tool search (tool_search_tool_bm25 / _regex); OpenAI's hosted search
# over every registered tool, or its client-executed tool_search answered locally
AnthropicSearch = Literal["native-bm25", "native-regex"]
ResponsesSearch = Literal["hosted", "native-client"]
NativeSearch = AnthropicSearch | ResponsesSearch
# the `search` option of a request: "client" is the session's own tool_search function
SearchMode = Literal["client", AnthropicSearch, ResponsesSearch]
SEARCH_MODES: tuple[SearchMode, ...] = (
    "client",
    *get_args(AnthropicSearch),
    *get_args(ResponsesSearch),
)
NATIVE_SEARCH: Mapping[Provider, tuple[NativeSearch, ...]] = {
    row.name: row.native_searches  # type: ignore[misc]  # checked against SEARCH_MODES by test
    for row in SPECS.values()
}

# how tools loaded mid-conversation reach the model: the Responses API's three ways; the full
# current list (what Chat Completions always does, so it may be named there too); and the bridge
# (a fixed `tool_search` + `call_tool` dispatcher, definitions in the search results) on the
# Chat Completions protocols: openai-chat (and any OpenAI-compatible server at a base_url, such
# as vLLM, SGLang or Ollama) and Kimi
LoadMode = Literal["additional_tools", "tool_search", "full_list", "bridge"]
LOAD_MODES: tuple[LoadMode, ...] = get_args(LoadMode)
LOAD_MODE_PROVIDERS: Mapping[LoadMode, tuple[Provider, ...]] = {
    mode: tuple(row.name for row in SPECS.values() if mode in row.load_modes) for mode in LOAD_MODES
}

# what a session searches with: a local engine (in the session) or a provider's native search
Engine = LocalEngine | NativeSearch
ENGINES: tuple[Engine, ...] = (*LOCAL_ENGINES, *(e for p in PROVIDERS for e in NATIVE_SEARCH[p]))


class ModeConflictError(InvalidArgumentError):
    """An option value that exists but does not apply to the provider (or to another option);
    `field` and `value` name it."""

    def __init__(self, field: str, value: str, message: str) -> None:
        self.field, self.value = field, value
        super().__init__(message)


def search_mode(engine: str) -> str | None:
    """The request's `search` option for an engine: none for a local engine (it runs in the
    session's own tool_search tool), the engine itself for a native search."""
    return None if engine in LOCAL_ENGINES else engine


def check_modes(provider: str, search: object = None, load_mode: object = None) -> None:
    """The one check of `search` and `load_mode` against the provider and each other (None:
    not given). An unknown value or one the provider does not take raises a clear error."""
    provider = check_provider(provider)
    if search is not None:
        choice(search, "search", SEARCH_MODES)
        fits = ("client", *NATIVE_SEARCH[provider]) if NATIVE_SEARCH[provider] else ()
        if search not in fits:
            natives = ", ".join(NATIVE_SEARCH[provider]) or "none"
            raise ModeConflictError(
                "search",
                str(search),
                f"search={shown(search)} does not apply to {provider}; its native searches: "
                f"{natives}" + ("" if fits else f" ({provider} takes no search option)"),
            )
    if load_mode is not None:
        choice(load_mode, "load_mode", LOAD_MODES)
        takers = LOAD_MODE_PROVIDERS[load_mode]  # type: ignore[index]
        if provider not in takers:
            raise ModeConflictError(
                "load_mode",
                str(load_mode),
                f"load_mode={shown(load_mode)} applies to {', '.join(takers)} only, not {provider}",
            )
        if load_mode == "full_list" and search not in (None, "client"):
            raise ModeConflictError(
                "search",
                str(search),
                f"search={shown(search)} cannot be combined with load_mode='full_list'",
            )
