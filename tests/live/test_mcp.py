"""MCP servers as a tool source: the real demo server over stdio and streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from dtl_notebook import Session, ToolCall
from dtl_notebook.agent import SystemUpdate, ToolResultMessage
from dtl_notebook.agent.errors import ArgumentTypeError, InvalidArgumentError
from dtl_notebook.live import Agent
from dtl_notebook.live.mcp_client import McpConnection, McpError
from dtl_notebook.wire import build_request
from tests.cache.test_native_tool_changes import CallIfVisible
from tests.support.wire_requests import strip_cache_control

SERVER = [sys.executable, "-m", "dtl_notebook.demo.mcp_server"]
# every wait below ends when the server is ready (its initialize answered, its port open);
# this only bounds a server that never gets there, however busy the machine
TIMEOUT = 180
HANGING = Path(__file__).resolve().parents[1] / "support" / "mcp_hanging_server.py"


def _call(s: Session, tool: str, call_id: str, /, **arguments: object) -> ToolResultMessage:
    s.assistant(tool_calls=[ToolCall(id=call_id, name=tool, arguments=arguments)])
    return s.execute(s.pending_calls()[0])


@pytest.fixture
def stdio() -> Iterator[tuple[Session, McpConnection]]:
    s = Session(system="Use the tools.")
    conn = s.connect_mcp(SERVER, timeout=TIMEOUT)
    assert isinstance(conn, McpConnection)
    try:
        yield s, conn
    finally:
        conn.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_url() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = _free_port()
    server = subprocess.Popen(
        [*SERVER, "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and server.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)  # polled until the port opens, not a fixed wait
        else:
            pytest.fail("the demo MCP server did not start listening")
        yield f"http://127.0.0.1:{port}/mcp", server
    finally:
        server.kill()
        server.wait(TIMEOUT)


def test_server_tools_enter_the_registry_deferred_and_searchable(
    stdio: tuple[Session, McpConnection],
) -> None:
    s, conn = stdio
    assert {"echo", "add", "add_tool", "remove_tool"} <= set(conn.tools)
    assert s.registry["echo"].namespace == "demo_mcp"
    assert "echo" not in s.active_tools  # deferred until found
    s.user("add 2 and 3")
    found = _call(s, "tool_search", "s1", query="add two numbers")
    assert "add" in (found.added_tool_names or [])
    assert _call(s, "add", "c1", a=2, b=3).text == "5.0"


def test_list_changed_mid_session_becomes_a_system_update(
    stdio: tuple[Session, McpConnection],
) -> None:
    s, _ = stdio
    s.activate(["echo", "add", "add_tool", "remove_tool", "redefine_echo"])
    s.user("change the tools")
    assert _call(s, "add_tool", "c1", name="reverse").text == "added reverse"
    assert "reverse" in s.registry and "reverse" not in s.active_tools  # a new tool: deferred
    _call(s, "remove_tool", "c2", name="add")
    removal = s.messages[-1]
    assert isinstance(removal, SystemUpdate) and removal.tools_removed == ["add"]
    assert "add" not in s.registry
    _call(s, "redefine_echo", "c3")
    redefinition = s.messages[-1]
    assert isinstance(redefinition, SystemUpdate) and redefinition.redefined == ["echo"]
    assert "times" in redefinition.tools_added[0].parameters["properties"]
    refused = _call(s, "add", "c4", a=1, b=1)
    assert refused.is_error
    assert _call(s, "echo", "c5", text="hi", times=2).text == "hi hi"


def test_native_search_keeps_the_declared_tools_through_list_changes(
    stdio: tuple[Session, McpConnection],
) -> None:
    """Anthropic's server search declares every registered tool: a server's removal and
    redefinition leave tools[] as it was (the removed tool stays declared), and a tool the
    server adds is declared deferred after the others."""
    s, _ = stdio
    s.activate(["echo", "add", "add_tool", "remove_tool", "redefine_echo"])
    s.user("change the tools")
    native = {"search": "native-bm25"}
    before = build_request(s, "anthropic", "claude-opus-4-8", **native).payload["tools"]
    _call(s, "remove_tool", "c1", name="add")
    _call(s, "redefine_echo", "c2")
    changed = build_request(s, "anthropic", "claude-opus-4-8", **native)
    assert strip_cache_control(changed.payload["tools"]) == strip_cache_control(before)
    assert [lp.kind for lp in changed.load_points][-2:] == ["removal", "redefinition"]
    _call(s, "add_tool", "c3", name="reverse")
    grown = build_request(s, "anthropic", "claude-opus-4-8", **native).payload["tools"]
    assert strip_cache_control(grown[:-1]) == strip_cache_control(before)
    assert grown[-1]["name"] == "reverse" and grown[-1]["defer_loading"] is True
    assert _call(s, "add", "c4", a=1, b=1).is_error  # withdrawn: refused locally


def test_hosted_search_keeps_tools_fixed_through_a_removal_and_a_redefinition(
    stdio: tuple[Session, McpConnection],
) -> None:
    """OpenAI's hosted search declares every registered tool, grouped by the server's
    namespace: the server's removal and redefinition are told in the input (a developer
    notice, the versioned definition in an additional_tools item), tools[] stays as it was."""
    s, _ = stdio
    s.activate(["echo", "add", "add_tool", "remove_tool", "redefine_echo"])
    s.user("change the tools")
    hosted = {"search": "hosted"}
    before = build_request(s, "openai-responses", "gpt-5.6", **hosted).payload["tools"]
    _call(s, "remove_tool", "c1", name="add")
    _call(s, "redefine_echo", "c2")
    changed = build_request(s, "openai-responses", "gpt-5.6", **hosted)
    assert changed.payload["tools"] == before
    item = changed.payload["input"][-1]
    assert item["type"] == "additional_tools" and item["tools"][0]["name"] == "echo__v2"
    assert _call(s, "add", "c3", a=1, b=1).is_error  # withdrawn: refused locally


def test_hosted_search_keeps_tools_fixed_when_the_server_adds_a_tool(
    stdio: tuple[Session, McpConnection],
) -> None:
    """A tool the server adds mid-session is recorded as registered where the list changed:
    hosted search declares it there (an additional_tools item), tools[] stays byte-identical,
    and the model can call it."""
    s, _ = stdio
    s.activate(["echo", "add_tool"])
    s.user("add a tool")
    hosted = {"search": "hosted"}
    before = build_request(s, "openai-responses", "gpt-5.6", **hosted)
    _call(s, "add_tool", "c1", name="reverse")
    registration = s.messages[-1]
    assert isinstance(registration, SystemUpdate)
    assert registration.tools_registered == ["reverse"] and not registration.tools_added
    after = build_request(s, "openai-responses", "gpt-5.6", **hosted)
    assert after.payload["tools"] == before.payload["tools"]
    head = len(before.payload["input"])
    assert after.payload["input"][:head] == before.payload["input"]
    item = after.payload["input"][-1]
    assert item["type"] == "additional_tools"
    assert [t["name"] for t in item["tools"]] == ["reverse"]
    policy = CallIfVisible("reverse", {"text": "abc"})
    agent = Agent(s, "openai-responses", "gpt-5.6", policy=policy, **hosted)
    steps = agent.run("Reverse abc.").steps
    assert policy.seen and steps[0].results[0].text == "cba" and not steps[0].results[0].is_error
    assert "reverse" in s.active_tools  # loaded where registered, activated when called
    assert all(step.request.payload["tools"] == before.payload["tools"] for step in steps)


def test_a_killed_server_gives_a_clear_error_and_a_usable_session(
    stdio: tuple[Session, McpConnection],
) -> None:
    s, conn = stdio
    s.activate(["echo", "crash"])
    s.user("crash it")
    crashed = _call(s, "crash", "c1")
    assert crashed.is_error and "MCP server 'demo_mcp'" in crashed.text
    after = _call(s, "echo", "c2", text="x")
    assert after.is_error and "MCP server 'demo_mcp'" in after.text
    s.assistant("The server is gone.")
    s.user("still there?")  # the session goes on
    conn.close()
    assert "echo" not in s.registry and s.messages[-1].tools_removed == ["echo", "crash"]  # type: ignore[union-attr]


def test_streamable_http_server(http_url: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, server = http_url
    s = Session()
    conn = s.connect_mcp(url, namespace="remote", timeout=TIMEOUT)
    try:
        assert s.registry["add"].namespace == "remote"
        s.activate(["add", "add_tool"])
        s.user("go")
        assert _call(s, "add", "c1", a=1, b=2).text == "3.0"
        _call(s, "add_tool", "c2", name="word_count")
        assert "word_count" in s.registry
        server.kill()
        server.wait(TIMEOUT)
        dead = _call(s, "add", "c3", a=1, b=1)
        assert dead.is_error and "MCP server 'demo_mcp'" in dead.text
    finally:
        conn.close()


def test_refresh_applies_the_list_at_once(stdio: tuple[Session, McpConnection]) -> None:
    s, conn = stdio
    conn.refresh()
    assert set(conn.tools) <= set(s.registry.names())


@pytest.mark.parametrize(
    ("target", "error", "needle"),
    [
        (42, ArgumentTypeError, "command_or_url"),
        ([], InvalidArgumentError, "command_or_url"),
        ("", InvalidArgumentError, "command_or_url"),
        ([sys.executable, "-c", "pass"], McpError, "MCP server"),
    ],
)
def test_bad_targets_are_named(target: object, error: type[Exception], needle: str) -> None:
    s = Session()
    before = s.registry.names()
    with pytest.raises(error, match=needle):
        s.connect_mcp(target, timeout=TIMEOUT)  # type: ignore[arg-type]
    assert s.registry.names() == before and len(s.sources) == 0


def _hanging_servers() -> list[psutil.Process]:
    """The hanging servers this test process started and has not reaped."""
    return [p for p in psutil.Process().children(recursive=True) if str(HANGING) in p.cmdline()]


def _eventually(condition: Callable[[], bool]) -> bool:
    """Whether `condition` holds, polled until it does (TIMEOUT bounds a hang)."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize(
    ("hang_at", "timeout", "what"),
    # the server never answers `hang_at`: the timeout is what ends the wait (for tools/list,
    # long enough for initialize to be answered first however busy the machine)
    [("initialize", 0.5, "connect"), ("tools/list", 10.0, "tools/list")],
)
def test_a_server_hung_while_connecting_is_stopped_with_its_thread(
    hang_at: str, timeout: float, what: str
) -> None:
    threads = set(threading.enumerate())
    s = Session()
    with pytest.raises(McpError, match=f"did not answer {what} within"):
        s.connect_mcp([sys.executable, str(HANGING), hang_at], timeout=timeout)
    assert _eventually(lambda: not _hanging_servers()), "the server process is still running"
    assert _eventually(lambda: not set(threading.enumerate()) - threads), "its thread is left"
    assert len(s.sources) == 0 and s.registry.names() == ["tool_search"]
