"""The async half of an MCP connection: one task holding the SDK's transport and session.

Runs on the connection's own event loop (see `mcp_client.py`). The transport and `ClientSession` are
entered and left in one task, as the SDK's task groups require; requests run as other tasks.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

CLOSE_GRACE = 10.0  # how long a ready session may take to leave before it is cancelled


class McpLink:
    """A started (or failed) connection to one MCP server."""

    def __init__(self, target: str | list[str], on_tools_changed: Callable[[], None]) -> None:
        self.target = target
        self.on_tools_changed = on_tools_changed
        self.dead: str | None = None  # why the connection is gone, once it is
        self._client: ClientSession | None = None
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
            async with self._transport() as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write, message_handler=self._handle) as client:
                    result = await client.initialize()
                    self._client = client
                    ready.set_result(result.server_info.name if result.server_info else None)
                    await self._stop.wait()
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

    def _transport(self) -> Any:
        if isinstance(self.target, str):
            return streamable_http_client(self.target)
        command, *args = self.target
        return stdio_client(StdioServerParameters(command=command, args=args), errlog=_errlog())

    async def _handle(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.on_tools_changed()
        elif isinstance(message, Exception) and self.dead is None:
            self.dead = f"the server sent something that is not MCP: {_reason(message)}"

    def _session(self) -> ClientSession:
        if self._client is None:
            raise RuntimeError(self.dead or "not connected")
        return self._client

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server lists, page by page."""
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._session().list_tools(params=params)
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
