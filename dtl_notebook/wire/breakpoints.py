"""Anthropic's cache breakpoints: where a Messages request marks `cache_control`.

A breakpoint writes the prefix up to its block; a later read walks back from each of its own
breakpoints for an entry another request wrote
(https://docs.claude.com/en/docs/build-with-claude/prompt-caching). The tools' breakpoint is
on the last immediate tool; the messages' is the top-level automatic one or (`cache=
"explicit"`) a moving one on the last block, moved before trailing system messages; a turn
that adds more blocks than the lookback reaches gets one where the previous request ended.
Payload messages are shared with later requests (`_reuse.walks`), so a marked message and
block are copies.
"""

from __future__ import annotations

import bisect

from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook.wire.cache_limits import LOOKBACK_BLOCKS
from dtl_notebook.wire.request import JSON

CACHE_MODES = ("automatic", "explicit", "none")
# new blocks past the previous request's end beyond which an intermediate breakpoint marks
# that end, so the next read reaches it (the lookback, less a margin)
MAX_NEW_BLOCKS = LOOKBACK_BLOCKS - 2
_THINKING = {"thinking", "redacted_thinking"}


def _last_immediate_step(found: list[int], index: int, tool: JSON) -> None:
    if not tool.get("defer_loading") and "type" not in tool:  # a client tool sent in full
        found[:] = [index]


# the last immediate tool of the shared part of a tools list: native search shares its catalog
_LAST_IMMEDIATE: PrefixScan[list[int]] = PrefixScan(list, _last_immediate_step, remembered=2)


def place(
    tools: list[JSON], messages: list[JSON], ends: list[int], cache: str, ttl: str | None
) -> JSON | None:
    """Place the breakpoints of a body's `tools` and `messages` (`ends`: the block ends of
    its closed messages, `close` keeps them); returns the top-level automatic cache_control,
    if any."""
    if cache == "none":
        return None
    marker: JSON = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    # a deferred tool cannot carry cache_control: the tools' breakpoint is on the last
    # immediate one (deferred tools are outside the cached prefix, tool search page)
    at, own, shared = _LAST_IMMEDIATE.scan_split(tools)  # the deferred catalog is shared
    last = at + shared[0] if shared else own[0] if own else None
    if last is not None:  # a copy: the item itself is shared with every body declaring it
        tools[last] = {**tools[last], "cache_control": dict(marker)}
    total = close(messages, ends) + (len(messages[-1]["content"]) if messages else 0)
    previous_end = _previous_request_blocks(messages, ends)
    if previous_end and total - previous_end > MAX_NEW_BLOCKS:
        _mark(messages, ends, previous_end - 1, marker)
    # an entry written on a trailing system message is never read again (the next request
    # holds it before an assistant turn): the last breakpoint goes on the block before it
    trailing = 0
    for message in reversed(messages):
        if message["role"] != "system":
            break
        trailing += len(message["content"])
    if trailing and total > trailing:
        _mark(messages, ends, total - trailing - 1, marker)
        return None
    if cache == "explicit" and total:
        _mark(messages, ends, total - 1, marker)
        return None
    return dict(marker)


def close(messages: list[JSON], ends: list[int]) -> int:
    """Count into `ends` the blocks of every message but the last (which may still grow);
    returns the total. Counted once: a closed message keeps its blocks (a breakpoint marks a
    copy)."""
    for message in messages[len(ends) : len(messages) - 1]:
        ends.append((ends[-1] if ends else 0) + len(message["content"]))
    return ends[-1] if ends else 0


def _mark(messages: list[JSON], ends: list[int], position: int, marker: JSON) -> None:
    """Mark the block at `position` (counted over all messages) on a copy of it and of its
    message: payload messages are shared with later requests (`_reuse.walks`)."""
    row = bisect.bisect_right(ends, position)  # ends of the closed messages
    offset = position - (ends[row - 1] if row else 0)
    message = messages[row]
    block = message["content"][offset]
    if block.get("type") in _THINKING:
        return  # thinking blocks cannot be marked with cache_control (prompt caching page)
    content = list(message["content"])
    content[offset] = {**block, "cache_control": dict(marker)}
    messages[row] = {**message, "content": content}


def _previous_request_blocks(messages: list[JSON], ends: list[int]) -> int:
    """Blocks in the messages the previous request ended with (before the last reply)."""
    last = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] == "assistant"),
        -1,
    )
    return ends[last - 1] if last > 0 else 0
