"""Tool sources: outside changes of the registry (an MCP server's tool list), applied to the
session at turn boundaries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dtl_notebook.agent.mcp import McpConnection
    from dtl_notebook.agent.messages import ToolCall
    from dtl_notebook.agent.tools import Tool, ToolRegistry


class ToolSource(Protocol):
    """Something that changes the registry from outside (an MCP server), between turns."""

    closed: bool

    def apply_pending(self) -> None: ...


class ToolSources:
    """The tool-source half of `Session` (mixed in; the session supplies the registry, the
    active set and the transcript)."""

    _running: bool
    _sources: list[ToolSource]  # e.g. MCP connections, synced between turns

    if TYPE_CHECKING:
        registry: ToolRegistry

        @property
        def active_tools(self) -> list[str]: ...

        def set_active_tools(self, names: Iterable[str]) -> None: ...

        def redefine_tool(self, tool: Tool) -> Tool: ...

        def record_registrations(self) -> None: ...

        def pending_calls(self) -> list[ToolCall]: ...

    def between_turns(self) -> bool:
        """Neither inside a tool's run nor with a tool call waiting for its result: where a
        change of the tool set may be recorded."""
        return not self._running and not self.pending_calls()

    def connect_mcp(
        self, command_or_url: str | list[str], namespace: str | None = None, timeout: float = 30.0
    ) -> McpConnection:
        """Connect an MCP server (a stdio command, as a list or a string, or a streamable
        HTTP URL) and register its tools, deferred; see `dtl_notebook.agent.mcp`."""
        from dtl_notebook.agent.mcp import McpConnection

        connection = McpConnection(self, command_or_url, namespace=namespace, timeout=timeout)
        self._sources.append(connection)
        return connection

    def _sync_sources(self) -> None:
        """Apply the tool-list changes sources reported since the last turn boundary."""
        for source in list(self._sources):
            source.apply_pending()
            if source.closed:
                self._sources.remove(source)
