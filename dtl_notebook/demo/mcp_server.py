"""A small MCP server whose tool list changes on command: `python -m dtl_notebook.demo.mcp_server`.

Built on the official `mcp` SDK (`MCPServer`). Over stdio by default; `--http --port P` serves
streamable HTTP on 127.0.0.1. Every tool is deterministic:

- `echo(text)`, `add(a, b)`: the starting tools.
- `add_tool(name)` / `remove_tool(name)`: offer or withdraw one of the optional tools
  (`multiply`, `reverse`, `word_count`), then send `notifications/tools/list_changed`.
- `redefine_echo()`: swap `echo` for a version with another description and a `times`
  parameter (a redefinition under the same name), then notify.
- `crash()`: end the server process at once, to show what a dead server looks like.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolListChangedNotification

SERVER_NAME = "demo_mcp"


def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


def reverse(text: str) -> str:
    """Reverse a piece of text."""
    return text[::-1]


def word_count(text: str) -> int:
    """Count the words of a piece of text."""
    return len(text.split())


OPTIONAL: dict[str, Callable[..., Any]] = {
    "multiply": multiply,
    "reverse": reverse,
    "word_count": word_count,
}


def build_server() -> MCPServer:
    """The demo server with its starting tools."""
    server = MCPServer(SERVER_NAME)
    offered: set[str] = set()

    async def changed(ctx: Context) -> None:
        # sent with the request, so it reaches the client before the call's answer
        await ctx.session.send_notification(
            ToolListChangedNotification(), related_request_id=ctx.request_id
        )

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.tool(name="add_tool")
    async def add_tool(name: str, ctx: Context) -> str:
        """Offer one optional tool (multiply, reverse or word_count) and announce the change."""
        if name not in OPTIONAL:
            raise ToolError(f"no optional tool {name!r}; choose one of {', '.join(OPTIONAL)}")
        if name in offered:
            return f"{name} is offered already"
        server.add_tool(OPTIONAL[name], name=name)
        offered.add(name)
        await changed(ctx)
        return f"added {name}"

    @server.tool(name="remove_tool")
    async def remove_tool(name: str, ctx: Context) -> str:
        """Withdraw a tool (an optional one, or echo/add) and announce the change."""
        names = {t.name for t in await server.list_tools()}
        if name not in names or name in ("add_tool", "remove_tool", "redefine_echo", "crash"):
            raise ToolError(f"cannot remove {name!r}: not a removable tool of this server")
        server.remove_tool(name)
        offered.discard(name)
        await changed(ctx)
        return f"removed {name}"

    @server.tool(name="redefine_echo")
    async def redefine_echo(ctx: Context) -> str:
        """Replace echo with a version that repeats the text, and announce the change."""

        def echo_v2(text: str, times: int = 1) -> str:
            """Return the text repeated `times` times, separated by spaces."""
            return " ".join([text] * times)

        if "echo" in {t.name for t in await server.list_tools()}:
            server.remove_tool("echo")
        server.add_tool(echo_v2, name="echo")
        await changed(ctx)
        return "echo redefined"

    @server.tool()
    def crash() -> str:
        """End the server process immediately (for demonstrating a dead server)."""
        os._exit(3)

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="the HTTP port (with --http)")
    args = parser.parse_args(argv)
    server = build_server()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
