"""The async half of an MCP connection: one task holding the SDK's `Client`.

Runs on the connection's own event loop (see `mcp_client.py`); the Client is entered and left in
one task, as its task groups require; requests run as other tasks. A 2026-07-28 server's list
changes also come on a `subscriptions/listen` stream held open for the connection's life. The
SDK's response cache is off: after a change, `tools/list` must reach the server.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.subscriptions import SubscriptionLost, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

CLOSE_GRACE = 10.0  # how long a ready session may take to leave before it is cancelled


class McpLink:
    """A started (or failed) connection to one MCP server."""

    def __init__(
        self, target: str | list[str], on_tools_changed: Callable[[], None], mode: str = "auto"
    ) -> None:
        self.target, self.mode = target, mode  # mode: the SDK's ("auto", "legacy", a version)
        self.on_tools_changed = on_tools_changed
        self.dead: str | None = None  # why the connection is gone, once it is
        self.protocol_version: str | None = None
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> str | None:
        """Start the transport and initialize; returns the server's name."""
        self._stop = asyncio.Event()
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(ready))
        return await ready

    async def _run(self, ready: asyncio.Future[str | None]) -> None:
        assert self._stop is not None
        try:
            client = Client(
                self._server(), mode=self.mode, message_handler=self._handle, cache=None
            )
            async with client:
                self._client, self.protocol_version = client, client.protocol_version
                listener, listening = None, asyncio.Event()
                if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    # ready once the server holds the stream: no change after this is missed
                    listener = asyncio.create_task(self._listen(client, listening))
                    await listening.wait()
                info = client.server_info
                ready.set_result(info.name if info else None)
                await self._stop.wait()
                if listener is not None:
                    listener.cancel()
                    await asyncio.wait([listener])
        except BaseException as exc:  # the task must record why it ended, whatever it was
            self.dead = self.dead or _reason(exc)
            if not ready.done():
                ready.set_exception(RuntimeError(self.dead))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            if not self._stop.is_set():
                self.dead = self.dead or "the connection ended"

    def _server(self) -> Any:
        """What the SDK's Client connects to: the URL, or the stdio transport of the command."""
        if isinstance(self.target, str):
            return self.target
        command, *args = self.target
        return stdio_client(StdioServerParameters(command=command, args=args), errlog=_errlog())

    async def _listen(self, client: Client, listening: asyncio.Event) -> None:
        """Hold a `subscriptions/listen` stream open (`listening` set once the server holds it,
        or gave it up); one that drops (no replay) marks the list stale and listens again, one
        refused leaves changes to the requests' own streams."""
        try:
            while True:
                try:
                    async with client.listen(tools_list_changed=True) as events:
                        listening.set()
                        async for event in events:
                            if isinstance(event, ToolsListChanged):
                                self.on_tools_changed()
                    return  # the server closed the stream gracefully
                except SubscriptionLost:
                    self.on_tools_changed()
                except (MCPError, TimeoutError):
                    return
        finally:
            listening.set()

    async def _handle(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.on_tools_changed()
        elif isinstance(message, Exception) and self.dead is None:
            self.dead = f"the server sent something that is not MCP: {_reason(message)}"

    def _session(self) -> Client:
        if self._client is None:
            raise RuntimeError(self.dead or "not connected")
        return self._client

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server lists, page by page."""
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await self._session().list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result = await self._session().call_tool(name, arguments)
        if not isinstance(result, types.CallToolResult):
            raise RuntimeError(f"unexpected answer to tools/call: {type(result).__name__}")
        return result

    async def close(self) -> None:
        """End the session and the transport (a stdio server's process with it). A link that
        never got ready (hung in initialize) is cancelled at once; a ready one leaves in turn,
        cancelled if it does not within the grace period."""
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is None:
            return
        if self._client is None:
            task.cancel()
        await asyncio.wait([task], timeout=CLOSE_GRACE)
        if not task.done():
            task.cancel()
        await asyncio.wait([task])  # the transport's own cleanup ends the process


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)
    if inner:  # a task group's ExceptionGroup: the first cause says most
        return _reason(inner[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _errlog() -> Any:
    """Where a stdio server's stderr goes: ours, or the process's own where ours has no file
    descriptor (a notebook kernel's captured stream), as a subprocess needs one."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stderr
    return sys.stderr
