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
- OpenAI GPT-5.6 and later: exact boundaries at the end of the latest eligible message
  (a user message, the last of a run of tool outputs), writes reported, ≥30 minutes.
- OpenAI-compatible servers: block granularity (vLLM 16, SGLang 1), no TTL; pass
  `cache_granularity` / `min_cacheable_tokens` as profile overrides.
- Kimi: automatic prefix caching with undocumented granularity; modelled like GPT-5.6 without
  minimum, and labelled an assumption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dtl_notebook.wire.profiles import profile_for


@dataclass(frozen=True)
class CacheRule:
    """How one provider/model caches prompt prefixes."""

    provider: str
    model: str
    breakpoints: bool  # True: Anthropic-style explicit writes; False: automatic prefix caching
    min_tokens: int
    granularity: int
    ttl_seconds: float
    lookback_blocks: int = 20
    reports_writes: bool = False
    assumed: bool = False
    deferred_scaffolding: bool = False  # any defer_loading tool changes the whole prefix

    def floor(self, tokens: int) -> int:
        """Tokens counted as cached for a common prefix of `tokens`."""
        if tokens < self.min_tokens:
            return 0
        return tokens - tokens % self.granularity


def cache_rule(provider: str, model: str, **overrides: Any) -> CacheRule:
    """The cache rule of a model; profile flags (e.g. cache_granularity=16) override."""
    profile, _ = profile_for(provider, model, **overrides)
    if provider == "anthropic":
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
    if provider == "kimi":
        return CacheRule(
            provider,
            model,
            False,
            overrides.get("min_cacheable_tokens", 0),
            profile.cache_granularity,
            1800.0,
            assumed=True,
        )
    if profile.exact_cache_boundary:
        return CacheRule(
            provider,
            model,
            False,
            profile.min_cacheable_tokens,
            profile.cache_granularity,
            1800.0,
            reports_writes=True,
        )
    return CacheRule(
        provider, model, False, profile.min_cacheable_tokens, profile.cache_granularity, 600.0
    )
