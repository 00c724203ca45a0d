"""Tool sources: outside changes of the registry (an MCP server's tool list), applied to the
session at turn boundaries.

The core does no I/O: a source that talks to a server is implemented above it (the MCP client
lives in `live/mcp_client.py`) and offered to sessions through `register_connector`; the
package registers the MCP one when it is imported, so `Session.connect_mcp` always finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec


class ToolSource(Protocol):
    """Something that changes the registry from outside (an MCP server), between turns."""

    closed: bool
    tools: dict[str, ToolSpec]  # what this source put in the registry

    def apply_pending(self) -> None: ...

    def refresh(self) -> None: ...

    def close(self) -> None: ...


class ToolHost(Protocol):
    """What a tool source needs of the session it feeds (a `Session`)."""

    registry: ToolRegistry

    @property
    def active_tools(self) -> list[str]: ...
    def set_active_tools(self, names: Iterable[str]) -> None: ...
    def redefine_tool(self, tool: Tool) -> Tool: ...
    def between_turns(self) -> bool: ...
    def record_registrations(self) -> None: ...


# how a source of one kind is connected: (host, target, namespace, timeout) -> the source
Connector = Callable[[ToolHost, Any, "str | None", float], ToolSource]
_CONNECTORS: dict[str, Connector] = {}


def register_connector(kind: str, connect: Connector) -> None:
    """Offer sessions a kind of tool source (e.g. "mcp"), implemented outside the core."""
    _CONNECTORS[kind] = connect


def connect(kind: str, host: ToolHost, target: Any, namespace: str | None, timeout: float) -> Any:
    """A new source of `kind` feeding `host`."""
    if kind not in _CONNECTORS:
        raise LookupError(f"no {kind!r} tool source is registered (import dtl_notebook first)")
    return _CONNECTORS[kind](host, target, namespace, timeout)


class ToolSources:
    """The sources feeding one session, synced at its turn boundaries."""

    def __init__(self) -> None:
        self._sources: list[ToolSource] = []

    def __len__(self) -> int:
        return len(self._sources)

    def add(self, source: ToolSource) -> None:
        self._sources.append(source)

    def sync(self) -> None:
        """Apply the tool-list changes sources reported since the last turn boundary."""
        for source in list(self._sources):
            source.apply_pending()
            if source.closed:
                self._sources.remove(source)
