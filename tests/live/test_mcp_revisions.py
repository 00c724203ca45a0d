"""MCP's two revisions feed a session alike: a stateless 2026-07-28 server (no `initialize`, no
session; its list changes on a `subscriptions/listen` stream), built with the official SDK and
served on loopback, and the older handshake revision, which keeps working."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer

from dtl_notebook import Session, ToolCall
from dtl_notebook.agent import ToolResultMessage
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.live.http_server import ThreadedServer
from dtl_notebook.live.mcp_client import McpConnection
from dtl_notebook.wire import build_request

SERVER = [sys.executable, "-m", "dtl_notebook.demo.mcp_server"]
TIMEOUT = 180  # bounds a server that never gets ready; every wait ends on readiness
MODEL = "claude-sonnet-4-6"


def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


def stateless_server() -> MCPServer:
    """Two tools; `offer_multiply` adds a third and tells it on the subscription bus only (the
    `subscriptions/listen` streams), never on the request's own stream."""
    server = MCPServer("stateless_demo")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(name="offer_multiply")
    async def offer_multiply(ctx: Context) -> str:
        """Offer the multiply tool and announce the change."""
        server.add_tool(multiply, name="multiply")
        await ctx.notify_tools_changed()
        return "offered multiply"

    return server


class MethodLog:
    """An ASGI wrapper that notes the JSON-RPC method of every POST it passes on."""

    def __init__(self, app: Any) -> None:
        self.app, self.methods = app, list[str]()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def noted() -> Any:
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                body = json.loads(b"".join(chunks) or b"{}")
                self.methods += [
                    m.get("method", "") for m in (body if isinstance(body, list) else [body])
                ]
            return message

        await self.app(scope, noted, send)


@pytest.fixture
def stateless() -> Iterator[tuple[str, MethodLog]]:
    log = MethodLog(stateless_server().streamable_http_app(stateless_http=True))
    with ThreadedServer(log) as served:
        yield f"{served.url}/mcp", log


def _call(s: Session, tool: str, call_id: str, /, **arguments: object) -> ToolResultMessage:
    s.assistant(tool_calls=[ToolCall(id=call_id, name=tool, arguments=arguments)])
    return s.execute(s.pending_calls()[0])


def test_a_stateless_server_needs_no_session_and_tells_changes_on_its_listen_stream(
    stateless: tuple[str, MethodLog],
) -> None:
    url, log = stateless
    s = Session(system="Use the tools.")
    with s.connect_mcp(url, timeout=TIMEOUT) as conn:
        assert isinstance(conn, McpConnection)
        assert conn.protocol_version == "2026-07-28"
        assert sorted(conn.tools) == ["echo", "offer_multiply"]
        s.activate(["echo", "offer_multiply"])
        s.user("offer the multiply tool")
        assert _call(s, "offer_multiply", "c1").text == "offered multiply"
        # the event comes on the listen stream, before the call's answer (the list is then
        # fetched at the end of the tool run) or after it (then at the next turn boundary)
        assert "multiply" in s.registry or conn.wait_changed(TIMEOUT)
        s.user("multiply 6 by 7")
        assert "multiply" in s.registry and "multiply" not in s.active_tools  # deferred
        s.activate(["multiply"])
        assert _call(s, "multiply", "c2", a=6, b=7).text == "42.0"
    assert "initialize" not in log.methods
    assert {"server/discover", "subscriptions/listen"} <= set(log.methods)
    assert log.methods.count("tools/list") == 2  # on connecting, then once after the change


def _list_change_session(protocol: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The demo server's list changes in one session; the revision spoken and the request
    built after each step."""
    s = Session(system="Use the tools.")
    with McpConnection(s, SERVER, timeout=TIMEOUT, protocol=protocol) as conn:
        s.sources.add(conn)  # as connect_mcp does
        s.activate(["echo", "add", "add_tool", "remove_tool", "redefine_echo"])
        s.user("change the tools")
        payloads = [build_request(s, "anthropic", MODEL).payload]
        _call(s, "add_tool", "c1", name="reverse")
        payloads.append(build_request(s, "anthropic", MODEL).payload)
        _call(s, "remove_tool", "c2", name="add")
        payloads.append(build_request(s, "anthropic", MODEL).payload)
        _call(s, "redefine_echo", "c3")
        payloads.append(build_request(s, "anthropic", MODEL).payload)
        return conn.protocol_version, payloads


def test_the_older_revision_keeps_working_and_both_build_the_same_requests() -> None:
    legacy_version, legacy = _list_change_session("legacy")
    modern_version, modern = _list_change_session("auto")
    assert legacy_version is not None and legacy_version < "2026-07-28"
    assert modern_version == "2026-07-28"
    assert modern == legacy  # what the provider caches does not depend on the revision
    assert "reverse" in json.dumps(legacy[-1]["tools"])


def test_an_unknown_protocol_is_named() -> None:
    with pytest.raises(InvalidArgumentError, match="protocol: '2099-01-01' must be one of"):
        McpConnection(Session(system="x"), SERVER, protocol="2099-01-01")
