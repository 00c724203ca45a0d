"""`tool_order_unstable`: the same tools sent in another order than earlier in a conversation.

One body cannot show it: a fixed registration order that is not sorted (Codex sends
`exec_command`, `write_stdin`, ... the same way on every request) is as stable as a sorted one.
What costs the cache is an order that changes between requests, which only a conversation
shows (the break itself, where the cache lost a prefix, is `tool_order_changed`).
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.cache.findings import Finding, finding

__all__ = ["ToolOrderWatch", "tool_names"]


def tool_names(payload: dict[str, Any]) -> list[str]:
    """The names of the tools a body sends up front (deferred ones are not in the prefix)."""
    names = []
    for tool in payload.get("tools") or []:
        if isinstance(tool, dict) and not tool.get("defer_loading"):
            function = tool.get("function")
            named = (function if isinstance(function, dict) else tool).get("name")
            names.append(str(named or tool.get("type") or ""))
    return names


class ToolOrderWatch:
    """The orders a conversation has sent its tools in, by the set of names."""

    def __init__(self) -> None:
        self._orders: dict[frozenset[str], list[str]] = {}

    def check(self, payload: dict[str, Any]) -> Finding | None:
        """The finding where `payload` sends tools sent earlier in another order."""
        names = tool_names(payload)
        if len(names) < 2:  # a continuation that sends none, or a single tool
            return None
        before = self._orders.setdefault(frozenset(names), names)
        if before == names:
            return None
        self._orders[frozenset(names)] = names
        moved = [n for n, m in zip(names, before, strict=False) if n != m]
        return finding("tool_order_unstable", "tools", moved[:6])
