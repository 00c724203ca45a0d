"""Why a request cached less than the one before: stable codes, their words kept apart.

Code compares, tables and tests use the `BreakCause` codes; people read `message(cause)`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

Part = Literal["model", "system", "tools", "messages"]


class BreakCause(StrEnum):
    """The cause of a cache break; its str is the code."""

    MODEL_CHANGED = "model_changed"
    TOOL_ORDER_CHANGED = "tool_order_changed"
    TOOL_SET_CHANGED = "tool_set_changed"
    DEFERRED_PROMPT_ADDED = "deferred_prompt_added"
    DEFERRED_PROMPT_REMOVED = "deferred_prompt_removed"
    SYSTEM_CHANGED = "system_changed"
    HISTORY_REWRITTEN = "history_rewritten"
    EXPIRED = "expired"
    NO_BREAKPOINT = "no_breakpoint"
    BREAKPOINT_OUT_OF_LOOKBACK = "breakpoint_out_of_lookback"
    BREAKPOINT_MOVED_BACK = "breakpoint_moved_back"
    MEDIA_CHANGED = "media_changed"
    THINKING_CHANGED = "thinking_changed"
    EFFORT_CHANGED = "effort_changed"
    TOOL_CHOICE_CHANGED = "tool_choice_changed"
    PARALLEL_TOOL_USE_CHANGED = "parallel_tool_use_changed"
    REASONING_EFFORT_CHANGED = "reasoning_effort_changed"
    PARALLEL_TOOL_CALLS_CHANGED = "parallel_tool_calls_changed"
    TEXT_FORMAT_CHANGED = "text_format_changed"
    VERBOSITY_CHANGED = "verbosity_changed"
    CACHE_KEY_CHANGED = "cache_key_changed"


MESSAGES: dict[BreakCause, str] = {
    BreakCause.MODEL_CHANGED: "model changed",
    BreakCause.TOOL_ORDER_CHANGED: "tool order changed",
    BreakCause.TOOL_SET_CHANGED: "tool set changed in the prefix",
    BreakCause.DEFERRED_PROMPT_ADDED: (
        "first request carrying a defer_loading tool: Anthropic's hidden deferred-tool prompt "
        "changed the prefix"
    ),
    BreakCause.DEFERRED_PROMPT_REMOVED: (
        "no defer_loading tool any more: Anthropic's hidden deferred-tool prompt left the prefix"
    ),
    BreakCause.SYSTEM_CHANGED: "system section changed",
    BreakCause.HISTORY_REWRITTEN: "history rewritten",
    BreakCause.EXPIRED: "expired",
    BreakCause.NO_BREAKPOINT: "no breakpoint",
    BreakCause.BREAKPOINT_OUT_OF_LOOKBACK: "no breakpoint within the 20-block lookback",
    BreakCause.BREAKPOINT_MOVED_BACK: "the last breakpoint moved before what was written",
    BreakCause.MEDIA_CHANGED: "an image, PDF or file changed",
    BreakCause.THINKING_CHANGED: "thinking settings changed (type or budget)",
    BreakCause.EFFORT_CHANGED: "output_config.effort changed",
    BreakCause.TOOL_CHOICE_CHANGED: "tool_choice changed",
    BreakCause.PARALLEL_TOOL_USE_CHANGED: "disable_parallel_tool_use changed",
    BreakCause.REASONING_EFFORT_CHANGED: "reasoning.effort changed",
    BreakCause.PARALLEL_TOOL_CALLS_CHANGED: "parallel_tool_calls changed",
    BreakCause.TEXT_FORMAT_CHANGED: "text.format (structured output) changed",
    BreakCause.VERBOSITY_CHANGED: "text.verbosity changed",
    BreakCause.CACHE_KEY_CHANGED: "prompt_cache_key changed: routed to another cache",
}

# the part of the request each cause changed; the others leave the prefix as it was (an
# expiry, a missing breakpoint)
PARTS: dict[BreakCause, Part] = {
    BreakCause.MODEL_CHANGED: "model",
    BreakCause.TOOL_ORDER_CHANGED: "tools",
    BreakCause.TOOL_SET_CHANGED: "tools",
    BreakCause.DEFERRED_PROMPT_ADDED: "tools",
    BreakCause.DEFERRED_PROMPT_REMOVED: "tools",
    BreakCause.SYSTEM_CHANGED: "system",
    BreakCause.HISTORY_REWRITTEN: "messages",
    BreakCause.MEDIA_CHANGED: "messages",
    # Anthropic: these settings keep tools and system cached and invalidate the messages
    BreakCause.THINKING_CHANGED: "messages",
    BreakCause.EFFORT_CHANGED: "messages",
    BreakCause.TOOL_CHOICE_CHANGED: "messages",
    BreakCause.PARALLEL_TOOL_USE_CHANGED: "messages",
    # OpenAI: rendered with the tools, ahead of everything
    BreakCause.REASONING_EFFORT_CHANGED: "tools",
    BreakCause.PARALLEL_TOOL_CALLS_CHANGED: "tools",
    BreakCause.TEXT_FORMAT_CHANGED: "tools",
    BreakCause.VERBOSITY_CHANGED: "tools",
}


def message(cause: BreakCause) -> str:
    """The words for a cause."""
    return MESSAGES[cause]
