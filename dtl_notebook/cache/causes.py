"""Why a request cached less than the one before: stable codes for code and tests to compare.

Each cause's words, part, severity, invalidated parts and fix are its row in
`data/causes.json` (read by `codes`); this enum names the rows of kind "break".
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
    REASONING_DROPPED = "reasoning_dropped"
    EXPIRED = "expired"
    NO_BREAKPOINT = "no_breakpoint"
    BREAKPOINT_OUT_OF_LOOKBACK = "breakpoint_out_of_lookback"
    BREAKPOINT_MOVED_BACK = "breakpoint_moved_back"
    MEDIA_CHANGED = "media_changed"
    THINKING_CHANGED = "thinking_changed"
    THINKING_BUDGET_CHANGED = "thinking_budget_changed"
    EFFORT_CHANGED = "effort_changed"
    TOOL_CHOICE_CHANGED = "tool_choice_changed"
    PARALLEL_TOOL_USE_CHANGED = "parallel_tool_use_changed"
    CACHE_KEY_CHANGED = "cache_key_changed"
    REASONING_EFFORT_CHANGED = "reasoning_effort_changed"
    PARALLEL_TOOL_CALLS_CHANGED = "parallel_tool_calls_changed"
    TEXT_FORMAT_CHANGED = "text_format_changed"
    VERBOSITY_CHANGED = "verbosity_changed"
