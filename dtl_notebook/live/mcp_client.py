"""MCP servers as a tool source, through the official `mcp` SDK.

The core does no I/O: `Session.connect_mcp` reaches this module through the tool-source
connector the package registers (`agent/tool_sources.py`). `session.connect_mcp(command_or_url)`
starts a stdio server (a command as a list, or a string split like a shell would) or connects to
a streamable HTTP URL. The SDK is async: each connection owns an event loop in a background
thread and offers blocking calls with timeouts.

The server's tools enter the registry deferred (found by `tool_search`, namespace = the
server's name unless given). A call goes to the server: its text content joined, or its
structured content as JSON; `isError`, a dead server, a timeout or a garbled answer become an
`is_error` result naming the server, and the session stays usable.

Either MCP revision: the SDK probes `server/discover` (2026-07-28: no `initialize`, no session),
else takes the handshake (`protocol="legacy"`: only that); both feed the registry alike. A list
change (`notifications/tools/list_changed`, or a listen event) only marks the list stale: the
new list is fetched and applied at the next turn boundary (the next `user()`, or the end of a
tool run), never in the middle of one. `refresh()` fetches now, and applies now unless a tool
run is in progress. A tool the model can see that the server withdraws or changes is recorded
as a `SystemUpdate`; a new tool enters the registry (searchable, not offered) and is recorded
as registered there (`SystemUpdate.tools_registered`), so a native search declares it from that
point on and the tools declared before stay as they were.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import DtlError, InvalidArgumentError, ToolDefinitionError
from dtl_notebook.agent.tool_sources import ToolHost
from dtl_notebook.agent.tools import TOOL_NAME, Tool, ToolSpec
from dtl_notebook.live.mcp_link import McpLink

T = TypeVar("T")
# the longest a shutdown waits for the SDK to stop a server (it waits 2 s after closing stdin,
# then kills the process tree) and for the event loop's thread to end
SHUTDOWN_GUARD = 30.0
# "auto": probe `server/discover` (2026-07-28), else the handshake; "legacy": the handshake only
PROTOCOLS = ("auto", "legacy", *MODERN_PROTOCOL_VERSIONS)


class McpError(DtlError, RuntimeError):
    """An MCP server could not be reached, or did not answer as the protocol says."""


class McpConnection:
    """One MCP server feeding a session's registry."""

    def __init__(
        self,
        session: ToolHost,
        command_or_url: str | list[str],
        namespace: str | None = None,
        timeout: float = 30.0,
        protocol: str = "auto",
    ) -> None:
        if namespace is not None and (
            not isinstance(namespace, str) or not TOOL_NAME.match(namespace)
        ):
            raise InvalidArgumentError(
                f"namespace: {checks.shown(namespace)} must match ^[a-zA-Z0-9_-]{{1,64}}$"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise InvalidArgumentError(
                f"timeout: {checks.shown(timeout)} must be a positive number"
            )
        if protocol not in PROTOCOLS:
            raise InvalidArgumentError(
                f"protocol: {checks.shown(protocol)} must be one of {', '.join(PROTOCOLS)}"
            )
        self.session, self.timeout = session, float(timeout)
        self.target = _target(command_or_url)
        self.closed = False
        self.tools: dict[str, ToolSpec] = {}  # what this server put in the registry
        self.skipped: dict[str, str] = {}  # server tools left out, with the reason
        self._stale = threading.Event()
        self._listing: list[Any] | None = None  # fetched, not applied yet
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"mcp {self.target}", daemon=True
        )
        self._thread.start()
        self._link = McpLink(self.target, self._stale.set, protocol)
        try:  # a server hung in initialize or tools/list is stopped, with this loop's thread
            info = self._wait(self._link.open(), "connect")
            self.server_name = info or "mcp"
            self.namespace = namespace or _namespace(self.server_name)
            self.refresh()
        except BaseException:
            self.closed = True
            self._shut_down()
            raise

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("dead" if self._link.dead else "open")
        return f"McpConnection({self.server_name!r}, tools={len(self.tools)}, {state})"

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision this connection speaks (e.g. "2026-07-28", "2025-11-25")."""
        return self._link.protocol_version

    # -- the tool list ---------------------------------------------------------------------
    def wait_changed(self, timeout: float) -> bool:
        """Whether the server told a tool-list change not yet fetched, waiting up to `timeout`."""
        return self._stale.wait(timeout)

    def refresh(self) -> None:
        """Fetch the server's tool list now; apply it unless a tool run is in progress (then
        at the end of the run)."""
        self._check_open()
        self._stale.clear()
        self._listing = self._wait(self._link.list_tools(), "tools/list")
        if self.session.between_turns():
            self.apply_pending()
            self.session.record_registrations()

    def apply_pending(self) -> None:
        """Bring the registry in line with the server (called by the session between turns)."""
        if self.closed:
            return
        if self._stale.is_set() and not self._link.dead:
            self._stale.clear()
            try:
                self._listing = self._wait(self._link.list_tools(), "tools/list")
            except McpError as exc:
                self.skipped["<tools/list>"] = str(exc)
        listing, self._listing = self._listing, None
        if listing is not None:
            self._apply(listing)

    def _apply(self, listing: list[Any]) -> None:
        wanted: dict[str, ToolSpec] = {}
        self.skipped = {}
        for item in listing:
            try:
                spec = ToolSpec(
                    name=item.name,
                    description=item.description or "",
                    parameters=dict(item.input_schema or {"type": "object", "properties": {}}),
                    namespace=self.namespace,
                )
            except ToolDefinitionError as exc:
                self.skipped[str(item.name)] = str(exc)
                continue
            if spec.name in self.session.registry and spec.name not in self.tools:
                self.skipped[spec.name] = "the name is taken by another tool of the session"
                continue
            wanted[spec.name] = spec
        session = self.session
        gone = [n for n in self.tools if n not in wanted]
        active_gone = [n for n in gone if n in session.active_tools]
        if active_gone:
            session.set_active_tools([n for n in session.active_tools if n not in active_gone])
        for name in gone:
            session.registry.unregister(name)
            del self.tools[name]
        for name, spec in wanted.items():
            tool = Tool(**spec.model_dump(), execute=self._caller(name))
            if name not in self.tools:
                session.registry.register(tool)
            elif self.tools[name] != spec:
                session.redefine_tool(tool)
            self.tools[name] = spec

    # -- calls -----------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Call a server tool; an error result, or no answer, raises McpError naming the server."""
        self._check_open()
        result = self._wait(self._link.call_tool(name, arguments), f"tools/call {name!r}")
        texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        others = [
            c.model_dump(mode="json", exclude_none=True)
            for c in result.content
            if not isinstance(c, types.TextContent)
        ]
        if texts:
            text = "\n".join(texts)
        elif result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False)
        else:
            text = json.dumps(others, ensure_ascii=False) if others else ""
        if result.is_error:
            raise McpError(f"MCP server {self.server_name!r} reported an error: {text}")
        return text

    def _caller(self, name: str) -> Any:
        def execute(**arguments: Any) -> str:
            return self.call(name, arguments)

        return execute

    # -- lifetime --------------------------------------------------------------------------
    def close(self) -> None:
        """Withdraw the server's tools from the session and end the connection."""
        if self.closed:
            return
        self._listing = []
        self._stale.clear()
        self._apply([])
        self.closed = True
        self._shut_down()

    def __enter__(self) -> McpConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self.closed:
            raise McpError(f"MCP server {self.server_name!r}: the connection is closed")
        if self._link.dead:
            raise McpError(f"MCP server {self.server_name!r} is not running: {self._link.dead}")

    def _wait(
        self, coroutine: Coroutine[Any, Any, T], what: str, timeout: float | None = None
    ) -> T:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        name = getattr(self, "server_name", str(self.target))
        timeout = self.timeout if timeout is None else timeout
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise McpError(
                f"MCP server {name!r} did not answer {what} within {timeout:g} s"
            ) from None
        except McpError:
            raise
        except Exception as exc:
            reason = self._link.dead or f"{type(exc).__name__}: {exc}"
            raise McpError(f"MCP server {name!r}: {what} failed: {reason}") from None

    def _shut_down(self) -> None:
        """End the link (its server process too), then the event loop and its thread."""
        try:
            # the SDK's own shutdown: close stdin, wait, then kill the process tree
            self._wait(self._link.close(), "close", SHUTDOWN_GUARD)
        except McpError:
            pass  # a dead server has nothing left to close
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(SHUTDOWN_GUARD)
            if not self._thread.is_alive():
                self._loop.close()


def _target(command_or_url: object) -> str | list[str]:
    """A URL, or a stdio command as a non-empty list of strings."""
    if isinstance(command_or_url, str):
        text = command_or_url.strip()
        if re.match(r"^https?://", text):
            return text
        command = shlex.split(text)
    elif isinstance(command_or_url, list | tuple):
        command = list(command_or_url)
    else:
        raise checks.type_error(
            "command_or_url", "a command (a list or a string) or an http(s) URL", command_or_url
        )
    if not command or not all(isinstance(c, str) and c for c in command):
        raise InvalidArgumentError(
            f"command_or_url: {checks.shown(command_or_url)} is not a command: "
            "expected a non-empty list of non-empty strings"
        )
    return command


def _namespace(server_name: str) -> str:
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", server_name).strip("_")[:64]
    return name or "mcp"
