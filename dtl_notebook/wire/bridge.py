"""`load_mode="bridge"` on the Chat Completions protocols (openai-chat, OpenAI-compatible
servers, Kimi): `tools[]` is the same two entries for the whole session.

`tools[]` declares only the session's `tool_search` and the `call_tool(name, arguments)`
dispatcher (agent/bridge.py). Every other definition travels in the conversation, as JSON text
the model reads: the tools callable from the start in a system message after the system prompt,
each found tool in the search result that found it, and each later change (a tool offered,
withdrawn or redefined: a `SystemUpdate`) in a system message at its place. Nothing sent before
is ever rewritten, so each request extends the previous one (the prompt cache keeps everything
up to the new turn: https://platform.openai.com/docs/guides/prompt-caching). The price is a
level of indirection: the model calls every tool through the dispatcher.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dtl_notebook.agent.bridge import CALL_TOOL, carried_json, is_bridged, read_carried
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.messages import SystemUpdate
from dtl_notebook.agent.tool_search import TOOL_SEARCH
from dtl_notebook.agent.tool_timeline import START
from dtl_notebook.wire.chat import chat_messages, function_json
from dtl_notebook.wire.modes import ModeConflictError
from dtl_notebook.wire.profiles import ModelProfile
from dtl_notebook.wire.request import JSON, Plan, WireRequest

if TYPE_CHECKING:
    from dtl_notebook.agent.session import Session

MODE = "bridge"
FIXED = (TOOL_SEARCH, CALL_TOOL)
NOTE = (
    "bridge: tools[] is fixed (tool_search + call_tool) and every other definition arrives in "
    "the conversation, so each request extends the previous one; the cost is that the model "
    "calls every tool through the call_tool dispatcher, which a real model may do less reliably "
    "than direct calls (the emulator cannot judge model quality)"
)


def build(
    plan: Plan,
    profile: ModelProfile,
    session: Session,
    notes: list[str],
    *,
    system_updates: str = "append",
    **params: Any,
) -> WireRequest:
    """The body with the fixed pair in `tools[]`; `notes` are the profile's notes (the plan's
    own are about load points, which the bridge does not have)."""
    provider = profile.provider
    if not profile.bridge:
        raise ModeConflictError(
            "load_mode",
            MODE,
            f"load_mode='bridge' is off in the profile of {profile.model!r} on {provider} "
            "(pass profile={'bridge': True} to use it)",
        )
    if not is_bridged(session.registry):
        raise InvalidArgumentError(
            "load_mode='bridge' needs the session's bridge tools (tool_search and call_tool): "
            "call dtl_notebook.agent.bridge.enable_bridge(session) first "
            "(Agent(..., load_mode='bridge') does it)"
        )
    notes = [*notes, NOTE]
    history, _, _ = chat_messages(plan, provider, system_updates, notes, carrier=carry_update)
    lead = history[:1] if history and history[0].get("role") == "system" else []  # the prompt
    head = _initial_tools(session)
    messages = [*lead, *head, *history[len(lead) :]]
    tools = [function_json(session.registry[name]) for name in FIXED]
    payload: JSON = {"model": profile.model, "messages": messages, "tools": tools}
    payload.update(params)
    return WireRequest(provider, profile.model, payload, MODE, [], notes, profile)


def carry_update(update: SystemUpdate) -> list[JSON]:
    """A SystemUpdate's tool changes as one system message (none without tool changes)."""
    if not update.tools_added and not update.tools_removed:
        return []
    text = carried_json(list(update.tools_added), list(update.tools_removed))
    return [{"role": "system", "content": text}]


def _initial_tools(session: Session) -> list[JSON]:
    """The system message declaring the tools callable from the start, with their first
    definitions, by name: a later removal or redefinition leaves it as it was."""
    initial = sorted(
        (
            entries[0][1]
            for name, entries in session.declared_tools().items()
            if name not in FIXED and entries[0][0] == START
        ),
        key=lambda spec: spec.name,
    )
    return [{"role": "system", "content": carried_json(initial)}] if initial else []


def inner_call_names(calls: list[Any]) -> list[str]:
    """The inner tool of each `call_tool` call among Chat `tool_calls` (others left out)."""
    names = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") != CALL_TOOL:
            continue
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            continue
        if isinstance(arguments, dict) and isinstance(arguments.get("name"), str):
            names.append(arguments["name"])
    return names


__all__ = ["FIXED", "MODE", "NOTE", "build", "carry_update", "function_json", "read_carried"]
