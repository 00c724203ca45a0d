"""Kimi (Moonshot, OpenAI-compatible Chat Completions) with its deferred-tool messages.

Every tool named in a marker leaves the top-level list. After each run of consecutive tool
messages comes a `{"role": "system", "tools": [...]}` message (no `content`) holding the
definitions that run's markers added, in first-appearance order, as recorded at the marker.
Moonshot's tool use page (https://platform.moonshot.ai/docs/api/tool-use) documents only the
top-level `tools`; the tool-bearing system message is the shape Pi's `kimi` mode sends.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.wire.chat import chat_messages, function_items
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import JSON, Plan, WireRequest

PROVIDER = "kimi"


def build(
    plan: Plan,
    profile: ModelProfile,
    *,
    system_updates: str = "append",
    tool_changes: str = "keep",
    **params: Any,
) -> WireRequest:
    """The Kimi body: unmarked tools top-level, marked ones in system messages at their batch.
    With `tool_changes="keep"` a change's new definitions are carried the same way (a
    redefinition under a versioned name), a removal is told in text and every definition
    stays declared; "rewrite" sends the current list."""
    notes = list(plan.notes)
    active = {t.name: t for t in plan.full_list()}
    messages, load_points, marked = chat_messages(
        plan, PROVIDER, system_updates, notes, active, tool_changes
    )
    changes = plan.tool_changes if tool_changes == "keep" else None
    if changes is not None and changes.changes:
        # the initial tools with their first definitions, a withdrawn one in its place
        initial = [t for t in changes.initial if t.name not in marked]
        tools = function_items(initial)
    else:  # a tool declared in a system message is left out of the top-level list
        tools = function_items([t for name, t in active.items() if name not in marked])
    payload: JSON = {"model": profile.model, "messages": messages}
    if tools:
        payload["tools"] = tools
    payload.update(params)
    request = WireRequest(PROVIDER, profile.model, payload, "kimi", load_points, notes, profile)
    if changes is not None and changes.changes:
        request.aliases = dict(changes.aliases)
    return request
