"""What each provider and model supports: one table, overridable per request.

Sources: Anthropic's tool search models and minimum cacheable prefix
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool,
https://docs.claude.com/en/docs/build-with-claude/prompt-caching), OpenAI's tool search and
caching (https://platform.openai.com/docs/guides/tools-tool-search,
https://platform.openai.com/docs/guides/prompt-caching); mid-conversation system messages on
Anthropic from the Claude Opus 4.8 release notes; the deferred placeholder from Claude Code
2.1.304 and Pi, which measured a full miss at the first request carrying a `defer_loading` tool.
Tool changes in those messages (`tool_addition` / `tool_removal`, by reference or by value)
and the models that take them:
https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages; tools[]
edits refused by Fable 5.1's preserved thinking:
https://platform.claude.com/docs/en/build-with-claude/preserved-thinking. OpenAI's
`allowed_tools` tool choice: https://platform.openai.com/docs/guides/function-calling.
A model not in these tables gets a conservative profile and a note: its tool changes take the
safe path (soft removal: the definition stays, the model is told, calls are refused locally).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict

from dtl_notebook._reuse.registry import memoized
from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.wire.modes import PROVIDERS, Provider, check_provider
from dtl_notebook.wire.providers import ANTHROPIC, KIMI, OPENAI_CHAT, OPENAI_RESPONSES, Part

__all__ = ["PROFILE_FLAGS", "PROVIDERS", "ModelProfile", "check_profile_overrides", "profile_for"]

# each provider's capability flags for a model name (registered at the end of this module)
PROFILE_FLAGS: Part[Callable[[str], dict[str, Any]]] = Part("profile flags", __name__)

# Anthropic (family, version) tables.
_TOOL_SEARCH = {
    ("fable", "5.1"),
    ("mythos", "5.1"),
    ("fable", "5"),
    ("mythos", "5"),
    ("opus", "5"),
    ("opus", "4.8"),
    ("opus", "4.7"),
    ("opus", "4.6"),
    ("sonnet", "4.6"),
    ("opus", "4.5"),
    ("sonnet", "4.5"),
    ("haiku", "4.5"),
}
_NO_TOOL_SEARCH = {("opus", "4.1"), ("opus", "4"), ("sonnet", "4"), ("haiku", "3.5")}
_MID_CONVERSATION_SYSTEM = {
    ("opus", "4.8"),
    ("opus", "5"),
    ("opus", "5.5"),
    ("sonnet", "5.5"),
    ("haiku", "5.5"),
    ("fable", "5"),
    ("fable", "5.1"),
    ("mythos", "5"),
    ("mythos", "5.1"),
    ("sonnet", "5"),
}
# tool changes in system messages (the beta on the models of the system messages page)
_TOOL_CHANGES = {
    ("fable", "5.1"),
    ("mythos", "5.1"),
    ("fable", "5"),
    ("mythos", "5"),
    ("opus", "5.5"),
    ("opus", "5"),
    ("opus", "4.8"),
}
# message threads (`message-threads-2026-08-12`): the models the provider page lists
# (https://platform.claude.com/docs/en/build-with-claude/message-threads)
_MESSAGE_THREADS = {
    ("fable", "5.1"),
    ("mythos", "5.1"),
    ("fable", "5"),
    ("mythos", "5"),
    ("opus", "5.5"),
    ("opus", "5"),
    ("opus", "4.8"),
    ("sonnet", "5.5"),
    ("sonnet", "5"),
    ("haiku", "5.5"),
    ("haiku", "4.5"),
    ("opus", "4.7"),
    ("opus", "4.6"),
    ("sonnet", "4.6"),
    ("opus", "4.5"),
    ("sonnet", "4.5"),
}
# editing tools[] mid-session is a 400 (preserved thinking), not a cache miss
_REFUSES_TOOL_EDITS = {("fable", "5.1")}
_MIN_CACHEABLE = {
    **dict.fromkeys(
        [("fable", "5.1"), ("mythos", "5.1"), ("opus", "5"), ("fable", "5"), ("mythos", "5")], 512
    ),
    **dict.fromkeys(
        [
            ("opus", "4.8"),
            ("sonnet", "5"),
            ("sonnet", "4.6"),
            ("sonnet", "4.5"),
            ("opus", "4.1"),
            ("opus", "4"),
            ("sonnet", "4"),
        ],
        1024,
    ),
    **dict.fromkeys([("opus", "4.7"), ("haiku", "3.5")], 2048),
    **dict.fromkeys([("opus", "4.6"), ("opus", "4.5"), ("haiku", "4.5")], 4096),
}
_CLAUDE = re.compile(r"^claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$")

# OpenAI models that do not get tool_search although their version would (Pi's table).
_OPENAI_EXCLUDED = {"gpt-5.4-nano", "gpt-5.5-pro"}
_GPT = re.compile(r"^gpt-(\d+)(?:\.(\d+))?o?(?:-([a-z0-9-]+))?$")


class ModelProfile(BaseModel):
    """Capabilities of one model on one provider. Every flag can be overridden."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider
    model: str
    known: bool = False
    tool_reference: bool = False
    native_tool_search: bool = False
    additional_tools: bool = False
    tool_search_items: bool = False
    kimi_tools: bool = False
    mid_conversation_system: bool = False
    min_cacheable_tokens: int = 1024
    cache_granularity: int = 1
    exact_cache_boundary: bool = False
    # Anthropic client search: declare a never-called deferred tool from the first request, so
    # the first real deferred tool does not change the hidden prompt (a full cache miss)
    deferred_placeholder: bool = True
    # Anthropic system messages with tool_addition / tool_removal naming declared tools
    tool_changes_by_reference: bool = False
    # ... and with tool_definition (by value, `inline-tools-2026-09-15`): tools[] stays fixed
    tool_changes_by_value: bool = False
    # the provider answers an edit of tools[] mid-session with an error, not a miss
    refuses_tool_edits: bool = False
    # Anthropic message threads: create + continue, only the new messages sent
    message_threads: bool = False
    # OpenAI tool_choice {"type": "allowed_tools"} over the top-level tools
    allowed_tools: bool = False
    # ... naming tools declared only in additional_tools items too (GPT-5.6 and later)
    allowed_tools_loaded: bool = False
    # load_mode="bridge" offered: a fixed tool_search + call_tool dispatcher (Chat Completions
    # protocols; any model name, as OpenAI-compatible servers run models of their own)
    bridge: bool = False


def _anthropic(model: str) -> dict[str, Any]:
    match = _CLAUDE.match(model)
    if not match:
        return {"min_cacheable_tokens": 4096, "exact_cache_boundary": True}
    family, major, minor = match.groups()
    key = (family, f"{major}.{minor}" if minor else major)
    search = key in _TOOL_SEARCH
    return {
        "known": search or key in _NO_TOOL_SEARCH or key in _MID_CONVERSATION_SYSTEM,
        "tool_reference": search,
        "native_tool_search": search,
        "mid_conversation_system": key in _MID_CONVERSATION_SYSTEM,
        "tool_changes_by_reference": key in _TOOL_CHANGES,
        "tool_changes_by_value": key in _TOOL_CHANGES,  # the Claude API takes the inline beta
        "refuses_tool_edits": key in _REFUSES_TOOL_EDITS,
        "message_threads": key in _MESSAGE_THREADS,
        "min_cacheable_tokens": _MIN_CACHEABLE.get(key, 4096),
        "exact_cache_boundary": True,
    }


def _kimi(model: str) -> dict[str, Any]:
    """Kimi: its own tool carriers, system messages anywhere, and the bridge."""
    return {
        "known": model.startswith("kimi-"),
        "kimi_tools": True,
        "mid_conversation_system": True,
        "bridge": True,
    }


def _openai(model: str, responses: bool) -> dict[str, Any]:
    match = _GPT.match(model)
    # the bridge needs nothing of the server but function tools (any OpenAI-compatible one)
    flags: dict[str, Any] = {
        "mid_conversation_system": True,
        "cache_granularity": 128,
        "bridge": not responses,
    }
    if not match:
        return flags
    major, minor, variant = int(match[1]), int(match[2] or 0), match[3]
    search = responses and (major, minor) >= (5, 4) and model not in _OPENAI_EXCLUDED
    search = search and variant != "codex-spark"
    new_cache = (major, minor) >= (5, 6)
    return {
        **flags,
        "known": major >= 4,
        "native_tool_search": search,
        "additional_tools": search,
        "tool_search_items": search,
        "allowed_tools": responses and major >= 5,
        "allowed_tools_loaded": responses and new_cache,
        "cache_granularity": 1 if new_cache else 128,
        "exact_cache_boundary": new_cache,
    }


def check_profile_overrides(overrides: Mapping[str, Any]) -> None:
    """Profile flags must be bools and sizes non-negative ints; provider and model are fixed."""
    for flag, value in overrides.items():
        if not isinstance(flag, str):
            raise checks.type_error(f"profile key {checks.shown(flag)}", "a flag name", flag)
        field = ModelProfile.model_fields.get(flag)
        if field is None:
            continue  # unknown flags are named by profile_for with the valid list
        param = f"profile[{flag!r}]"
        if field.annotation is bool:
            checks.boolean(value, param)
        elif field.annotation is int:  # a granularity divides; a token minimum may be 0
            checks.positive_int(value, param, 1 if flag == "cache_granularity" else 0)
        else:
            raise InvalidArgumentError(
                f"{param} cannot be overridden: pass it as build_request's own argument"
            )


def profile_for(provider: str, model: str, **overrides: Any) -> tuple[ModelProfile, list[str]]:
    """The profile of a model, with overrides applied, and notes about it."""
    if not overrides and type(provider) is str and type(model) is str:  # most calls: kept
        profile, notes = _plain_profile(provider, model)
        return profile, list(notes)
    return _profile(provider, model, overrides)


@memoized("model profiles")
def _plain_profile(provider: str, model: str) -> tuple[ModelProfile, tuple[str, ...]]:
    profile, notes = _profile(provider, model, {})  # frozen: one object serves every caller
    return profile, tuple(notes)


def _profile(
    provider: str, model: str, overrides: dict[str, Any]
) -> tuple[ModelProfile, list[str]]:
    check_profile_overrides(overrides)
    provider = check_provider(provider)
    if not isinstance(model, str) or not model:
        raise ValueError("model must be a non-empty string")
    flags = PROFILE_FLAGS[provider](model)
    unknown = set(overrides) - set(ModelProfile.model_fields) - {"provider", "model"}
    if unknown:
        raise ValueError(
            f"unknown profile flag(s) {sorted(unknown)}; "
            f"valid: {sorted(set(ModelProfile.model_fields) - {'provider', 'model'})}"
        )
    profile = ModelProfile(provider=provider, model=model, **{**flags, **overrides})
    notes = []
    if not profile.known and not overrides:
        notes.append(
            f"model {model!r} is not in the {provider} profile table: using a conservative "
            "profile (no deferred-loading protocol); pass profile flags to override"
        )
    return profile, notes


PROFILE_FLAGS.register(ANTHROPIC, _anthropic)
PROFILE_FLAGS.register(OPENAI_RESPONSES, partial(_openai, responses=True))
PROFILE_FLAGS.register(OPENAI_CHAT, partial(_openai, responses=False))
PROFILE_FLAGS.register(KIMI, _kimi)
