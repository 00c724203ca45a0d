"""`%load_ext dtl_notebook`, `%config AgentMagics.*`, `%%agent` and every `%dtl` subcommand,
run in an in-process IPython shell (see notebook_shell.py)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import dtl_notebook
from dtl_notebook import Session, ToolResultMessage, UserMessage
from dtl_notebook.demo import DEMO_MODELS, demo_session
from dtl_notebook.live import Agent
from dtl_notebook.live.transport import KEY_VARIABLES
from dtl_notebook.notebook import AgentView
from dtl_notebook.notebook.magics import AgentMagics
from tests.support.notebook_shell import (
    ETA,
    WEATHER,
    WIDGET_MIME,
    FlakyTransport,
    agent_magics,
    line_magic,
    mimetypes,
    run_cell,
    write_capture,
)

PROVIDERS = ["anthropic", "openai-responses", "openai-chat", "kimi"]
SUBCOMMANDS = [
    "tools",
    "search",
    "activate",
    "provider",
    "compare",
    "show",
    "diff",
    "inspect",
    "save",
    "load",
    "export",
    "reset",
    "status",
]
OPTIONS = [
    "--session",
    "--provider",
    "--model",
    "--search",
    "--load-mode",
    "--live",
    "--threads",
    "--max-steps",
    "--keep-warm",
]
ENGINES = ["bm25", "regex", "keyword", "native-bm25", "native-regex", "hosted", "native-client"]
LOAD_MODES = ["additional_tools", "tool_search", "full_list"]


@pytest.fixture
def ran(ip: InteractiveShell) -> InteractiveShell:
    """A shell whose `agent` session has run one turn of three requests."""
    result, _ = run_cell(ip, f"%%agent\n{ETA}")
    assert result.success, result.error_in_exec
    assert len(ip.user_ns["agent"].steps) == 3
    return ip


def ok(ip: InteractiveShell, source: str) -> Any:
    result, captured = run_cell(ip, source)
    assert result.error_in_exec is None, result.error_in_exec
    assert result.success
    assert "Traceback" not in captured.stdout + captured.stderr
    return captured


def usage_error(ip: InteractiveShell, source: str) -> str:
    """Run a cell that must fail with one red UsageError line; return the message."""
    result, captured = run_cell(ip, source)
    assert isinstance(result.error_in_exec, UsageError), repr(result.error_in_exec)
    assert "Traceback" not in captured.stdout + captured.stderr
    lines = [line for line in captured.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("UsageError: "), captured.stderr
    return str(result.error_in_exec)


def agent(ip: InteractiveShell, name: str = "agent") -> Agent:
    value = ip.user_ns[name]
    assert isinstance(value, Agent)
    return value


def user_texts(session: Session) -> list[str]:
    texts = []
    for message in session.messages:
        if isinstance(message, UserMessage):
            content = message.content
            texts.append(content if isinstance(content, str) else "".join(p.text for p in content))
    return texts


# -- loading the extension ---------------------------------------------------------------------
def test_importing_the_package_does_not_import_the_notebook_layer() -> None:
    code = (
        "import sys, dtl_notebook\n"
        "print([m for m in ('dtl_notebook.notebook', 'IPython', 'ipywidgets', 'anywidget')"
        " if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    assert out.stdout.strip() == "[]"


def test_load_ext_registers_the_magics_once(ip: InteractiveShell) -> None:
    magics = agent_magics(ip)
    assert isinstance(magics, AgentMagics)
    assert ip.find_cell_magic("agent") is not None
    assert ip.find_line_magic("agent") is not None
    assert ip.find_line_magic("dtl") is not None
    _, captured = run_cell(ip, "%load_ext dtl_notebook")
    dtl_notebook.load_ipython_extension(ip)
    dtl_notebook.load_ipython_extension(ip)
    assert agent_magics(ip) is magics
    assert sum(isinstance(c, AgentMagics) for c in ip.configurables) == 1
    assert "Traceback" not in captured.stdout + captured.stderr


def test_reload_ext_keeps_working_on_the_same_session(ran: InteractiveShell) -> None:
    ip = ran
    before = agent_magics(ip)
    session_agent = agent(ip)
    ok(ip, "%reload_ext dtl_notebook")
    after = agent_magics(ip)
    assert isinstance(after, AgentMagics) and after is not before
    assert sum(isinstance(c, AgentMagics) for c in ip.configurables) == 1
    assert "text/html" in ip.display_formatter.format(session_agent.session)[0]
    ok(ip, f"%%agent\n{WEATHER}")
    assert agent(ip) is session_agent and session_agent.turns == 2


def test_unload_removes_the_magics_and_the_html_formatters(ip: InteractiveShell) -> None:
    session = demo_session()
    assert "text/html" in ip.display_formatter.format(session)[0]
    ok(ip, "%unload_ext dtl_notebook")
    assert agent_magics(ip) is None
    assert ip.find_cell_magic("agent") is None
    assert ip.find_line_magic("agent") is None
    assert ip.find_line_magic("dtl") is None
    assert not any(isinstance(c, AgentMagics) for c in ip.configurables)
    assert "text/html" not in ip.display_formatter.format(session)[0]
    html = ip.display_formatter.formatters["text/html"]
    for cls in (Session, Agent):
        with pytest.raises(KeyError):
            html.lookup_by_type(cls)
    ok(ip, "%load_ext dtl_notebook")
    assert ip.find_cell_magic("agent") is not None
    assert "text/html" in ip.display_formatter.format(session)[0]


def test_unload_ipython_extension_called_directly(ip: InteractiveShell) -> None:
    dtl_notebook.unload_ipython_extension(ip)
    assert ip.find_line_magic("dtl") is None
    assert "text/html" not in ip.display_formatter.format(demo_session())[0]
    dtl_notebook.unload_ipython_extension(ip)  # a second unload is harmless
    dtl_notebook.load_ipython_extension(ip)
    assert ip.find_line_magic("dtl") is not None


# -- %config -----------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", PROVIDERS)
def test_config_provider_sets_the_provider_of_new_sessions(
    ip: InteractiveShell, provider: str
) -> None:
    ok(ip, f'%config AgentMagics.provider = "{provider}"')
    assert agent_magics(ip).provider == provider
    ok(ip, f"%%agent\n{ETA}")
    assert agent(ip).provider == provider
    assert agent(ip).model == DEMO_MODELS[provider]
    assert {s.request.provider for s in agent(ip).steps} == {provider}


def test_config_model_search_and_max_steps(ip: InteractiveShell) -> None:
    ok(ip, '%config AgentMagics.model = "claude-opus-4-8"')
    ok(ip, '%config AgentMagics.search = "regex"')
    ok(ip, "%config AgentMagics.max_steps = 1")
    captured = ok(ip, f"%%agent\n{ETA}")
    a = agent(ip)
    assert a.model == "claude-opus-4-8"
    assert a.session.search == "regex"
    assert a.max_steps == 1 and len(a.steps) == 1
    assert "step limit (1)" in captured.stdout


def test_config_does_not_change_an_existing_session(ran: InteractiveShell) -> None:
    ok(ran, '%config AgentMagics.provider = "kimi"')
    ok(ran, f"%%agent\n{WEATHER}")
    assert agent(ran).provider == "anthropic"


@pytest.mark.parametrize(
    ("trait", "value", "words"),
    [
        ("provider", '"nope"', PROVIDERS),
        ("transport", '"pigeon"', ["emulator", "live"]),
        ("search", '"grep"', ENGINES),
        ("load_mode", '"eager"', LOAD_MODES),
        ("max_steps", "0", ["less than 1"]),
        ("max_steps", "101", ["greater than 100"]),
    ],
)
def test_config_rejects_invalid_values(
    ip: InteractiveShell,
    caplog: pytest.LogCaptureFixture,
    trait: str,
    value: str,
    words: list[str],
) -> None:
    """traitlets names the trait, the value and the choices (or the bound)."""
    magics = agent_magics(ip)
    before = getattr(magics, trait)
    with caplog.at_level(logging.ERROR):
        run_cell(ip, f"%config AgentMagics.{trait} = {value}")
    assert getattr(magics, trait) == before
    assert trait in caplog.text and value.strip('"') in caplog.text
    for word in words:
        assert repr(word) in caplog.text or word in caplog.text


def test_config_live_transport_without_a_key(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    ok(ip, '%config AgentMagics.transport = "live"')
    message = usage_error(ip, f"%%agent\n{ETA}")
    assert "ANTHROPIC_API_KEY" in message
    assert "agent" not in ip.user_ns


# -- %%agent -----------------------------------------------------------------------------------
def test_agent_runs_a_turn_and_shows_the_view(ip: InteractiveShell) -> None:
    captured = ok(ip, f"%%agent\n{ETA}")
    a = agent(ip)
    assert a.turns == 1 and len(a.steps) == 3
    assert a.provider == "anthropic" and a.transport.name == "emulator"
    assert user_texts(a.session) == [ETA]
    assert captured.stdout.startswith("anthropic: ")
    assert "order_42" in captured.stdout
    outputs = mimetypes(captured)
    # The saved turn, the widget, then the saved turn brought up to date after the turn.
    saved = ["text/html", "text/plain"]
    assert outputs == [saved, [WIDGET_MIME, "text/plain"], saved]
    assert "Request 3 · turn 1" in captured.outputs[-1].data["text/html"]
    widget_line = captured.outputs[1].data["text/plain"]
    assert widget_line == "session `agent`: live view (its saved turn is above)"
    assert (
        captured.outputs[-1]
        .data["text/plain"]
        .startswith("AgentView(provider=anthropic, requests=3,")
    )
    view = agent_magics(ip).views["agent"]
    assert isinstance(view, AgentView) and view.agent is a and view.count == 3


def test_agent_continues_the_same_session_in_a_new_live_view(ran: InteractiveShell) -> None:
    first = agent(ran)
    view = agent_magics(ran).views["agent"]
    captured = ok(ran, f"%%agent\n{WEATHER}")
    assert agent(ran) is first and first.turns == 2
    latest = agent_magics(ran).views["agent"]
    assert latest is not view and latest.count == len(first.steps) == 6
    assert user_texts(first.session) == [ETA, WEATHER]
    # The earlier cell's output became the static snapshot of its own turn, its view closed.
    assert first.listeners == [latest._on_event] and view.comm is None
    snapshot = captured.outputs[0].data
    assert WIDGET_MIME not in snapshot and snapshot["text/plain"].startswith(
        "AgentView(provider=anthropic, requests=3,"
    )
    assert "Request 3 · turn 1" in snapshot["text/html"]
    assert "Request 4" not in snapshot["text/html"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_agent_provider_option_on_a_new_session(ip: InteractiveShell, provider: str) -> None:
    captured = ok(ip, f"%%agent --provider {provider}\n{ETA}")
    a = agent(ip)
    assert (a.provider, a.model) == (provider, DEMO_MODELS[provider])
    assert {s.request.provider for s in a.steps} == {provider}
    assert captured.stdout.startswith(f"{provider}: ")
    assert captured.outputs[-1].data["text/plain"].startswith(f"AgentView(provider={provider},")


@pytest.mark.parametrize("provider", ["openai-responses", "openai-chat", "kimi"])
def test_agent_provider_option_switches_an_existing_session(
    ran: InteractiveShell, provider: str
) -> None:
    first = agent(ran)
    messages = len(first.session.messages)
    ok(ran, f"%%agent --provider {provider}\n{WEATHER}")
    assert agent(ran) is first
    assert (first.provider, first.model) == (provider, DEMO_MODELS[provider])
    assert len(first.session.messages) > messages
    assert [s.request.provider for s in first.steps[:3]] == ["anthropic"] * 3
    assert {s.request.provider for s in first.steps[3:]} == {provider}


def test_agent_model_option(ip: InteractiveShell) -> None:
    ok(ip, f"%%agent --model claude-opus-4-8\n{ETA}")
    assert agent(ip).model == "claude-opus-4-8"
    assert {s.request.model for s in agent(ip).steps} == {"claude-opus-4-8"}
    ok(ip, f"%%agent --provider openai-chat --model gpt-4o\n{WEATHER}")
    assert (agent(ip).provider, agent(ip).model) == ("openai-chat", "gpt-4o")


@pytest.mark.parametrize("engine", ["bm25", "regex", "keyword"])
def test_agent_local_search_engines(ip: InteractiveShell, engine: str) -> None:
    ok(ip, f"%%agent --search {engine}\nshipping")
    a = agent(ip)
    assert a.session.search == engine
    assert "search" not in a.options


@pytest.mark.parametrize(
    ("provider", "engine", "mode"),
    [
        ("anthropic", "native-bm25", "native_search"),
        ("anthropic", "native-regex", "native_search"),
        ("openai-responses", "hosted", "native_hosted"),
        ("openai-responses", "native-client", "native_client"),
    ],
)
def test_agent_native_search(ip: InteractiveShell, provider: str, engine: str, mode: str) -> None:
    ok(ip, f"%%agent --provider {provider} --search {engine}\n{ETA}")
    a = agent(ip)
    assert a.options.get("search") == engine
    assert {s.request.mode for s in a.steps} == {mode}


def test_agent_native_search_on_an_existing_session(ran: InteractiveShell) -> None:
    ok(ran, f"%%agent --search native-bm25\n{WEATHER}")
    a = agent(ran)
    assert a.options.get("search") == "native-bm25"
    assert [s.request.mode for s in a.steps[3:]] == ["native_search"] * (len(a.steps) - 3)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--search hosted", "native-bm25, native-regex"),
        ("--search native-client", "native-bm25, native-regex"),
        ("--load-mode tool_search", "openai-responses only"),
    ],
)
def test_options_are_checked_against_the_default_provider(
    ip: InteractiveShell, line: str, expected: str
) -> None:
    """Without --provider, a new session gets the default provider (anthropic): an option
    that does not apply to it is a usage error, not a session that fails every turn."""
    assert expected in usage_error(ip, f"%%agent {line}\n{ETA}")
    ok(ip, f"%%agent\n{ETA}")
    assert agent(ip).turns == 1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--search hosted", "native-bm25, native-regex"),
        ("--load-mode tool_search", "openai-responses only"),
    ],
)
def test_options_are_checked_against_the_session_provider(
    ran: InteractiveShell, line: str, expected: str
) -> None:
    a = agent(ran)
    options = dict(a.options)
    assert expected in usage_error(ran, f"%%agent {line}\n{WEATHER}")
    assert a.options == options and a.provider == "anthropic"
    ok(ran, f"%%agent\n{WEATHER}")
    assert a.turns == 2


def test_agent_local_search_cannot_change_on_an_existing_session(ran: InteractiveShell) -> None:
    message = usage_error(ran, f"%%agent --search regex\n{WEATHER}")
    assert "bm25" in message and "--session" in message
    assert agent(ran).session.search == "bm25" and agent(ran).turns == 1


@pytest.mark.parametrize(
    ("load_mode", "mode"),
    [
        ("additional_tools", "additional_tools"),
        ("tool_search", "tool_search"),
        ("full_list", "full_list"),
    ],
)
def test_agent_load_mode(ip: InteractiveShell, load_mode: str, mode: str) -> None:
    ok(ip, f"%%agent --provider openai-responses --load-mode {load_mode}\n{ETA}")
    a = agent(ip)
    assert a.options.get("load_mode") == load_mode
    assert {s.request.mode for s in a.steps} == {mode}


def test_agent_max_steps(ip: InteractiveShell) -> None:
    captured = ok(ip, f"%%agent --max-steps 2\n{ETA}")
    a = agent(ip)
    assert a.max_steps == 2 and len(a.steps) == 2
    assert "(stopped: step limit (2) reached)" in captured.stdout


def test_agent_session_option(ip: InteractiveShell) -> None:
    ok(ip, f"%%agent --session ops --provider kimi\n{ETA}")
    assert "agent" not in ip.user_ns
    assert agent(ip, "ops").provider == "kimi"
    assert agent_magics(ip).views["ops"].agent is agent(ip, "ops")
    ok(ip, f"%%agent\n{ETA}")
    assert agent(ip) is not agent(ip, "ops") and agent(ip).provider == "anthropic"


def test_agent_session_must_be_a_python_name(ip: InteractiveShell) -> None:
    message = usage_error(ip, "%%agent --session 1st\nhi")
    assert "--session" in message and "1st" in message
    assert "1st" not in ip.user_ns


def test_agent_session_name_taken_by_another_value(ip: InteractiveShell) -> None:
    ip.user_ns["taken"] = 5
    message = usage_error(ip, "%%agent --session taken\nhi")
    assert "taken" in message and "not an Agent" in message
    assert ip.user_ns["taken"] == 5


@pytest.mark.parametrize("provider", PROVIDERS)
def test_agent_live_without_a_key_names_the_variable(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    variable = KEY_VARIABLES[provider]
    monkeypatch.delenv(variable, raising=False)
    message = usage_error(ip, f"%%agent --live --provider {provider}\n{ETA}")
    assert variable in message
    assert "agent" not in ip.user_ns


def test_agent_live_without_a_key_leaves_an_existing_session(
    ran: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    first = agent(ran)
    messages = list(first.session.messages)
    assert "ANTHROPIC_API_KEY" in usage_error(ran, f"%%agent --live\n{WEATHER}")
    assert first.transport.name == "emulator"
    assert first.session.messages == messages and first.turns == 1


def test_agent_live_with_a_key_switches_to_the_live_transport(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No request leaves the machine: the live transport is replaced by a stand-in that
    records how it was made and answers through the emulator."""
    from dtl_notebook.notebook import sessions as sessions_module

    made: list[str] = []

    def fake_live(provider: str, api_key: str | None = None, base_url: str | None = None) -> Any:
        made.append(provider)
        transport = FlakyTransport(fail_at=0, provider=provider)
        transport.name = "live"
        return transport

    monkeypatch.setenv("MOONSHOT_API_KEY", "test-key-not-real")
    monkeypatch.setattr(sessions_module, "live_transport", fake_live)
    captured = ok(ip, f"%%agent --live --provider kimi\n{ETA}")
    a = agent(ip)
    assert made == ["kimi"]
    assert a.transport.name == "live"
    assert captured.stdout.startswith("kimi: ")
    assert agent_magics(ip).views["agent"].header["label"] == "live"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_config_live_transport_with_a_key_builds_a_live_session(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    """`%dtl tools` creates the session without running a turn: nothing is sent."""
    monkeypatch.setenv(KEY_VARIABLES[provider], "test-key-not-real")
    ok(ip, f'%config AgentMagics.provider = "{provider}"')
    ok(ip, '%config AgentMagics.transport = "live"')
    line_magic(ip, "dtl tools")
    a = agent(ip)
    assert a.provider == provider and a.steps == []
    assert a.transport.name == "live"


def test_interpolation_from_the_user_namespace(ip: InteractiveShell) -> None:
    ip.user_ns["order"] = "order_42"
    ip.user_ns["n"] = 3
    ok(ip, "%%agent\nETA of {order} in {n} days? Literal {{order}} and {{ }}; {missing} stays")
    (text,) = user_texts(agent(ip).session)
    assert text == "ETA of order_42 in 3 days? Literal {order} and { }; {missing} stays"


def test_interpolation_to_nothing_is_an_empty_cell(ip: InteractiveShell) -> None:
    ip.user_ns["blank"] = "   "
    assert "empty cell" in usage_error(ip, "%%agent\n{blank}\n")
    assert "agent" not in ip.user_ns


@pytest.mark.parametrize("source", ["%%agent\n", "%%agent\n   \n\n", "%%agent --provider kimi\n"])
def test_empty_cell_is_a_usage_error(ip: InteractiveShell, source: str) -> None:
    assert "empty" in usage_error(ip, source)  # IPython itself rejects a cell with no body
    assert "agent" not in ip.user_ns


def test_line_magic_form_is_a_usage_error(ip: InteractiveShell) -> None:
    assert "cell magic" in usage_error(ip, "%agent hello")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--provider nope", f"--provider must be one of {', '.join(PROVIDERS)}, got 'nope'"),
        ("--provider openai", "did you mean openai-responses or openai-chat?"),
        ("--search grep", ", ".join(ENGINES)),
        ("--provider openai-responses --load-mode eager", ", ".join(LOAD_MODES)),
        ("--max-steps 0", "between 1 and 100"),
        ("--max-steps 101", "between 1 and 100"),
        ("--max-steps many", "many"),
        ("--bogus", "%%agent takes no --bogus"),
        ("--provider kimi --search hosted", "does not apply to kimi"),
        ("--provider anthropic --search native-client", "native-bm25, native-regex"),
        ("--provider anthropic --load-mode tool_search", "openai-responses only"),
        ('--provider "anthropic', "quotation"),
    ],
)
def test_bad_options_are_usage_errors(ip: InteractiveShell, line: str, expected: str) -> None:
    message = usage_error(ip, f"%%agent {line}\n{ETA}")
    assert expected in message
    assert "agent" not in ip.user_ns


def test_bad_provider_leaves_an_existing_session(ran: InteractiveShell) -> None:
    first = agent(ran)
    messages = list(first.session.messages)
    usage_error(ran, f"%%agent --provider nope\n{WEATHER}")
    assert first.provider == "anthropic" and first.session.messages == messages


def test_provider_failure_is_one_line_and_changes_nothing(ran: InteractiveShell) -> None:
    ip = ran
    a = agent(ip)
    a.use_transport(FlakyTransport(fail_at=2))  # the second request of the next turn fails
    view = agent_magics(ip).views["agent"]
    messages = [m.model_dump() for m in a.session.messages]
    active = list(a.session.active_tools)
    prompt = dict(a.session.prompt)
    steps, turns = list(a.steps), a.turns
    result, captured = run_cell(ip, f"%%agent\n{WEATHER}")
    error = result.error_in_exec
    assert error is not None and not isinstance(error, UsageError)
    rendered = error._render_traceback_()  # type: ignore[attr-defined]
    assert len(rendered) == 1 and "\n" not in rendered[0]
    assert "overloaded_error" in rendered[0] and "529" in rendered[0]
    lines = [line for line in captured.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and "overloaded_error" in lines[0]
    assert "Traceback" not in captured.stdout + captured.stderr
    assert [m.model_dump() for m in a.session.messages] == messages
    assert a.session.active_tools == active
    assert dict(a.session.prompt) == prompt
    assert a.steps == steps and a.turns == turns
    view = agent_magics(ip).views["agent"]  # the failed cell's own live view
    assert view.count == len(view.records) == 3
    assert "turn failed" in (view.header["error"] or "")
    ok(ip, f"%%agent\n{WEATHER}")  # the next turn works on the untouched session
    assert a.turns == 2 and agent_magics(ip).views["agent"].count == len(a.steps)


# -- the magics' documentation -------------------------------------------------------------------
def test_agent_docstring_documents_every_option(ip: InteractiveShell) -> None:
    doc = ip.find_cell_magic("agent").__doc__ or ""
    helptext = AgentMagics.agent.parser.format_help()  # type: ignore[attr-defined]
    flat = " ".join(re.sub(r"-\s*\n\s*", "-", doc).split())  # argparse wraps at hyphens
    for option in OPTIONS:
        assert option in doc and option in helptext
    for word in [*PROVIDERS, *ENGINES, *LOAD_MODES, "{name}"]:
        assert word in flat, word


def test_dtl_docstring_names_every_subcommand(ip: InteractiveShell) -> None:
    doc = ip.find_line_magic("dtl").__doc__ or ""
    for name in SUBCOMMANDS:
        assert name in doc, name
    assert "--help" in doc and "--session" in doc


# -- %dtl ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_dtl_subcommand_help(ip: InteractiveShell, name: str) -> None:
    value, captured = line_magic(ip, f"dtl {name} --help")
    assert value is None
    assert captured.stdout.startswith(f"usage: %dtl {name}")
    assert "--session" in captured.stdout
    assert "agent" not in ip.user_ns  # help runs nothing


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_dtl_help_lists_the_subcommands(ip: InteractiveShell, flag: str) -> None:
    result, captured = run_cell(ip, f"%dtl {flag}")
    assert result.error_in_exec is None, repr(result.error_in_exec)
    assert captured.stdout.startswith("usage: %dtl")
    for name in SUBCOMMANDS:
        assert name in captured.stdout


@pytest.mark.parametrize("line", ["%dtl frobnicate", "%dtl"])
def test_dtl_unknown_or_missing_subcommand_lists_the_valid_ones(
    ip: InteractiveShell, line: str
) -> None:
    message = usage_error(ip, line)
    assert ", ".join(SUBCOMMANDS) in message
    if "frobnicate" in line:
        assert "frobnicate" in message


def test_dtl_unparseable_line(ip: InteractiveShell) -> None:
    assert "quotation" in usage_error(ip, "%dtl search 'unterminated")


def test_dtl_session_must_be_a_python_name(ip: InteractiveShell) -> None:
    message = usage_error(ip, "%dtl tools --session 1st")
    assert "--session" in message and "1st" in message
    assert "1st" not in ip.user_ns


def test_dtl_session_taken_by_another_value(ip: InteractiveShell) -> None:
    ip.user_ns["taken"] = "text"
    assert "not an Agent" in usage_error(ip, "%dtl tools --session taken")
    assert ip.user_ns["taken"] == "text"


def test_dtl_tools(ran: InteractiveShell) -> None:
    value, _ = line_magic(ran, "dtl tools")
    a = agent(ran)
    html, text = value._repr_html_(), repr(value)
    assert "<table" in html and f"of {len(a.session.registry)} tools" in html
    starred = [line.split()[1] for line in text.splitlines() if line.startswith("*")]
    assert starred == [t.name for t in a.session.registry if t.name in a.session.active_tools]
    assert re.search(r"<mark [^>]*>after message #", html)  # the tools the search loaded
    assert "get_shipping_eta  after message #" in text


def test_dtl_tools_query_filters(ran: InteractiveShell) -> None:
    value, _ = line_magic(ran, "dtl tools weather")
    lines = repr(value).splitlines()
    assert lines
    registry = agent(ran).session.registry
    for line in lines:
        tool = registry[line[2:].split()[0]]
        assert "weather" in f"{tool.name} {tool.description}".lower()
    assert f"{len(lines)} of {len(registry)} tools" in value._repr_html_()


def test_dtl_tools_creates_the_default_session(ip: InteractiveShell) -> None:
    value, _ = line_magic(ip, "dtl tools")
    assert isinstance(ip.user_ns["agent"], Agent)
    assert "<table" in value._repr_html_()


def test_dtl_search_activates_nothing(ran: InteractiveShell) -> None:
    a = agent(ran)
    active, messages = list(a.session.active_tools), len(a.session.messages)
    value, _ = line_magic(ran, "dtl search weather forecast --limit 3")
    lines = repr(value).splitlines()
    assert len(lines) == 3 and lines[0].startswith("1. ")
    assert all(line.split()[1] in a.session.registry for line in lines)
    assert "nothing activated" in value._repr_html_()
    assert a.session.active_tools == active and len(a.session.messages) == messages


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("dtl search", "%dtl search needs QUERY"),
        ("dtl search weather --limit 0", "limit"),
        ("dtl search weather --limit -3", "limit"),
        ("dtl search weather --limit x", "between 1 and 50, got 'x'"),
    ],
)
def test_dtl_search_bad_arguments(ran: InteractiveShell, line: str, expected: str) -> None:
    assert expected in usage_error(ran, "%" + line)


def test_dtl_activate_appends_without_a_load_point(ran: InteractiveShell) -> None:
    a = agent(ran)
    active, messages = list(a.session.active_tools), list(a.session.messages)
    _, captured = line_magic(ran, "dtl activate get_current_weather get_weather_forecast")
    assert a.session.active_tools == [*active, "get_current_weather", "get_weather_forecast"]
    assert a.session.messages == messages  # no marker written
    assert "get_current_weather" in captured.stdout and "no load point" in captured.stdout
    _, again = line_magic(ran, "dtl activate get_current_weather")
    assert "already active" in again.stdout and "cache break" not in again.stdout
    assert a.session.active_tools.count("get_current_weather") == 1


def test_dtl_activate_unknown_tool(ran: InteractiveShell) -> None:
    active = list(agent(ran).session.active_tools)
    message = usage_error(ran, "%dtl activate get_current_weather no_such_tool")
    assert "no_such_tool" in message and "get_current_weather" not in message
    assert agent(ran).session.active_tools == active  # all or nothing


def test_dtl_provider_switches_and_shows_the_view(ran: InteractiveShell) -> None:
    a = agent(ran)
    steps = len(a.steps)
    value, captured = line_magic(ran, "dtl provider kimi")
    assert value is None
    assert (a.provider, a.model) == ("kimi", DEMO_MODELS["kimi"])
    assert len(a.steps) == steps  # re-serialized, not sent
    assert "now kimi" in captured.stdout and "mode kimi" in captured.stdout
    # The cell's live view shows the switch in place; no second live view is displayed.
    assert not any(WIDGET_MIME in kinds for kinds in mimetypes(captured))
    assert agent_magics(ran).views["agent"].switched["provider"] == "kimi"
    line_magic(ran, "dtl provider openai-chat --model gpt-4o")
    assert (a.provider, a.model) == ("openai-chat", "gpt-4o")


def test_dtl_provider_unknown(ran: InteractiveShell) -> None:
    message = usage_error(ran, "%dtl provider nope")
    assert f"provider must be one of {', '.join(PROVIDERS)}, got 'nope'" in message
    assert agent(ran).provider == "anthropic"


def test_dtl_compare_serializes_for_all_providers_without_sending(ran: InteractiveShell) -> None:
    a = agent(ran)
    steps = len(a.steps)
    value, _ = line_magic(ran, "dtl compare")
    html, text = value._repr_html_(), repr(value)
    assert text.startswith("neutral load points: get_shipping_eta after message #")
    for provider, mode in [
        ("anthropic", "tool_reference"),
        ("openai-responses", "additional_tools"),
        ("openai-chat", "full_list"),
        ("kimi", "kimi"),
    ]:
        assert provider in html and f"<code>{mode}</code>" in html
        row = next(line for line in text.splitlines() if line.strip().startswith(provider))
        assert mode in row
    assert a.provider == "anthropic" and len(a.steps) == steps


def test_dtl_show(ran: InteractiveShell) -> None:
    view = agent_magics(ran).views["agent"]
    value, _ = line_magic(ran, "dtl show")
    assert repr(value).startswith("Request 3 ·")
    html = value._repr_html_()
    assert "<details" in html and "Model context" in html and "Request JSON" in html
    value, _ = line_magic(ran, "dtl show 1")
    assert repr(value).startswith("Request 1 ·")
    assert view.panes["index"] == 2  # the live view is not moved by a command


@pytest.mark.parametrize(("step", "expected"), [("0", "1 to 3"), ("4", "1 to 3")])
def test_dtl_show_out_of_range(ran: InteractiveShell, step: str, expected: str) -> None:
    assert expected in usage_error(ran, f"%dtl show {step}")


def test_dtl_show_before_any_request(ip: InteractiveShell) -> None:
    assert "no request yet" in usage_error(ip, "%dtl show")


def test_dtl_diff_two_requests(ran: InteractiveShell) -> None:
    value, _ = line_magic(ran, "dtl diff 1 2")
    html = value._repr_html_()
    assert repr(value).startswith("request 1 → request 2")
    assert "cache:" in repr(value)
    assert "<ins" in html


def test_dtl_diff_one_request_on_two_providers(ran: InteractiveShell) -> None:
    a = agent(ran)
    value, _ = line_magic(ran, "dtl diff 3 anthropic kimi")
    html, text = value._repr_html_(), repr(value)
    # the neutral-to-wire mapping, not a text diff of two unrelated JSON bodies
    assert text.startswith("neutral load points: ")
    assert "request 3 on anthropic and kimi" in html and "One neutral truth" in html
    lines = text.splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["anthropic", "kimi"]
    assert "<del" not in html
    assert a.provider == "anthropic" and len(a.steps) == 3


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ("1", "two request numbers"),
        ("1 2 3 4", "two request numbers"),
        ("a b", "two request numbers"),
        ("1 9", "no request 9"),
        ("1 anthropic nope", "anthropic, openai-responses, openai-chat, kimi"),
    ],
)
def test_dtl_diff_bad_arguments(ran: InteractiveShell, items: str, expected: str) -> None:
    assert expected in usage_error(ran, f"%dtl diff {items}")


def test_dtl_inspect_a_captured_log(ran: InteractiveShell, tmp_path: Path) -> None:
    path = write_capture(agent(ran), tmp_path / "captured.jsonl")
    value, _ = line_magic(ran, f"dtl inspect {path}")
    assert isinstance(value, AgentView) and value.agent is None
    assert value.count == 3 and len(value.records) == 3
    assert value.header["label"] == "captured" and "captured.jsonl" in value.header["title"]
    assert [r.provider for r in value.records] == ["anthropic"] * 3
    assert repr(value).startswith("AgentView(provider=anthropic, requests=3,")


@pytest.mark.parametrize(
    ("content", "expected"),
    [(None, "no such file"), ("", "no requests"), ('{"model": "x"}\nnot json\n', ":2")],
)
def test_dtl_inspect_bad_files(
    ip: InteractiveShell, tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "log.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert expected in usage_error(ip, f"%dtl inspect {path}")


def test_dtl_save_and_load(ran: InteractiveShell, tmp_path: Path) -> None:
    a = agent(ran)
    path = tmp_path / "session.json"
    _, captured = line_magic(ran, f"dtl save {path}")
    assert f"saved {len(a.session.messages)} messages" in captured.stdout
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert "schema_version" in saved
    assert [p.name for p in tmp_path.iterdir()] == ["session.json"]
    ip = ran
    line_magic(ip, "dtl reset")
    value, captured = line_magic(ip, f"dtl load {path}")
    loaded = agent(ip)
    view = agent_magics(ip).views["agent"]
    assert value is None and any(WIDGET_MIME in kinds for kinds in mimetypes(captured))
    assert loaded is not a and isinstance(view, AgentView) and view.agent is loaded
    assert [m.model_dump() for m in loaded.session.messages] == [
        m.model_dump() for m in a.session.messages
    ]
    assert loaded.session.active_tools == a.session.active_tools
    assert loaded.provider == "anthropic"
    ok(ip, f"%%agent\n{WEATHER}")  # the loaded session runs on (tools re-bound)
    results = [m for m in loaded.session.messages if isinstance(m, ToolResultMessage)]
    assert results and not results[-1].is_error


def test_dtl_save_without_a_session(ip: InteractiveShell, tmp_path: Path) -> None:
    assert "no session" in usage_error(ip, f"%dtl save {tmp_path / 'x.json'}")
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("command", ["save", "export"])
def test_dtl_write_to_a_missing_folder(ran: InteractiveShell, tmp_path: Path, command: str) -> None:
    target = tmp_path / "missing" / "out.file"
    assert str(target) in usage_error(ran, f"%dtl {command} {target}")


@pytest.mark.parametrize(
    ("content", "expected"), [(None, "x.json"), ("{not json", "not valid JSON"), ("[]", "x.json")]
)
def test_dtl_load_bad_files(
    ran: InteractiveShell, tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "x.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    first = agent(ran)
    assert expected in usage_error(ran, f"%dtl load {path}")
    assert agent(ran) is first


def test_dtl_export(ran: InteractiveShell, tmp_path: Path) -> None:
    path = tmp_path / "session.html"
    _, captured = line_magic(ran, f"dtl export {path}")
    assert f"wrote {path}" in captured.stdout and "3 requests" in captured.stdout
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Request 3 ·" in page


def test_dtl_reset(ran: InteractiveShell) -> None:
    first = agent(ran)
    first_view = agent_magics(ran).views["agent"]
    _, captured = line_magic(ran, "dtl reset")
    fresh = agent(ran)
    assert fresh is not first and fresh.turns == 0 and fresh.steps == []
    assert "new session `agent`" in captured.stdout
    assert agent_magics(ran).views.get("agent") is not first_view
    assert first.turns == 1  # the old Agent object itself is untouched


def test_dtl_works_on_a_named_session(ip: InteractiveShell) -> None:
    ok(ip, f"%%agent --session ops --provider kimi\n{ETA}")
    value, _ = line_magic(ip, "dtl show --session ops")
    assert "kimi" in repr(value)
    line_magic(ip, "dtl provider openai-chat --session ops")
    assert agent(ip, "ops").provider == "openai-chat"
    assert "agent" not in ip.user_ns


@pytest.mark.parametrize("command", ["reset --session df", "load {path} --session df"])
def test_dtl_never_replaces_a_users_own_value(
    ran: InteractiveShell, tmp_path: Path, command: str
) -> None:
    path = tmp_path / "s.json"
    line_magic(ran, f"dtl save {path}")
    ran.user_ns["df"] = {"rows": [1, 2]}
    message = usage_error(ran, "%dtl " + command.format(path=path))
    assert "`df`" in message and "dict" in message
    assert ran.user_ns["df"] == {"rows": [1, 2]}


def test_dtl_mistyped_session_lists_the_sessions(ran: InteractiveShell) -> None:
    a = agent(ran)
    active = list(a.session.active_tools)
    message = usage_error(ran, "%dtl activate add --session agnet")
    assert "no session `agnet`" in message and "`agent`" in message
    assert "agnet" not in ran.user_ns and a.session.active_tools == active


def test_dtl_provider_on_a_native_search_session_names_its_search(ip: InteractiveShell) -> None:
    ok(ip, f"%%agent --search native-bm25\n{ETA}")
    message = usage_error(ip, "%dtl provider kimi")
    assert "session `agent` has search='native-bm25'" in message and "kimi" in message
    assert agent(ip).provider == "anthropic"
    assert "has search='native-bm25'" in usage_error(ip, f"%%agent --provider kimi\n{WEATHER}")
    ok(ip, f"%%agent --provider kimi --search bm25\n{WEATHER}")  # the way the message names
    assert agent(ip).provider == "kimi" and agent(ip).options == {}


def test_agent_threads_option_sends_thread_continuations(ip: InteractiveShell) -> None:
    result, _ = run_cell(ip, "%%agent --provider anthropic --threads\nThanks, that is all.")
    assert result.success, result.error_in_exec
    run_cell(ip, "%%agent\nAnd in Tokyo?")
    a: Agent = ip.user_ns["agent"]
    assert a.threads is not None
    kinds = [s.request.payload["thread"]["type"] for s in a.steps]
    assert kinds[0] == "create" and "continue" in kinds
    continued = next(s for s in a.steps if s.request.payload["thread"]["type"] == "continue")
    assert "system" not in continued.request.payload
