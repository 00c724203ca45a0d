"""Kimi (Moonshot, OpenAI-compatible Chat Completions) with its deferred-tool messages.

Every tool named in a marker leaves the top-level list. After each run of consecutive tool
messages comes a `{"role": "system", "tools": [...]}` message (no `content`) holding the
definitions that run's markers added, in first-appearance order, as recorded at the marker.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.agent.messages import ToolResultMessage
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.wire.chat import chat_messages, function_json
from dtl_notebook.wire.common import JSON, LoadPoint, Plan, WireRequest
from dtl_notebook.wire.profiles import ModelProfile

PROVIDER = "kimi"


def build(
    plan: Plan, profile: ModelProfile, *, system_updates: str = "append", **params: Any
) -> WireRequest:
    """The Kimi body: unmarked tools top-level, marked ones in system messages at their batch."""
    notes = list(plan.notes)
    active = {t.name: t for t in plan.full_list()}
    marked: set[str] = set()
    load_points: list[LoadPoint] = []

    def after_batch(batch: list[int], out: list[JSON]) -> None:
        specs: list[ToolSpec] = []
        for index in batch:
            message = plan.messages[index]
            assert isinstance(message, ToolResultMessage)
            for name in message.added_tool_names or []:
                if name in (s.name for s in specs):
                    continue
                if name in active:
                    specs.append(message.snapshot(name) or active[name].spec())
                    marked.add(name)
                elif name in plan.retired:  # deactivated later: history keeps the definition
                    specs.append(message.snapshot(name) or plan.retired[name])
        if specs:
            out.append({"role": "system", "tools": [function_json(s) for s in specs]})
            path = f"messages.{len(out) - 1}.tools"
            load_points.append(LoadPoint(batch[-1], [s.name for s in specs], path))

    messages = chat_messages(plan, PROVIDER, system_updates, notes, after_batch)
    tools = [function_json(t) for name, t in active.items() if name not in marked]
    payload: JSON = {"model": profile.model, "messages": messages}
    if tools:
        payload["tools"] = tools
    payload.update(params)
    return WireRequest(PROVIDER, profile.model, payload, "kimi", load_points, notes, profile)
