"""The public contract, executed as written in docs/api.md, section "The public contract".

Every import and call shown there runs here with the attributes and types it documents: the
neutral session, `split_deferred_tools`, `build_request` for the four providers,
`parse_response`, `model_context` and `analyze` in both call forms, `Agent` with
`demo_catalog` on the emulator, `AgentView` / `export_html`, and the `%%agent` magic and the
`%dtl` subcommands in a testing shell. The calls are written out here (not read from
the docs), so the contract holds wherever the package is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from pydantic import BaseModel

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import (
    AssistantMessage,
    SystemUpdate,
    TextPart,
    ToolResultMessage,
    UserMessage,
    split_deferred_tools,
)
from dtl_notebook.cache import analyze
from dtl_notebook.context import model_context
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent
from dtl_notebook.notebook import AgentView, export_html
from dtl_notebook.wire import build_request, parse_response
from tests.support.notebook_shell import line_magic, run_cell, write_capture

PROVIDERS = {
    "anthropic": "claude-sonnet-4-6",
    "openai-responses": "gpt-5.4",
    "openai-chat": "gpt-4.1",
    "kimi": "kimi-k2",
}
OBJECT = {"type": "object", "properties": {}, "additionalProperties": False}


def _tools() -> list[Tool]:
    path = {"type": "string", "description": "File path"}
    return [
        Tool(
            "read_file",
            description="Read a text file.",
            parameters={"type": "object", "properties": {"path": path}, "required": ["path"]},
            execute=lambda path: f"contents of {path}",
            prompt_snippet="Use read_file for files.",
            prompt_guidelines="Prefer read_file over guessing.",
            namespace="files",
        ),
        Tool("base_tool", description="A base tool.", parameters=OBJECT, execute=lambda: "base"),
        Tool(
            "get_weather",
            description="Current weather of a city.",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            execute=lambda city="Paris": {"city": city, "temp_c": 21},
        ),
    ]


def _loaded_session() -> Session:
    """A session whose transcript carries one explicit load point (get_weather)."""
    s = Session(system="You are helpful.", tools=_tools(), active=["tool_search", "read_file"])
    s.user("Weather in Paris?")
    s.assistant(text=None, tool_calls=[ToolCall(id="call_1", name="base_tool", arguments={})])
    s.set_active_tools(["tool_search", "read_file", "base_tool"])
    s.tool_result("call_1", "base", added_tool_names=None, is_error=False)
    s.assistant(tool_calls=[ToolCall(id="call_2", name="tool_search", arguments={})])
    s.set_active_tools([*s.active_tools, "get_weather"])
    s.tool_result("call_2", "found get_weather", added_tool_names=["get_weather"])
    s.assistant(tool_calls=[ToolCall(id="call_3", name="get_weather", arguments={})])
    return s


# -- agent layer ---------------------------------------------------------------------------


def test_tool_takes_the_documented_arguments() -> None:
    tool = _tools()[0]
    assert (tool.name, tool.description, tool.namespace) == (
        "read_file",
        "Read a text file.",
        "files",
    )
    assert tool.parameters["required"] == ["path"]
    assert tool.prompt_snippet == "Use read_file for files."
    assert tool.prompt_guidelines == "Prefer read_file over guessing."
    assert tool.execute is not None and tool.execute(path="a.txt") == "contents of a.txt"
    assert Tool("bare").execute is None


@pytest.mark.parametrize("engine", ["bm25", "regex", "keyword", None])
def test_session_registers_tool_search_for_each_engine(engine: str | None) -> None:
    active = ["tool_search", "read_file"] if engine else ["read_file"]
    s = Session(system="...", tools=_tools(), active=active, search=engine)
    assert isinstance(s.registry["read_file"], Tool)
    assert ("tool_search" in s.registry) is (engine is not None)
    assert s.active_tools == active
    assert isinstance(s.prompt, Mapping)


def test_session_methods_and_transcript_types(tmp_path: Path) -> None:
    s = _loaded_session()
    assert isinstance(s.active_tools, list) and s.active_tools[-1] == "get_weather"
    kinds = [type(m) for m in s.messages if not isinstance(m, SystemUpdate)]
    assert kinds[:3] == [UserMessage, AssistantMessage, ToolResultMessage]
    (marker,) = [m for m in s.messages if isinstance(m, ToolResultMessage) and m.added_tool_names]
    assert (marker.call_id, marker.is_error) == ("call_2", False)
    assert marker.added_tool_names == ["get_weather"]
    s.tool_result("call_3", "timed out", is_error=True)
    assert s.messages[-1].is_error  # type: ignore[union-attr]
    call = ToolCall(id="call_4", name="get_weather", arguments={"city": "Rome"})
    s.assistant(tool_calls=[call])
    result = s.execute(call)
    assert isinstance(result, ToolResultMessage) and result.call_id == "call_4"
    assert "Rome" in str(result.content)
    assistant = AssistantMessage(content=[TextPart(type="text", text="Sunny.")])
    s.append(assistant)
    assert s.messages[-1] == assistant and assistant.text == "Sunny." and not assistant.tool_calls
    for kind in (UserMessage, AssistantMessage, ToolResultMessage, SystemUpdate):
        assert issubclass(kind, BaseModel)
    path = tmp_path / "session.json"
    s.save(path)
    loaded = Session.load(path)
    assert loaded.messages == s.messages and loaded.active_tools == s.active_tools


def test_split_deferred_tools_returns_immediate_and_deferred() -> None:
    s = _loaded_session()
    tools = [s.registry[name] for name in s.active_tools]
    split = split_deferred_tools(tools, s.messages)
    assert all(isinstance(t, Tool) for t in split.immediate)
    assert isinstance(split.deferred, dict) and set(split.deferred) == {"get_weather"}
    assert isinstance(split.deferred["get_weather"], Tool)


# -- wire, context, cache ------------------------------------------------------------------


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_build_request_for_every_provider(provider: str) -> None:
    req = build_request(_loaded_session(), provider=provider, model=PROVIDERS[provider])
    assert isinstance(req.payload, dict) and req.payload["model"] == PROVIDERS[provider]
    assert isinstance(req.mode, str)
    expected = {"anthropic": "tool_reference", "openai-chat": "full_list", "openai-responses": None}
    if expected.get(provider):
        assert req.mode == expected[provider]
    assert isinstance(req.load_points, list) and isinstance(req.notes, list)
    if provider != "openai-chat":
        (point,) = req.load_points  # where get_weather enters: message index, names, JSON path
        assert isinstance(point.message_index, int) and point.tools == ["get_weather"]
        assert isinstance(point.path, str) and point.path


def test_parse_response_gives_a_neutral_message_and_usage() -> None:
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Hello"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }
    reply = parse_response(response, provider="anthropic", model="claude-sonnet-4-6")
    assert isinstance(reply.message, AssistantMessage) and reply.message.text == "Hello"
    assert reply.usage["input_tokens"] == 12


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_model_context_both_call_forms(provider: str) -> None:
    req = build_request(_loaded_session(), provider=provider, model=PROVIDERS[provider])
    ctx = model_context(req)
    again = model_context(req.payload, provider=provider, model=PROVIDERS[provider])
    assert ctx.segments and [s.text for s in ctx.segments] == [s.text for s in again.segments]
    for segment in ctx.segments:
        assert isinstance(segment.kind, str) and isinstance(segment.text, str)
        assert isinstance(segment.tokens, int) and isinstance(segment.source, str)


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_analyze_both_call_forms(provider: str) -> None:
    s = _loaded_session()
    first = build_request(s, provider=provider, model=PROVIDERS[provider])
    s.execute(ToolCall(id="call_3", name="get_weather", arguments={}))
    second = build_request(s, provider=provider, model=PROVIDERS[provider])
    report = analyze([first, second])
    payloads = analyze(
        [first.payload, second.payload], provider=provider, model=PROVIDERS[provider]
    )
    assert len(report) == len(payloads) == 2
    for entry in report:
        for figure in (entry.cached_tokens, entry.written_tokens, entry.uncached_tokens):
            assert isinstance(figure, int) and figure >= 0
        brk = entry.cache_break
        if brk is not None:  # the contract names .cause / .where / .diff without types
            assert isinstance(brk.cause, str) and brk.cause
            assert brk.where is None or isinstance(brk.where, str)
            assert isinstance(brk.diff, list)
    assert [e.cached_tokens for e in report] == [e.cached_tokens for e in payloads]


# -- live and notebook ---------------------------------------------------------------------


def _ran_agent() -> Agent:
    s = Session(tools=demo_catalog(), active=["tool_search"])
    assert 190 <= len(s.registry) <= 230
    agent = Agent(s, provider="anthropic", model="claude-sonnet-4-6", transport="emulator")
    agent.run("What's the weather in Paris?")
    return agent


def test_agent_runs_a_turn_on_the_emulator(tmp_path: Path) -> None:
    agent = _ran_agent()
    assert agent.steps
    for step in agent.steps:
        for name in ("request", "response", "context", "cache"):
            assert getattr(step, name) is not None, name
    markers = [
        m.added_tool_names
        for m in agent.session.messages
        if isinstance(m, ToolResultMessage) and m.added_tool_names
    ]
    assert markers and "get_current_weather" in markers[0]
    view = AgentView(agent)
    assert "text/html" in view._repr_mimebundle_()[0]
    out = tmp_path / "session.html"
    export_html(agent, out)
    assert out.read_text("utf-8").lstrip().lower().startswith("<!doctype html")


def test_agent_magic_and_every_dtl_subcommand(ip: Any, tmp_path: Path) -> None:
    run_cell(ip, '%config AgentMagics.provider = "anthropic"')
    result, _ = run_cell(
        ip, "%%agent --provider openai-responses --model gpt-5.4\nWhat is the ETA of order_42?"
    )
    assert result.success, result.error_in_exec
    assert isinstance(ip.user_ns["agent"], Agent)
    capture = write_capture(ip.user_ns["agent"], tmp_path / "capture.jsonl")
    lines = [
        "tools",
        "search weather",
        "activate get_current_weather",
        "provider kimi",
        "compare",
        "show",
        "diff 1 2",
        f"inspect {capture}",
        f"save {tmp_path / 's.json'}",
        f"load {tmp_path / 's.json'}",
        f"export {tmp_path / 's.html'}",
        "reset",
    ]
    for line in lines:
        line_magic(ip, f"dtl {line}")
    assert (tmp_path / "s.json").is_file() and (tmp_path / "s.html").is_file()
    with pytest.raises(UsageError):
        line_magic(ip, "dtl provider nope")
