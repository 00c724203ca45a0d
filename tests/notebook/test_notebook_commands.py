"""`%dtl` subcommands on a plain namespace, without an IPython shell: the sessions never take a
user's own value, a mistyped name never acts on another session, `load` binds the tools'
implementations and uses the configured transport."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from dtl_notebook import Session, ToolCall
from dtl_notebook.demo import demo_catalog, demo_session
from dtl_notebook.live import Agent
from dtl_notebook.live.transport import emulator_transport
from dtl_notebook.notebook.commands import CommandContext, Commands
from dtl_notebook.notebook.sessions import Sessions, Settings
from dtl_notebook.notebook.widget import AgentView
from tests.support.tools import make_tools

MODEL = "claude-sonnet-4-6"


class Shown(list[Any]):
    def __call__(self, value: Any, **_options: Any) -> None:
        self.append(value)


def commands(namespace: dict[str, Any], settings: Settings | None = None) -> tuple[Commands, Shown]:
    shown = Shown()
    context = CommandContext(Sessions(namespace), lambda: settings or Settings(), shown)
    return Commands(context), shown


def user_agent(**options: Any) -> Agent:
    session = Session(tools=make_tools(), active=["tool_search", "read_file"])
    session.user("hi")
    return Agent(session, "anthropic", MODEL, **options)


@pytest.mark.parametrize("line", ["reset --session df", "load x.json --session df"])
def test_a_users_own_value_is_never_replaced(line: str, tmp_path: Path) -> None:
    data = {"a": 1}
    namespace: dict[str, Any] = {"df": data}
    run, _ = commands(namespace)
    with pytest.raises(UsageError, match=r"`df` in the namespace is a dict, not an Agent"):
        run.run(line.replace("x.json", str(tmp_path / "x.json")))
    assert namespace == {"df": data} and namespace["df"] is data


def test_a_mistyped_session_lists_the_sessions_and_changes_nothing() -> None:
    ops = user_agent()
    namespace: dict[str, Any] = {"ops": ops, "_": ops}
    run, _ = commands(namespace)
    for line in ("tools --session opz", "activate add --session opz", "tools"):
        with pytest.raises(UsageError, match=r"no session `(opz|agent)`; the sessions are `ops`"):
            run.run(line)
    assert namespace == {"ops": ops, "_": ops} and ops.session.active_tools == [
        "tool_search",
        "read_file",
    ]


def test_the_first_session_of_a_namespace_is_made_on_first_use() -> None:
    namespace: dict[str, Any] = {}
    run, _ = commands(namespace, Settings(provider="kimi"))
    run.run("tools")
    assert isinstance(namespace["agent"], Agent) and namespace["agent"].provider == "kimi"


def test_provider_switch_names_the_sessions_search_mode() -> None:
    native = user_agent(search="native-bm25")
    run, shown = commands({"agent": native})
    with pytest.raises(UsageError) as info:
        run.run("provider kimi")
    message = str(info.value)
    assert "session `agent` has search='native-bm25'" in message and "kimi" in message
    assert "--search bm25" in message  # how to switch with a local engine instead
    assert (native.provider, native.options) == ("anthropic", {"search": "native-bm25"})
    assert shown == []
    with pytest.raises(UsageError, match="has search='native-bm25', which openai-responses"):
        run.run("provider openai-responses")  # Anthropic's native search is not OpenAI's
    assert native.provider == "anthropic"


def test_provider_switch_keeps_options_on_the_same_provider_and_shows_the_view() -> None:
    agent = user_agent(search="native-regex")
    run, shown = commands({"agent": agent})
    run.run(f"provider anthropic --model {MODEL}")
    assert agent.options == {"search": "native-regex"}
    view = run.context.sessions.views["agent"]  # shown as two outputs: saved turn, widget
    assert len(shown) == 2 and isinstance(view, AgentView) and view.agent is agent


def test_load_binds_the_implementations_of_the_sessions_own_tools(tmp_path: Path) -> None:
    previous = user_agent()
    path = tmp_path / "s.json"
    previous.session.save(path)
    namespace: dict[str, Any] = {"agent": previous}
    run, _ = commands(namespace)
    run.run(f"load {path}")
    view = run.context.sessions.views["agent"]
    loaded = namespace["agent"]
    assert loaded is not previous and view.agent is loaded
    for tool in previous.session.registry:
        if tool.name != "tool_search":
            assert loaded.session.registry[tool.name].execute is tool.execute
    call = ToolCall(id="c1", name="read_file", arguments={"path": "a.txt"})
    loaded.session.assistant(tool_calls=[call])
    result = loaded.session.execute(call)
    assert not result.is_error and "contents of a.txt" in result.model_dump_json()


def test_load_binds_demo_tools_only_where_the_definition_is_the_demos(tmp_path: Path) -> None:
    user = user_agent()
    mine, demo = tmp_path / "mine.json", tmp_path / "demo.json"
    user.session.save(mine)
    shipped = demo_session()
    shipped.user("hi")
    shipped.save(demo)
    namespace: dict[str, Any] = {}
    run, _ = commands(namespace)
    run.run(f"load {demo} --session d")
    loaded = namespace["d"].session.registry
    assert len(loaded) == len(demo_catalog()) + 1 and all(t.execute for t in loaded)
    call = ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3})
    namespace["d"].session.activate(["add"])
    namespace["d"].session.assistant(tool_calls=[call])
    assert not namespace["d"].session.execute(call).is_error
    run.run(f"load {mine} --session m")
    # `add` and `read_file` are demo names with other definitions: not bound to the demo's
    assert namespace["m"].session.registry["add"].execute is None


def test_load_uses_the_configured_transport(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    session = Session(tools=make_tools())
    session.user("hi")
    path = tmp_path / "s.json"
    session.save(path)
    namespace: dict[str, Any] = {}
    run, _ = commands(namespace, Settings(transport="live", max_steps=3))
    run.run(f"load {path}")
    agent = namespace["agent"]
    assert agent.transport.name == "live" and agent.max_steps == 3


def test_load_failure_leaves_the_session(tmp_path: Path) -> None:
    previous = user_agent()
    namespace: dict[str, Any] = {"agent": previous}
    run, _ = commands(namespace)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        run.run(f"load {tmp_path / 'bad.json'}")
    assert namespace == {"agent": previous}


def test_reset_replaces_only_an_agent() -> None:
    old = user_agent()
    namespace: dict[str, Any] = {"agent": old}
    run, _ = commands(namespace)
    run.run("reset")
    assert isinstance(namespace["agent"], Agent) and namespace["agent"] is not old


def test_activating_an_active_tool_claims_no_cache_break(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ops = user_agent()
    run, _ = commands({"ops": ops})
    run.run("activate read_file --session ops")
    said = capsys.readouterr().out
    assert "already active: read_file" in said and "cache break" not in said
    run.run("activate add --session ops")
    assert "activated add" in capsys.readouterr().out and "add" in ops.session.active_tools


class OwnTransport:
    """A user's own transport: the emulator behind a name of theirs."""

    name = "mine"

    def __init__(self) -> None:
        self.inner = emulator_transport("anthropic")
        self.sent = 0

    def send(self, request: Any) -> Any:
        self.sent += 1
        return self.inner.send(request)


@pytest.mark.parametrize("recorded", [False, True])
def test_load_over_a_users_own_transport_keeps_it_and_asks_no_key(
    tmp_path: Path, monkeypatch: Any, recorded: bool
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    own = OwnTransport()
    record = tmp_path / "previous.jsonl" if recorded else None
    previous = Agent(demo_session(), "anthropic", MODEL, own, record=record)
    path = tmp_path / "s.json"
    previous.session.save(path)
    namespace: dict[str, Any] = {"agent": previous}
    run, _ = commands(namespace, Settings(transport="live"))
    run.run(f"load {path}")
    loaded = namespace["agent"]
    assert loaded is not previous and loaded.transport is own  # unwrapped from the recorder
    loaded.run("what is the weather in Paris?")
    assert own.sent >= 1 and loaded.record is None


def test_search_without_a_hit_says_so() -> None:
    run, _ = commands({"agent": Agent(demo_session(), "anthropic", MODEL)})
    result = run.run("search zzqqxx")
    assert repr(result) == "bm25 search for 'zzqqxx': no tool matches (%dtl tools lists them)"
    assert "<table" not in result._repr_html_()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("provider openai", "did you mean openai-responses or openai-chat?"),
        ("show x", "%dtl show step must be a request number from 1, got 'x'"),
        ("tools --bogus", "%dtl tools takes no --bogus"),
    ],
)
def test_command_line_mistakes_are_in_the_products_words(line: str, expected: str) -> None:
    run, _ = commands({"agent": user_agent()})
    with pytest.raises(UsageError) as raised:
        run.run(line)
    assert expected in str(raised.value) and "invalid choice" not in str(raised.value)
