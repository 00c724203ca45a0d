"""OpenTelemetry end to end: the proxy (`--otlp-endpoint`) and an Agent (`otlp_endpoint=`)
export their spans over OTLP/HTTP to a real backend started on loopback (Arize Phoenix), and
the spans' attributes are read back from it through its API."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from dtl_notebook import Session
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator.server import EmulatorServer
from tests.support import otlp_backend
from tests.support.scenario import LONG_SYSTEM
from tests.support.tools import make_tools

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-api03-TELEMETRYKEY0123456789"
phoenix = otlp_backend.phoenix  # the session's backend (a fixture)


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def _project_env(project: str) -> dict[str, str]:
    """The environment of a process whose spans go to Phoenix project `project`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={project}"
    env["PYTHONPATH"] = str(ROOT)
    return env


def _by_time(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(spans, key=lambda span: str(span["start_time"]))


def test_the_proxy_exports_a_span_per_request_to_a_real_backend(
    phoenix: otlp_backend.Phoenix, emulator: EmulatorServer, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "dtl_notebook", "proxy", "--port", "0"]
    command += ["--store", str(tmp_path / "store.sqlite"), "--upstream-anthropic", emulator.url]
    command += ["--otlp-endpoint", phoenix.url]
    proxy = subprocess.Popen(
        command, env=_project_env("dtl-proxy"), stdout=subprocess.PIPE, text=True
    )
    assert proxy.stdout is not None
    first = proxy.stdout.readline()
    url = first.split(" on ", 1)[1].split(" ->", 1)[0]
    said = [proxy.stdout.readline() for _ in range(2)]  # where to point agents; telemetry
    assert "OpenTelemetry: one span per request" in said[1]
    try:
        client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "where is order 7?"}]
        rules = LONG_SYSTEM * 3  # a collapse: past 2,000 tokens
        for system in (rules, rules, rules + " Time: 09:01"):
            reply = client.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=50,
                system=system,
                messages=messages,
                cache_control={"type": "ephemeral"},
            )
            messages += [
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": "and then?"},
            ]
    finally:
        proxy.send_signal(signal.SIGTERM)  # its exporter sends what is still batched
        lines = proxy.stdout.read()
        proxy.wait(60)
    assert lines.count("\n#") + lines.startswith("#") == 3  # one line per request
    spans = _by_time(phoenix.spans("dtl-proxy", 3))
    assert len(spans) == 3
    first_span, second, third = (span["attributes"] for span in spans)
    for got in (first_span, second, third):
        assert got["gen_ai.provider.name"] == "anthropic"
        assert got["gen_ai.request.model"] == "claude-sonnet-4-5"
        assert got["gen_ai.usage.output_tokens"] > 0 and got["dtl.conversation"] == "c1"
        assert got["http.response.status_code"] == 200
        assert "dtl.load_points" not in got  # the proxy does not know them
    assert second["gen_ai.usage.cache_read.input_tokens"] > 500
    assert second["gen_ai.usage.cache_read.input_tokens"] == second["dtl.predicted.cached_tokens"]
    assert first_span["gen_ai.usage.cache_creation.input_tokens"] > 500
    assert third["dtl.break.code"] == "system_changed" and third["dtl.break.fix"]
    assert third["dtl.miss.reason"] == "changed"
    assert second["dtl.warmth.ttl_seconds"] == 300.0 and second["dtl.warmth.tokens"] > 500
    shown = str(spans)
    assert KEY not in shown and "where is order 7?" not in shown  # no content by default


def test_an_agent_exports_its_spans_to_a_real_backend(phoenix: otlp_backend.Phoenix) -> None:
    script = (
        "import sys\n"
        "from dtl_notebook import Session\n"
        "from dtl_notebook.live import Agent\n"
        "from tests.support.scenario import LONG_SYSTEM\n"
        "from tests.support.tools import make_tools\n"
        "session = Session(system=LONG_SYSTEM * 20, tools=make_tools(), active=['tool_search'])\n"
        f"agent = Agent(session, 'anthropic', 'claude-opus-4-1', otlp_endpoint={phoenix.url!r})\n"
        "agent.run('What is the weather in Paris?')\n"
        "assert agent.telemetry is not None and agent.telemetry.flush()\n"
        "print(len(agent.steps))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=_project_env("dtl-agent"),
        capture_output=True,
        text=True,
        check=True,
    )
    steps = int(done.stdout.split()[-1])
    stored = _by_time(phoenix.spans("dtl-agent", steps + 1))  # the turn's span, its requests'
    turns = [span for span in stored if span["name"] == "invoke_agent"]
    spans = [span for span in stored if span["name"] != "invoke_agent"]
    assert len(turns) == 1 and len(spans) == steps >= 1
    turn_id = turns[0]["context"]["span_id"]
    assert all(span["parent_id"] == turn_id for span in spans)
    last = spans[-1]["attributes"]
    assert last["gen_ai.request.model"] == "claude-opus-4-1"
    assert last["dtl.predicted.cached_tokens"] == last["gen_ai.usage.cache_read.input_tokens"]
    assert last["dtl.warmth.tokens"] > 20_000 and last["dtl.load_mode"]
    assert "Paris" not in str(spans)


def test_an_agent_in_this_process_reaches_the_same_backend(phoenix: otlp_backend.Phoenix) -> None:
    session = Session(system=LONG_SYSTEM, tools=make_tools(), active=["tool_search"])
    agent = Agent(session, "openai-responses", "gpt-5.4", otlp_endpoint=phoenix.url)
    agent.run("Hello.")
    assert agent.telemetry is not None and agent.telemetry.flush()
    names = {span["attributes"]["gen_ai.request.model"] for span in phoenix.spans("default", 1)}
    assert "gpt-5.4" in names
    assert {s["attributes"]["gen_ai.provider.name"] for s in phoenix.spans("default", 1)} >= {
        "openai"
    }
    agent.telemetry.shutdown()
