"""An Agent's OpenTelemetry spans, one per provider request, read back from the SDK's own
in-memory exporter: the GenAI semantic conventions' attributes, this package's `dtl.*` ones,
no message content or key unless content capture is on, and neither OpenTelemetry's SDK
nor an exporter imported unless telemetry is configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dtl_notebook import Session
from dtl_notebook.cache.keep_warm import KeepWarm
from dtl_notebook.live import Agent
from dtl_notebook.live.telemetry import traces_url
from tests.support.scenario import LONG_SYSTEM
from tests.support.tools import make_tools

OPUS = "claude-opus-4-1"
ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _traced(
    clock: Clock, system: str = LONG_SYSTEM * 20, **kwargs: Any
) -> tuple[Agent, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    session = Session(system=system, tools=make_tools(), active=["tool_search"])
    agent = Agent(session, "anthropic", OPUS, clock=clock, tracer_provider=provider, **kwargs)
    return agent, exporter


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_each_request_is_a_span_with_the_genai_usage_and_the_prediction() -> None:
    clock = Clock()
    agent, exporter = _traced(clock)
    agent.run("What is the weather in Paris?")
    spans = [s for s in exporter.get_finished_spans() if s.name != "invoke_agent"]
    assert len(spans) == len(agent.steps) >= 1
    for span, step in zip(spans, agent.steps, strict=True):
        assert span.name == f"chat {OPUS}" and span.kind.name == "CLIENT"
        got, used, entry = _attributes(span), step.cache.reported, step.cache
        assert used is not None and used.cached is not None and used.written is not None
        assert got["gen_ai.operation.name"] == "chat"
        assert got["gen_ai.provider.name"] == "anthropic"
        assert got["gen_ai.request.model"] == OPUS
        assert got["gen_ai.usage.input_tokens"] == used.cached + used.written + (used.uncached or 0)
        assert got["gen_ai.usage.cache_read.input_tokens"] == used.cached
        assert got["gen_ai.usage.cache_creation.input_tokens"] == used.written
        assert got["gen_ai.usage.output_tokens"] == step.response["usage"]["output_tokens"]
        assert got["dtl.predicted.cached_tokens"] == entry.cached_tokens
        assert got["dtl.predicted.written_tokens"] == entry.written_tokens
        assert got["dtl.predicted.uncached_tokens"] == entry.uncached_tokens
        assert got["dtl.load_points"] == len(step.request.load_points)
        assert got["dtl.load_mode"] == step.request.mode
        warm = entry.warmth
        assert warm is not None and got["dtl.warmth.expires_at"] == warm.expires_at == 300.0
        assert got["dtl.warmth.tokens"] == warm.tokens > 20_000
        assert span.start_time is not None and span.end_time is not None
        assert step.sent_ns == (span.start_time, span.end_time)


def test_an_expired_gap_carries_its_break_code_fix_and_miss_reason() -> None:
    clock = Clock()
    agent, exporter = _traced(clock)
    agent.run("Hello there.")
    clock.now = 1000.0
    agent.run("And again.")
    missed = [s for s in exporter.get_finished_spans() if "dtl.miss.reason" in _attributes(s)]
    assert len(missed) == 1
    got = _attributes(missed[0])
    assert got["dtl.miss.reason"] == "expired" and got["dtl.break.code"] == "expired"
    assert isinstance(got["dtl.break.fix"], str) and got["dtl.break.fix"]
    assert got["dtl.miss.lost_tokens"] > 20_000


def test_a_keep_warm_refresh_is_a_span_of_its_own_with_its_saving() -> None:
    clock = Clock()
    agent, exporter = _traced(clock, keep_warm=KeepWarm(background=False))
    agent.run("Hello there.")
    clock.now = 280.0
    assert agent.keep_warm is not None and agent.keep_warm.tick().refresh
    last = _attributes(exporter.get_finished_spans()[-1])
    assert last["dtl.keep_warm"] is True and last["dtl.keep_warm.saving_dollars"] >= 0.05
    assert last["gen_ai.usage.cache_read.input_tokens"] > 20_000


SECRET = "sk-ant-api03-" + "Q7xK2mZp9LwR4tYv" * 3
words = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=6, max_size=12)


@settings(max_examples=15, deadline=None)
@given(word=words, capture=st.booleans())
def test_no_content_or_key_in_any_attribute_unless_content_capture_is_on(
    word: str, capture: bool
) -> None:
    marker = f"Qz{word}zQ"  # a word no attribute holds by chance
    agent, exporter = _traced(
        Clock(), system=f"You help with {marker}. {SECRET}", capture_content=capture
    )
    agent.run(f"Tell me about {marker}, my key is {SECRET}")
    values = [str(v) for s in exporter.get_finished_spans() for v in _attributes(s).values()]
    assert values and not any(SECRET in v for v in values)
    assert any(marker in v for v in values) is capture


def test_unconfigured_telemetry_imports_neither_the_sdk_nor_an_exporter() -> None:
    # (the provider SDKs import OpenTelemetry's small API package themselves)
    script = (
        "import sys\n"
        "from dtl_notebook import Session\n"
        "from dtl_notebook.live import Agent\n"
        "agent = Agent(Session(system='Be brief.'), 'anthropic', 'claude-sonnet-4-5')\n"
        "agent.run('Hello.')\n"
        "ours = ('opentelemetry.sdk', 'opentelemetry.exporter')\n"
        "print(agent.telemetry, sorted(m for m in sys.modules if m.startswith(ours)))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "None []"


def test_the_standard_variables_configure_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    agent = Agent(Session(system="Be brief."), "anthropic", "claude-sonnet-4-5")
    assert agent.telemetry is not None and agent.telemetry.capture_content is False
    other = Agent(Session(system="Be brief."), "anthropic", "claude-sonnet-4-5")
    assert other.telemetry is not None
    assert other.telemetry.provider is agent.telemetry.provider  # one exporter per destination


def test_endpoints_and_bad_settings() -> None:
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://c:4318/v1/traces/") == "http://c:4318/v1/traces"
    with pytest.raises(ValueError, match=r"otlp_endpoint.*'127.0.0.1:4318'"):
        Agent(Session(system="x"), "anthropic", OPUS, otlp_endpoint="127.0.0.1:4318")
    with pytest.raises(TypeError, match="tracer_provider must be an OpenTelemetry"):
        Agent(Session(system="x"), "anthropic", OPUS, tracer_provider=object())
    with pytest.raises(TypeError, match="capture_content must be True, False or None"):
        Agent(Session(system="x"), "anthropic", OPUS, capture_content="yes")


def test_a_turn_is_one_trace_its_requests_children_of_its_span() -> None:
    agent, exporter = _traced(Clock())
    agent.run("What is the weather in Paris?")
    spans = exporter.get_finished_spans()
    turns = [s for s in spans if s.name == "invoke_agent"]
    requests = [s for s in spans if s.name.startswith("chat ")]
    assert len(turns) == 1 and len(requests) == len(agent.steps) >= 1
    turn = turns[0]
    assert _attributes(turn)["gen_ai.operation.name"] == "invoke_agent"
    assert turn.context is not None and turn.status.is_ok
    for span in requests:
        assert span.parent is not None and span.parent.span_id == turn.context.span_id
        assert span.context is not None and span.context.trace_id == turn.context.trace_id
    assert agent.turn_span is None  # a keep-warm refresh afterwards is a trace of its own
