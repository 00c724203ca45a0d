"""Request-level settings the provider caches on, outside the rendered text: each is named by
its cause's row (`data/causes.json` "settings": the dotted path per provider).

Anthropic keeps tools and system cached when `thinking`, `output_config.effort`,
`tool_choice` or `disable_parallel_tool_use` change, and invalidates the messages ("What
invalidates the cache", https://platform.claude.com/docs/en/build-with-claude/prompt-caching;
https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-use-with-prompt-caching).
OpenAI invalidates the whole prefix on `reasoning.effort`, `parallel_tool_calls`,
`text.format` and `text.verbosity`; `prompt_cache_key` routes the request to a cache
(https://developers.openai.com/api/docs/guides/prompt-caching).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.cache.codes import CODES
from dtl_notebook.context.model import ModelContext, Segment
from dtl_notebook.wire.providers import spec

Getter = Callable[[dict[str, Any]], Any]


def _at(*path: str, default: Any = None) -> Getter:
    def get(payload: dict[str, Any]) -> Any:
        value: Any = payload
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return default if value is None else value

    return get


def _tool_choice(payload: dict[str, Any]) -> Any:
    choice = payload.get("tool_choice")
    if not isinstance(choice, dict):
        return choice or "auto"
    rest = {k: v for k, v in choice.items() if k != "disable_parallel_tool_use"}
    return "auto" if rest == {"type": "auto"} else rest


def _thinking(payload: dict[str, Any]) -> Any:
    """The thinking configuration but its budget (`_budget`): None when off."""
    thinking = payload.get("thinking")
    if not thinking or (isinstance(thinking, dict) and thinking.get("type") == "disabled"):
        return None
    if isinstance(thinking, dict):
        return {k: v for k, v in thinking.items() if k != "budget_tokens"}
    return thinking


def _budget(payload: dict[str, Any]) -> Any:
    return _at("thinking", "budget_tokens")(payload) if _thinking(payload) else None


# settings read another way than at their dotted path with no default
_GETTERS: dict[str, Getter] = {
    "thinking": _thinking,
    "thinking.budget_tokens": _budget,
    "tool_choice": _tool_choice,
    "tool_choice.disable_parallel_tool_use": _at(
        "tool_choice", "disable_parallel_tool_use", default=False
    ),
}


@functools.cache
def _settings(provider: str) -> tuple[tuple[BreakCause, str, Getter], ...]:
    """The cached-on settings of a provider (the causes' rows that name one), in row order:
    the first that changed names the break."""
    return tuple(
        (BreakCause(row.code), path, _GETTERS.get(path) or _at(*path.split(".")))
        for row in CODES.values()
        for named, path in row.settings
        if named == provider
    )


def request_settings(provider: str, payload: dict[str, Any]) -> dict[BreakCause, str]:
    """Each cached-on setting of a request, as canonical JSON (absent = the default)."""
    return {cause: _canonical(get(payload)) for cause, _, get in _settings(provider)}


def _canonical(value: Any) -> str:
    if value is None or type(value) is str:  # most settings of most requests: no encoder
        return "null" if value is None else json.dumps(value)
    return json.dumps(value, sort_keys=True, default=str)


@functools.cache
def _defaults(provider: str) -> dict[BreakCause, str]:
    return request_settings(provider, {})


def salt(provider: str, settings: dict[BreakCause, str]) -> str:
    """A digest of the settings, "" when every one is the default (nothing to mix in)."""
    if settings == _defaults(provider):
        return ""
    text = "\0".join(f"{k}={v}" for k, v in settings.items())
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def changed_setting(
    provider: str, old: dict[BreakCause, str], new: dict[BreakCause, str]
) -> tuple[BreakCause, str] | None:
    """The first setting (in the table's order) whose value differs, with its path."""
    for cause, path, _ in _settings(provider):
        if old.get(cause) != new.get(cause):
            return cause, path
    return None


# hidden prompts whose size follows tool_choice: Anthropic keeps tools and system cached when
# tool_choice changes, so for cache keys they count as one text whatever the choice
_CHOICE_SIZED = {"tool-use system prompt", "tool-use framing"}
_NEUTRAL: dict[Segment, Segment] = {}


def cache_view(ctx: ModelContext, settings_salt: str) -> ModelContext:
    """The context as the cache keys see it: Anthropic's tool_choice-sized hidden prompts as
    one text; elsewhere the settings mixed into the seed (they sit ahead of everything)."""
    # where the settings sit in the cached prefix (the table's settings_cached_after): ahead of
    # the messages (Anthropic), ahead of everything (OpenAI)
    if spec(ctx.provider).settings_cached_after == "messages":
        head = ctx.segments[:8]
        if not any(s.kind == "hidden" and s.label in _CHOICE_SIZED for s in head):
            return ctx
        segments = list(ctx.segments)
        for i, seg in enumerate(head):
            if seg.kind == "hidden" and seg.label in _CHOICE_SIZED:
                segments[i] = _NEUTRAL.get(seg) or _NEUTRAL.setdefault(
                    seg, Segment("hidden", f"[{seg.label}]", seg.tokens, seg.source, seg.label)
                )
        return replace(ctx, segments=segments, rendered=None)
    if not settings_salt:
        return ctx
    return replace(ctx, model=f"{ctx.model}\0{settings_salt}")
