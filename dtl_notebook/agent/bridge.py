"""The stable bridge: one fixed pair of tools, `tool_search` and a `call_tool(name, arguments)`
dispatcher, for providers without deferred loading (`load_mode="bridge"`).

The model's tool list never changes. A search returns the found tools' definitions inside its
result (JSON), and the model calls any of them through `call_tool`. The dispatcher runs the inner
call through the session's execution wrapper (`ToolExecution.run_dispatched`) at the position of
the `call_tool` call, so every check of a direct call applies: a tool not visible there (never
found, or withdrawn since) is refused, the arguments are validated against the tool's own
schema, and each failure is an `is_error` result naming the inner tool.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.execution import ToolOutput
from dtl_notebook.agent.messages import Message
from dtl_notebook.agent.tool_search import TOOL_SEARCH, SessionSearch, make_tool_search
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec

CALL_TOOL = "call_tool"
CALL_THROUGH = "call_through"  # the search result's key naming the dispatcher

CALL_TOOL_DESCRIPTION = (
    "Call a tool found with tool_search. `name` is the tool's name and `arguments` an object "
    "matching the parameters schema its search result gave."
)
CALL_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The name of a tool found with tool_search."},
        "arguments": {
            "type": "object",
            "description": "The tool's arguments, matching its parameters schema.",
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}
SEARCH_DESCRIPTION = (
    "Search the catalog of available tools by what they do. The result holds each matching "
    "tool's definition (name, description, parameters); call a found tool through call_tool."
)


class Bridged(Protocol):
    """What the bridge needs of a session (imports in agent/ run one way)."""

    registry: ToolRegistry
    search: str | None
    searcher: SessionSearch | None

    @property
    def messages(self) -> Sequence[Message]: ...

    def activate(self, names: Iterable[str]) -> list[str]: ...

    def activate_found(self, names: Iterable[str]) -> list[str]: ...

    def withdrawn(self) -> frozenset[str]: ...

    def redefine_tool(self, tool: Tool) -> Tool: ...

    def run_dispatched(self, name: str, arguments: dict[str, Any]) -> ToolOutput: ...


def definition_json(tool: ToolSpec) -> dict[str, Any]:
    """A tool's definition as the bridge hands it to the model."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    return out


def carried_json(tools: Sequence[ToolSpec], withdrawn: Sequence[str] = ()) -> str:
    """The text that carries definitions to the model (a search result, or the bridge's system
    messages): the definitions, the names withdrawn (if any) and how to call them."""
    data: dict[str, Any] = {"tools": [definition_json(t) for t in tools]}
    if withdrawn:
        data["withdrawn"] = list(withdrawn)
    data[CALL_THROUGH] = CALL_TOOL
    return json.dumps(data, ensure_ascii=False)


def search_result(tools: Sequence[ToolSpec]) -> str:
    """The text of a bridge search result: the found definitions and how to call them."""
    return carried_json(tools)


def read_carried(text: str) -> tuple[list[dict[str, Any]], list[str]] | None:
    """(definitions, withdrawn names) of a text `carried_json` wrote, or None for any other."""
    if not text.startswith("{") or CALL_THROUGH not in text:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get(CALL_THROUGH) != CALL_TOOL:
        return None
    tools, withdrawn = data.get("tools"), data.get("withdrawn") or []
    if not isinstance(tools, list) or not isinstance(withdrawn, list):
        return None
    found = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    return found, [n for n in withdrawn if isinstance(n, str)]


def make_call_tool(session: Bridged) -> Tool:
    """The `call_tool` dispatcher bound to a session."""

    def run(name: str, arguments: dict[str, Any]) -> ToolOutput:
        return session.run_dispatched(name, arguments)

    return Tool(
        name=CALL_TOOL,
        description=CALL_TOOL_DESCRIPTION,
        parameters=CALL_TOOL_PARAMETERS,
        execute=run,
    )


def make_bridge_search(session: Bridged) -> Tool:
    """`tool_search` whose result carries the found tools' definitions (the session's engine)."""
    if session.search is None or session.searcher is None:
        raise InvalidArgumentError(
            "the bridge needs the session's tool_search: build the session with a search engine "
            "(search='bm25', 'regex' or 'keyword'), not search=None"
        )
    searcher = session.searcher
    plain = make_tool_search(session, session.search, searcher)  # its parameters, unchanged

    def run(query: str, limit: int = 5) -> str:
        hits = [t for t in searcher.search(query, limit + 1) if t.name != CALL_TOOL][:limit]
        session.activate_found([t.name for t in hits])
        return search_result(hits)

    return Tool(
        name=TOOL_SEARCH, description=SEARCH_DESCRIPTION, parameters=plain.parameters, execute=run
    )


def is_bridged(registry: ToolRegistry) -> bool:
    """Whether the registry holds the bridge's own `tool_search` and `call_tool`."""
    if TOOL_SEARCH not in registry or CALL_TOOL not in registry:
        return False
    search, dispatcher = registry[TOOL_SEARCH], registry[CALL_TOOL]
    return (
        search.description == SEARCH_DESCRIPTION and dispatcher.parameters == CALL_TOOL_PARAMETERS
    )


def enable_bridge(session: Bridged) -> None:
    """Give a session the bridge's `tool_search` and an active `call_tool` (once; idempotent).

    Before the first message this only sets the initial tools; later, swapping the search tool
    is recorded as its redefinition. A tool of the user's own named `call_tool` is an error."""
    registry = session.registry
    if is_bridged(registry):
        session.activate([TOOL_SEARCH, CALL_TOOL])
        return
    if CALL_TOOL in registry and registry[CALL_TOOL].parameters != CALL_TOOL_PARAMETERS:
        raise InvalidArgumentError(
            f"the session already has a tool named {CALL_TOOL!r} of its own: the bridge needs "
            "that name for its dispatcher (rename that tool)"
        )
    search = make_bridge_search(session)
    if session.messages:
        session.redefine_tool(search)
    else:
        registry.register(search, replace=True)
    registry.register(make_call_tool(session), replace=True)
    session.activate([TOOL_SEARCH, CALL_TOOL])
