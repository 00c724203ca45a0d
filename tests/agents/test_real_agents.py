"""Real coding agents through `python -m dtl_notebook proxy` in front of the emulator, offline.

Each agent runs one short non-interactive turn that takes a tool call, so its session has a
second request. Per run: the turn finishes with the emulator's answer printed, the session is
one conversation in the store (OpenCode's title request its own), the dummy key is nowhere in
the store, `audit --fail-on error` passes, and from each conversation's second request on the
predicted cache figures are within 1 % of what the emulator reported. Claude Code gets an MCP
server and tool search, and its `tool_reference` load is read as a load point. Select them with
`-m agents`; they skip with one reason where the agents are not installed (tests/support).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook.__main__ import main
from dtl_notebook.cache import audit_capture
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.store_reader import store_rows
from dtl_notebook.live.emulator.server import EmulatorServer
from tests.support.real_agents import (
    ABSENT,
    ROOT,
    ProxyRun,
    need_agent,
    offline_env,
    proxy_process,
    run_agent,
)

pytestmark = pytest.mark.agents

KEY = "sk-ant-api03-AGENTTESTdummy0123456789abcdefDUMMY"
ANTHROPIC_MODEL = "claude-sonnet-4-6"
OPENAI_MODEL = "gpt-5.5"
GENERATION = ("/v1/messages", "/v1/responses", "/v1/chat/completions")
NOTE = "the answer is 42"
READ_TASK = "Read the file notes.txt"
TOLERANCE = 0.01


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder an agent works in, with the file the read task names."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text(NOTE + "\n")
    return work


def generation_rows(store: Path) -> list[dict[str, Any]]:
    return [row for row in store_rows(store) if row["path"] in GENERATION]


def check_sessions(proxy: ProxyRun, requests_per_conversation: list[int]) -> list[CacheEntry]:
    """The checks every agent run passes; the audit's entries, in arrival order."""
    rows = generation_rows(proxy.store)
    assert [(r["status"], r["failure"]) for r in rows] == [(200, None)] * len(rows)
    sizes = Counter(row["conversation"] for row in rows)
    assert sorted(sizes.values()) == sorted(requests_per_conversation), sizes
    for path in proxy.store.parent.glob(proxy.store.name + "*"):  # the WAL too, if any
        assert KEY.encode() not in path.read_bytes(), f"the key is stored in {path.name}"
    assert not [line for line in proxy.lines if KEY in line]
    # after its banner, the proxy prints one line per request and nothing else
    first = next((i for i, line in enumerate(proxy.lines) if line.startswith("#")), 0)
    requests = proxy.lines[first:]
    assert len(requests) == len(store_rows(proxy.store)), requests
    assert all(line.startswith("#") for line in requests), requests
    failed = audit_fails(proxy.store)
    assert not failed, failed
    entries = predicted_entries(proxy.store, rows)
    seen: set[str] = set()
    for row, entry in zip(rows, entries, strict=True):
        if row["conversation"] in seen:  # from each conversation's second request on
            assert_close(entry)
        seen.add(row["conversation"])
    return entries


def audit_fails(store: Path) -> str:
    """What `python -m dtl_notebook audit STORE --fail-on error` prints where it fails (exit
    status 1), else "" (run in this process: the command's own code, without its start-up)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_status:
        main(["audit", str(store), "--fail-on", "error"])
    return out.getvalue() if exit_status.value.code else ""


def predicted_entries(store: Path, rows: list[dict[str, Any]]) -> list[CacheEntry]:
    """The audit's entry of each stored row, in the rows' order."""
    audit = audit_capture(store)
    by_provider = {provider: iter(report) for provider, report in audit.reports.items()}
    return [next(by_provider[exchange.provider]) for exchange in audit.exchanges]


def assert_close(entry: CacheEntry) -> None:
    reported = entry.reported
    assert reported is not None and reported.input, f"request {entry.index}: no usage reported"
    allowed = TOLERANCE * reported.input
    figures = [("read", entry.cached_tokens, reported.cached)]
    figures.append(("written", entry.written_tokens, reported.written))
    for name, predicted, told in figures:
        if told is not None:
            assert abs(predicted - told) <= allowed, (
                f"request {entry.index}: {name} predicted {predicted}, reported {told} "
                f"(of {reported.input})"
            )


def test_claude_code_defers_mcp_tools_and_loads_them_by_tool_reference(
    emulator: EmulatorServer, tmp_path: Path, workspace: Path
) -> None:
    claude = need_agent("claude")
    server = {"command": sys.executable, "args": ["-m", "dtl_notebook.demo.mcp_server"]}
    server["env"] = {"PYTHONPATH": str(ROOT)}  # type: ignore[assignment]
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": {"type": "stdio", **server}}}))
    home = tmp_path / "home"
    with proxy_process(emulator.url, tmp_path / "store.sqlite") as proxy:
        env = offline_env(
            home,
            ANTHROPIC_BASE_URL=proxy.url,
            ANTHROPIC_API_KEY=KEY,
            CLAUDE_CONFIG_DIR=str(home / ".claude"),
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            ENABLE_TOOL_SEARCH="true",  # defer MCP tools behind its ToolSearch on any base URL
        )
        argv = [str(claude), "-p", "Add 2 and 3", "--model", ANTHROPIC_MODEL]
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
        done = run_agent([*argv, "--allowedTools", "mcp__demo__add"], env, workspace)
    assert 'mcp__demo__add returned {"result":5}' in done.stdout
    entries = check_sessions(proxy, [3])  # search, call, answer
    *_, last = generation_rows(proxy.store)
    deferred = [t for t in json.loads(last["request_body"])["tools"] if t.get("defer_loading")]
    assert "mcp__demo__add" in {t["name"] for t in deferred}
    loads = [
        segment
        for segment in entries[-1].context.of_kind("loaded_schema")
        if segment.label == "mcp__demo__add"
    ]
    assert loads and loads[0].load_point and ".content" in loads[0].load_point


def test_pi_reads_a_file_through_the_proxy(
    emulator: EmulatorServer, tmp_path: Path, workspace: Path
) -> None:
    pi = need_agent("pi")
    config = tmp_path / "pi"
    config.mkdir()
    with proxy_process(emulator.url, tmp_path / "store.sqlite") as proxy:
        # its documented way to route a built-in provider through a proxy: only the baseUrl
        models = {"providers": {"anthropic": {"baseUrl": proxy.url}}}
        (config / "models.json").write_text(json.dumps(models))
        env = offline_env(
            tmp_path / "home",
            ANTHROPIC_API_KEY=KEY,
            PI_CODING_AGENT_DIR=str(config),
            PI_OFFLINE="1",
            PI_SKIP_VERSION_CHECK="1",
            PI_TELEMETRY="0",
        )
        argv = [str(pi), "-p", READ_TASK, "--provider", "anthropic", "--model", ANTHROPIC_MODEL]
        done = run_agent(argv, env, workspace)
    assert f"read returned {NOTE}" in done.stdout
    check_sessions(proxy, [2])


def test_opencode_reads_a_file_with_its_title_request_apart(
    emulator: EmulatorServer, tmp_path: Path, workspace: Path
) -> None:
    opencode = need_agent("opencode")
    with proxy_process(emulator.url, tmp_path / "store.sqlite") as proxy:
        config = {
            "autoupdate": False,
            "share": "disabled",
            "provider": {"anthropic": {"options": {"baseURL": f"{proxy.url}/v1"}}},
        }
        env = offline_env(
            tmp_path / "home",
            ANTHROPIC_API_KEY=KEY,
            OPENCODE_CONFIG_CONTENT=json.dumps(config),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_SHARE="1",
        )
        argv = [str(opencode), "run", READ_TASK, "--model", f"anthropic/{ANTHROPIC_MODEL}"]
        done = run_agent(argv, env, workspace)
    assert NOTE in done.stdout and "(emulated, not an LLM) read returned" in done.stdout
    check_sessions(proxy, [1, 2])  # the title request, then the session


def test_codex_runs_a_command_through_the_proxy(
    emulator: EmulatorServer, tmp_path: Path, workspace: Path
) -> None:
    codex = need_agent("codex")
    home = tmp_path / "codex"
    home.mkdir()
    with proxy_process(emulator.url, tmp_path / "store.sqlite") as proxy:
        # Codex takes no base URL from the environment: a provider entry routes it. On its
        # WebSocket transport (its default) each turn is a previous_response_id continuation
        (home / "config.toml").write_text(
            f'model = "{OPENAI_MODEL}"\nmodel_provider = "dtl"\n'
            "check_for_update_on_startup = false\n\n"
            f'[model_providers.dtl]\nname = "dtl proxy"\nbase_url = "{proxy.url}/v1"\n'
            'env_key = "OPENAI_API_KEY"\nwire_api = "responses"\nsupports_websockets = true\n\n'
            "[analytics]\nenabled = false\n\n[feedback]\nenabled = false\n"
        )
        env = offline_env(tmp_path / "home", OPENAI_API_KEY=KEY, CODEX_HOME=str(home))
        # `command cat notes.txt` is a shell command as it stands: the emulated model, which
        # passes the task's text to the tool it picks, runs it through exec_command
        argv = [str(codex), "exec", "--skip-git-repo-check", "command cat notes.txt"]
        done = run_agent(argv, env, workspace)
    assert "(emulated, not an LLM) exec_command returned" in done.stdout
    rows = generation_rows(proxy.store)
    assert [r["method"] for r in rows] == ["WEBSOCKET"] * 3
    # its socket opens with a warm-up (`generate: false`) that the turn continues
    entries = check_sessions(proxy, [3])
    assert [e.continued is not None for e in entries] == [False, True, True]
    assert all(e.continued.note == "" for e in entries[1:] if e.continued)


def test_an_agent_not_installed_skips_with_the_one_reason() -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        need_agent("no-such-agent")
    assert skipped.value.msg == ABSENT
