"""Prefix-cache rules per provider and model.

Pages: https://docs.claude.com/en/docs/build-with-claude/prompt-caching (Anthropic),
https://platform.openai.com/docs/guides/prompt-caching (OpenAI),
https://docs.vllm.ai/en/latest/features/automatic_prefix_caching.html (vLLM).

- Anthropic: writes only at breakpoints (explicit `cache_control`, or the automatic top-level
  one on the last block); a read walks back at most 20 blocks from each breakpoint for a prefix
  an earlier request wrote; a prefix below the model's minimum is not cached; 5m or 1h TTL.
  Once any tool carries `defer_loading`, hidden deferred-tool scaffolding joins the rendered
  prompt ahead of everything, so the first such request (or the first without any, after some)
  misses the whole cache (measured by Claude Code 2.1.304 and Pi; not documented).
- OpenAI before GPT-5.6: automatic prefix caching from 1,024 tokens in 128-token steps, no
  write charge, entries live about 5 to 10 minutes idle.
- OpenAI, every model: requests are routed by a hash of the prompt's start combined with
  `prompt_cache_key` where one is sent, so a prefix written under one key is predicted read only
  under the same key. The provider's own leading prompt (hidden system content, the hosted
  tools) is the same for every request with the same hosted tools, so it is cached across
  conversations and read even on a conversation's first request; where its size is not
  published the entry names the tools instead of predicting it.
- OpenAI GPT-5.6 and later: exact boundaries at the end of the latest eligible message
  (a user message, the last of a run of tool outputs), writes reported, ≥30 minutes.
- OpenAI-compatible servers: block granularity (vLLM 16, SGLang 1), no TTL; pass
  `cache_granularity` / `min_cacheable_tokens` as profile overrides.
- Kimi: automatic prefix caching with undocumented granularity; modelled like GPT-5.6 without
  minimum, and labelled an assumption.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dtl_notebook._reuse.registry import memoized
from dtl_notebook.context.content_rules import openai_hosted_unpublished
from dtl_notebook.context.model import ModelContext
from dtl_notebook.context.request_kinds import tool_kinds
from dtl_notebook.wire.cache_limits import LOOKBACK_BLOCKS
from dtl_notebook.wire.profiles import ModelProfile, profile_for
from dtl_notebook.wire.providers import ANTHROPIC, KIMI, OPENAI_CHAT, OPENAI_RESPONSES, Part

# each provider's part in this layer: its cache rule from its model profile (and overrides)
CACHE_RULES: Part[Callable[[str, str, ModelProfile, dict[str, Any]], CacheRule]] = Part(
    "cache rule", __name__
)
# what the provider puts ahead of the request's own content, the same for every request with
# the same hosted tools: its hidden framing and tool prompts (not a structured-output schema,
# which is the request's own)
_PROVIDER_SOURCES = ("tools", "input", "messages")


@dataclass(frozen=True)
class CacheRule:
    """How one provider/model caches prompt prefixes."""

    provider: str
    model: str
    breakpoints: bool  # True: Anthropic-style explicit writes; False: automatic prefix caching
    min_tokens: int
    granularity: int
    ttl_seconds: float
    lookback_blocks: int = LOOKBACK_BLOCKS
    reports_writes: bool = False
    assumed: bool = False
    deferred_scaffolding: bool = False  # any defer_loading tool changes the whole prefix
    routes_by_key: bool = False  # `prompt_cache_key` separates what requests read and write
    shared_hidden: bool = False  # the provider's leading prompt is cached across conversations
    # the generated items (`data/generated.json`) that extend an earlier request's prefix in
    # the cache once it was answered; () where output is not cached
    output_items: tuple[str, ...] = ()

    def floor(self, tokens: int) -> int:
        """Tokens counted as cached for a common prefix of `tokens`."""
        if tokens < self.min_tokens:
            return 0
        return tokens - tokens % self.granularity


def cache_rule(provider: str, model: str, **overrides: Any) -> CacheRule:
    """The cache rule of a model; profile flags (e.g. cache_granularity=16) override."""
    if not overrides and type(provider) is str and type(model) is str:  # most calls: kept
        return _plain_rule(provider, model)
    return _rule(provider, model, overrides)


@memoized("cache rules")
def _plain_rule(provider: str, model: str) -> CacheRule:
    return _rule(provider, model, {})  # frozen: one object serves every caller


def _rule(provider: str, model: str, overrides: dict[str, Any]) -> CacheRule:
    profile, _ = profile_for(provider, model, **overrides)
    return CACHE_RULES[provider](provider, model, profile, overrides)


def _breakpoint_rule(
    provider: str, model: str, profile: ModelProfile, overrides: dict[str, Any]
) -> CacheRule:
    return CacheRule(
        provider,
        model,
        True,
        profile.min_cacheable_tokens,
        1,
        300.0,
        reports_writes=True,
        deferred_scaffolding=True,
    )


def _assumed_rule(
    provider: str, model: str, profile: ModelProfile, overrides: dict[str, Any]
) -> CacheRule:
    """Kimi: undocumented granularity, no minimum unless given; labelled an assumption."""
    return CacheRule(
        provider,
        model,
        False,
        overrides.get("min_cacheable_tokens", 0),
        profile.cache_granularity,
        1800.0,
        assumed=True,
    )


def _openai_rule(
    provider: str, model: str, profile: ModelProfile, overrides: dict[str, Any]
) -> CacheRule:
    openai = not _compatible_server(overrides)
    exact = profile.exact_cache_boundary  # the newer cache: longer-lived, reports its writes
    return CacheRule(
        provider,
        model,
        False,
        profile.min_cacheable_tokens,
        profile.cache_granularity,
        1800.0 if exact else 600.0,
        reports_writes=exact,
        routes_by_key=openai,
        shared_hidden=openai,
        output_items=generated_items(provider) if openai else (),
    )


@functools.cache
def _generated() -> dict[str, Any]:
    text = resources.files("dtl_notebook.cache").joinpath("data/generated.json").read_text()
    return dict(json.loads(text)["providers"])


def generated_items(provider: str) -> tuple[str, ...]:
    """The input items a call of `provider` generated that enter the cache with its prefix
    (`data/generated.json`, each row with its source); () where the provider caches none."""
    row = _generated().get(provider, {})
    return tuple(row.get("items", ())) if row.get("caches_output") else ()


def _compatible_server(overrides: dict[str, Any]) -> bool:
    """An OpenAI-compatible engine (vLLM, SGLang) described by profile overrides: no routing
    key, no hosted tools."""
    return "cache_granularity" in overrides or "min_cacheable_tokens" in overrides


def cache_namespace(rule: CacheRule, payload: dict[str, Any]) -> str:
    """The routing key a request's automatic cache entries live under ("" for none)."""
    key = payload.get("prompt_cache_key") if rule.routes_by_key else None
    return key if isinstance(key, str) else ""


def shared_prefix(
    ctx: ModelContext, payload: dict[str, Any], rule: CacheRule
) -> tuple[int, tuple[str, ...]]:
    """(tokens of the provider's own leading prompt, which every request with the same hosted
    tools shares and reads from the cache across conversations; the hosted tools whose part
    of it is not published, hence not counted). (0, ()) where the rule has no such prompt."""
    if not rule.shared_hidden:
        return 0, ()
    tokens = 0
    for segment in ctx.segments:
        if segment.kind != "hidden" or not segment.source.startswith(_PROVIDER_SOURCES):
            break
        tokens += segment.tokens
    types = dict.fromkeys(
        str(kind) for kind, execution in tool_kinds(payload.get("tools")) if execution != "client"
    )
    return tokens, tuple(t for t in types if openai_hosted_unpublished(t))


CACHE_RULES.register(ANTHROPIC, _breakpoint_rule)
CACHE_RULES.register(OPENAI_RESPONSES, _openai_rule)
CACHE_RULES.register(OPENAI_CHAT, _openai_rule)
CACHE_RULES.register(KIMI, _assumed_rule)
