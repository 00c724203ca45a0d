"""Checking a body as the API takes it, where the SDK's request types are stricter.

The OpenAI SDK types make a Responses function tool's `strict` and `parameters` required
fields (`Required[Optional[...]]`), but the API takes a function tool without them and applies
its defaults (https://platform.openai.com/docs/api-reference/responses/create, `tools`);
Codex sends its whole catalog so, in a leading `additional_tools` item. Requests this package
builds are validated strictly (`validate_payload`); a Responses WebSocket `response.create`
message is checked against the SDK's client event type (`type`, `generate`), Codex adds
`client_metadata` there, and sends back the items the API returned (`api_items`). Traffic
captured from other agents, and the emulator standing in for the API, are checked here: such
fields count as their defaults and each kind of omission is named in a note, never a refusal.
"""

from __future__ import annotations

import json
from typing import Any

from dtl_notebook.wire.api_items import as_typed, note, typed_tool
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.shape_errors import WireValidationError
from dtl_notebook.wire.validate import validate_payload

# Responses function-tool fields the SDK types require and the API defaults
_TOOL_DEFAULTS = {"strict": None, "parameters": None}
# the fields Codex's WebSocket `response.create` messages (codex-api `ResponseCreateWsRequest`)
# carry beyond the HTTP body, each with what it means; `generate` is typed in the SDK's client
# event, so noted only in a body without its `type` (a capture that dropped it)
_SOCKET_FIELDS = {
    "generate": "false: a prefetch that warms the cache and generates nothing",
    "client_metadata": "the client's trace context, read by the server",
}
_SOCKET_TYPED = frozenset({"generate"})


def with_api_defaults(payload: dict[str, Any], provider: str) -> tuple[dict[str, Any], list[str]]:
    """`payload` with the fields the API defaults filled in (a copy where anything is
    filled; the original is never changed), and a note per kind of omission."""
    if spec(provider).shape != "responses" or not isinstance(payload, dict):
        return payload, []
    missing: dict[str, list[str]] = {}
    body = dict(payload)
    notes = []
    returned: dict[str, list[str]] = {}
    socket = body.get("type") == "response.create"
    for field, meaning in _SOCKET_FIELDS.items():
        if field in body and not (socket and field in _SOCKET_TYPED):
            value = json.dumps(body.pop(field))
            notes.append(
                f"{field}: {value}: a WebSocket response.create field ({meaning}), "
                "not in the SDK's HTTP types"
            )
    tools = body.get("tools")
    if isinstance(tools, list):
        body["tools"] = _fill_tools(tools, "tools", missing, returned)
    items = body.get("input")
    if isinstance(items, list):
        items = body["input"] = as_typed(items, returned)
        filled = []
        for i, item in enumerate(items):
            if isinstance(item, dict) and isinstance(item.get("tools"), list):
                tools = _fill_tools(item["tools"], f"input.{i}.tools", missing, returned)
                item = {**item, "tools": tools}
            filled.append(item)
        body["input"] = filled
    if not missing and not notes and not returned:
        return payload, []
    notes += [_note(field, paths) for field, paths in missing.items()]
    return body, [*notes, *(note(kind, paths) for kind, paths in returned.items())]


def _fill_tools(
    tools: list[Any], where: str, missing: dict[str, list[str]], returned: dict[str, list[str]]
) -> list[Any]:
    filled = []  # a namespace's members are typed with these fields optional: left as they are
    for j, tool in enumerate(tools):
        tool = typed_tool(tool, f"{where}.{j}", returned)
        if isinstance(tool, dict) and tool.get("type") == "function":
            absent = [k for k in _TOOL_DEFAULTS if k not in tool]
            for key in absent:
                missing.setdefault(key, []).append(f"{where}.{j}")
            if absent:
                tool = {**tool, **{k: _TOOL_DEFAULTS[k] for k in absent}}
        filled.append(tool)
    return filled


def _note(field: str, paths: list[str]) -> str:
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    count = f"{len(paths)} function tool{'s' if len(paths) != 1 else ''}"
    return (
        f"{count} without `{field}` ({shown}): the SDK types require the field, the API "
        "takes the tool without it and applies its default"
    )


def validate_lenient(payload: dict[str, Any], provider: str) -> list[str]:
    """`validate_payload` as the API takes the body: the notes of what the SDK types call
    invalid but the API accepts; raises WireValidationError for anything else."""
    body, notes = with_api_defaults(payload, provider)
    validate_payload(body, provider)
    return notes


def captured_findings(payload: dict[str, Any], provider: str) -> list[str]:
    """Notes on a captured request body, which is analysed whatever they say (the provider
    has seen it already): what the API accepts though the SDK types do not, and any shape
    the SDK types refuse. Never raises."""
    try:
        return validate_lenient(payload, provider)
    except WireValidationError as exc:
        notes = with_api_defaults(payload, provider)[1]
        where = exc.path or "<root>"
        return [*notes, f"the SDK request types call this body invalid at {where}: {exc.reason}"]
    except (ValueError, TypeError, RecursionError) as exc:  # a provider or body not modelled
        return [f"not validated: {type(exc).__name__}: {exc}"]
