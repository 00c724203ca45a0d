"""The finding vocabulary: every code this package reports, as one table.

A cache break (`BreakCause`) is a finding too: its code is the cause's code. Each code has a
severity, the parts of the cache it invalidates (in the provider's prefix order), the words
(`causes.MESSAGES` for the break causes) and a one-line fix. Sources: Anthropic's "What
invalidates the cache" table (https://platform.claude.com/docs/en/build-with-claude/prompt-caching)
and OpenAI's prompt-caching guide (https://developers.openai.com/api/docs/guides/prompt-caching).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dtl_notebook.cache.causes import MESSAGES, BreakCause

Severity = Literal["error", "warning", "info"]
ALL = ("tools", "system", "messages")
MESSAGES_ONLY = ("messages",)
NONE: tuple[str, ...] = ()


@dataclass(frozen=True)
class Code:
    """One finding code: what it means, how bad, what it invalidates, and the fix."""

    code: str
    severity: Severity
    invalidates: tuple[str, ...]
    message: str
    fix: str
    kind: Literal["break", "lint", "usage"] = "break"


# code: (severity, invalidates, fix) for the break causes; their words are causes.MESSAGES
_BREAKS: dict[BreakCause, tuple[Severity, tuple[str, ...], str]] = {
    BreakCause.MODEL_CHANGED: ("error", ALL, "keep one model per conversation"),
    BreakCause.TOOL_ORDER_CHANGED: ("error", ALL, "send the tools in one fixed order"),
    BreakCause.TOOL_SET_CHANGED: (
        "error",
        ALL,
        "keep tools byte-stable: defer new ones (defer_loading) or restrict with tool_choice",
    ),
    BreakCause.DEFERRED_PROMPT_ADDED: (
        "warning",
        ALL,
        "declare a deferred placeholder tool from the first request",
    ),
    BreakCause.DEFERRED_PROMPT_REMOVED: (
        "warning",
        ALL,
        "keep at least one deferred tool (a placeholder) on every request",
    ),
    BreakCause.SYSTEM_CHANGED: (
        "error",
        ("system", "messages"),
        "append a system message instead of editing the system prompt",
    ),
    BreakCause.HISTORY_REWRITTEN: (
        "error",
        MESSAGES_ONLY,
        "append to the history; never edit, reorder or re-serialize earlier turns",
    ),
    BreakCause.EXPIRED: ("warning", NONE, "send within the TTL, or ask for the 1h TTL"),
    BreakCause.NO_BREAKPOINT: ("warning", NONE, "add cache_control to the last stable block"),
    BreakCause.BREAKPOINT_OUT_OF_LOOKBACK: (
        "warning",
        NONE,
        "add an intermediate breakpoint: a read looks back at most 20 blocks",
    ),
    BreakCause.BREAKPOINT_MOVED_BACK: (
        "warning",
        NONE,
        "keep the breakpoint on the last block, or use top-level automatic caching",
    ),
    BreakCause.MEDIA_CHANGED: (
        "error",
        MESSAGES_ONLY,
        "send the same bytes for an earlier image or document (re-encoding changes them)",
    ),
    BreakCause.THINKING_CHANGED: (
        "error",
        MESSAGES_ONLY,
        "keep thinking type and budget fixed for a conversation",
    ),
    BreakCause.EFFORT_CHANGED: ("error", MESSAGES_ONLY, "keep output_config.effort fixed"),
    BreakCause.TOOL_CHOICE_CHANGED: (
        "error",
        MESSAGES_ONLY,
        "keep tool_choice fixed; steer with a message instead",
    ),
    BreakCause.PARALLEL_TOOL_USE_CHANGED: (
        "error",
        MESSAGES_ONLY,
        "keep disable_parallel_tool_use fixed for a conversation",
    ),
    BreakCause.REASONING_EFFORT_CHANGED: (
        "error",
        ALL,
        "keep reasoning.effort fixed (GPT-6: append a configuration_update item)",
    ),
    BreakCause.PARALLEL_TOOL_CALLS_CHANGED: ("error", ALL, "keep parallel_tool_calls fixed"),
    BreakCause.TEXT_FORMAT_CHANGED: ("error", ALL, "keep text.format (the schema) fixed"),
    BreakCause.VERBOSITY_CHANGED: ("error", ALL, "keep text.verbosity fixed"),
    BreakCause.CACHE_KEY_CHANGED: (
        "error",
        ALL,
        "keep one prompt_cache_key per conversation (it routes to the cache)",
    ),
}

# static checks of one request, and findings from reported usage
_OTHERS: tuple[Code, ...] = (
    Code(
        "too_many_breakpoints",
        "error",
        NONE,
        "more than 4 cache breakpoints: the API refuses the request (400)",
        "keep at most 4 cache_control markers",
        "lint",
    ),
    Code(
        "below_minimum",
        "info",
        NONE,
        "the prefix at every breakpoint is below the model's minimum: nothing is cached",
        "move the breakpoint later, or accept no caching for short prompts",
        "lint",
    ),
    Code(
        "volatile_prefix",
        "warning",
        ALL,
        "a timestamp, UUID or 'today is' inside the cached prefix changes every request",
        "move volatile text after the last breakpoint (the latest user message)",
        "lint",
    ),
    Code(
        "lookback_exceeded",
        "warning",
        NONE,
        "more than 20 blocks behind one breakpoint: a later read cannot reach the earlier write",
        "add an intermediate breakpoint within every 20 blocks",
        "lint",
    ),
    Code(
        "messages_never_cached",
        "warning",
        MESSAGES_ONLY,
        "no breakpoint follows the system prompt: the conversation itself is never cached",
        "mark the last message block (or use top-level cache_control)",
        "lint",
    ),
    Code(
        "cache_control_on_deferred",
        "error",
        NONE,
        "a defer_loading tool carries cache_control: the API refuses the request (400)",
        "put the breakpoint on a non-deferred tool or the system prompt",
        "lint",
    ),
    Code(
        "deferred_without_placeholder",
        "warning",
        ALL,
        "no deferred tool yet: the first deferred tool adds hidden scaffolding and misses",
        "declare a never-called deferred placeholder tool from the first request",
        "lint",
    ),
    Code(
        "deferred_tool_snippet",
        "warning",
        ("system", "messages"),
        "the system prompt lists a snippet of a deferred tool: it changes as tools load",
        "list snippets of active tools only, or in a system message after loading",
        "lint",
    ),
    Code(
        "breakpoint_on_trailing_system",
        "warning",
        NONE,
        "the last breakpoint is on a trailing system message: that entry is never read",
        "put the breakpoint on the last user or tool-result block",
        "lint",
    ),
    Code(
        "tool_order_unstable",
        "info",
        ALL,
        "the tool list is in no stable order (not sorted): a set or dict order changes it",
        "sort the tools by name, or keep registration order, every request",
        "lint",
    ),
    Code(
        "catalog_in_prefix",
        "warning",
        ("system", "messages"),
        "a deferred-tool catalog sits in the system prompt: a registry change rewrites it",
        "send catalog changes as a mid-conversation system message",
        "lint",
    ),
    Code(
        "prefix_intact_not_read",
        "warning",
        NONE,
        "the prefix was intact but the provider read nothing (TTL, routing or outside the payload)",
        "check the TTL, the prompt_cache_key and the workspace; ask for cache diagnostics",
        "usage",
    ),
    Code(
        "write_never_read",
        "info",
        NONE,
        "a cache write was never read by a later request",
        "drop the breakpoint, or send the next request within the TTL",
        "usage",
    ),
    Code(
        "ttl_gap",
        "warning",
        NONE,
        "the time since the previous request exceeded the cache TTL",
        "send sooner, or ask for the 1h TTL",
        "usage",
    ),
)

CODES: dict[str, Code] = {
    **{
        str(cause): Code(str(cause), sev, parts, MESSAGES[cause], fix)
        for cause, (sev, parts, fix) in _BREAKS.items()
    },
    **{c.code: c for c in _OTHERS},
}


def code(name: str) -> Code:
    """The entry of a finding code; an unknown one raises KeyError listing the known ones."""
    try:
        return CODES[str(name)]
    except KeyError:
        raise KeyError(f"unknown finding code {name!r}; known: {', '.join(CODES)}") from None


def fix(name: str) -> str:
    """The one-line fix of a code."""
    return code(name).fix
