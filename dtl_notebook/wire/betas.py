"""Which Anthropic beta a request body uses, and the ``anthropic-beta`` names it needs.

A body is *beta* when it uses a key or block type that only the SDK's beta request types
(``anthropic.types.beta``) define; it is then validated against those types and sent with
``client.beta.messages.create(..., betas=[...])``. Names come from the SDK's
``AnthropicBetaParam`` literal; a feature with no documented name switches the types only.
"""

from __future__ import annotations

import functools
from typing import Any

import typing_extensions as te

from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook.wire.schema import reachable
from dtl_notebook.wire.shape_errors import union_members

# Feature -> the `anthropic-beta` name it needs (https://docs.claude.com/en/api/beta-headers).
TOP_LEVEL_BETAS = {
    "mcp_servers": "mcp-client-2025-11-20",
    "context_management": "context-management-2025-06-27",
    "compaction": "compact-2026-01-12",
    "fallbacks": "server-side-fallback-2026-07-01",
    "fallback_credit_token": "fallback-credit-2026-07-01",
    "thread": "message-threads-2026-08-12",
}
BLOCK_BETAS = {
    "mcp_toolset": "mcp-client-2025-11-20",
    "mcp_tool_use": "mcp-client-2025-11-20",
    "mcp_tool_result": "mcp-client-2025-11-20",
    "compaction": "compact-2026-01-12",
    "compact_20260112": "compact-2026-01-12",
    "computer_20241022": "computer-use-2024-10-22",
    "bash_20241022": "computer-use-2024-10-22",
    "text_editor_20241022": "computer-use-2024-10-22",
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
    "advisor_20260301": "advisor-tool-2026-03-01",
    "tool_addition": "mid-conversation-tool-changes-2026-07-01",
    "tool_removal": "mid-conversation-tool-changes-2026-07-01",
}
SYSTEM_MESSAGE_BETAS = {
    "clear_at": "mid-conversation-system-clear-at-2026-08-21",
    "output_config": "mid-conversation-output-config-2026-07-01",
}
REFERENCE_BETA = "mid-conversation-tool-changes-2026-07-01"
INLINE_BETA = "inline-tools-2026-09-15"  # by-value definitions; covers references too
INLINE_MCP_BETA = "mcp-client-2026-09-15"  # an mcp_toolset defined by value
SKILLS_BETA = "skills-2025-10-02"  # a container carrying skills


@functools.cache
def sdk_beta_names() -> frozenset[str]:
    """The names the installed SDK lists in ``AnthropicBetaParam``."""
    from anthropic.types import AnthropicBetaParam

    return frozenset(
        v
        for m in union_members(AnthropicBetaParam)
        if te.get_origin(m) is te.Literal
        for v in te.get_args(m)
    )


@functools.cache
def _beta_only() -> tuple[frozenset[str], frozenset[str]]:
    """(top-level keys, ``type`` literals) that only the beta request types define."""
    from anthropic.types.beta.message_create_params import MessageCreateParamsBase as Beta
    from anthropic.types.message_create_params import MessageCreateParamsBase as Stable

    stable_keys = set(te.get_type_hints(Stable))
    beta_keys = set(te.get_type_hints(Beta)) - stable_keys - {"betas"}
    return frozenset(beta_keys), frozenset(_type_literals(Beta) - _type_literals(Stable))


def _type_literals(root: Any) -> set[str]:
    """The ``type`` literals of every TypedDict reachable from ``root``."""
    found: set[str] = set()
    for td in reachable(root)[0]:
        kind = te.get_type_hints(td, include_extras=True).get("type")
        while te.get_origin(kind) in (te.Required, te.NotRequired, te.Annotated):
            kind = te.get_args(kind)[0]
        if te.get_origin(kind) is te.Literal:
            found.update(v for v in te.get_args(kind) if isinstance(v, str))
    return found


class _Features:
    """The beta features of the messages scanned so far."""

    def __init__(self) -> None:
        self.beta = False
        self.names: set[str] = set()

    def __deepcopy__(self, memo: dict[int, Any]) -> _Features:
        copied = _Features()
        copied.beta, copied.names = self.beta, set(self.names)
        return copied


def _features_step(features: _Features, _index: int, message: Any) -> None:
    beta, names = message_features(message)
    features.beta |= beta
    features.names |= names


_MESSAGE_FEATURES = PrefixScan(_Features, _features_step)  # resumed over shared messages


def message_features(message: Any) -> tuple[bool, frozenset[str]]:
    """(uses a beta type, beta names) for one entry of ``messages``."""
    if not isinstance(message, dict):
        return False, frozenset()
    beta_types = _beta_only()[1]
    names: set[str] = set()
    beta = False
    if message.get("role") == "system":
        for key in message.keys() - {"role", "content"}:
            beta = True
            if key in SYSTEM_MESSAGE_BETAS:
                names.add(SYSTEM_MESSAGE_BETAS[key])
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str) or kind not in beta_types:
            continue
        beta = True
        if kind in BLOCK_BETAS:
            names.add(BLOCK_BETAS[kind])
        tool = block.get("tool")
        if isinstance(tool, dict) and tool.get("type") == "tool_definition":
            names.add(INLINE_BETA)
            definition = tool.get("definition")
            if isinstance(definition, dict) and definition.get("type") == "mcp_toolset":
                names.add(INLINE_MCP_BETA)
    return beta, frozenset(names)


def body_features(payload: dict[str, Any]) -> tuple[bool, list[str]]:
    """(uses a beta key or type, sorted beta names) for an Anthropic request body."""
    beta_keys = _beta_only()[0]
    names: set[str] = set()
    beta = False
    for key in payload.keys() & beta_keys:
        beta = True
        if key in TOP_LEVEL_BETAS:
            names.add(TOP_LEVEL_BETAS[key])
    container = payload.get("container")
    if isinstance(container, dict) and "skills" in container:
        beta = True
        names.add(SKILLS_BETA)
    edits = payload.get("context_management")
    for edit in edits.get("edits") or () if isinstance(edits, dict) else ():
        if isinstance(edit, dict) and edit.get("type") in BLOCK_BETAS:
            names.add(BLOCK_BETAS[edit["type"]])
    tools = payload.get("tools")
    tools = tools if isinstance(tools, list) else []
    _, own, shared = _TOOL_FEATURES.scan_split(tools)  # a union: order is moot
    beta = beta or own.beta or shared.beta
    names |= own.names | shared.names
    messages = payload.get("messages")
    found = _MESSAGE_FEATURES.scan(messages if isinstance(messages, list) else [])
    return beta or found.beta, finish(names | found.names)


def _tool_step(features: _Features, _index: int, tool: Any) -> None:
    kind = tool.get("type") if isinstance(tool, dict) else None
    if isinstance(kind, str) and kind in _beta_only()[1]:
        features.beta = True
        if kind in BLOCK_BETAS:
            features.names.add(BLOCK_BETAS[kind])


# resumed over the shared tool items; two lists (each holds its registry's items)
_TOOL_FEATURES = PrefixScan(_Features, _tool_step, remembered=2)


def finish(names: set[str]) -> list[str]:
    """The names to send: the inline-tools beta replaces the reference-only one."""
    if INLINE_BETA in names:
        names = names - {REFERENCE_BETA}
    return sorted(names)
