"""Regenerate `sample_capture.jsonl`, the request log that `07_audit_your_agent.ipynb` audits.

An agent with a slice of the demo catalog runs three turns on the offline emulator (no provider
is called, no key is needed) and records every exchange with `Agent(record=...)`: one JSON line
per request, `{"provider", "model", "transport", "request", "response"}`. The agent makes two
mistakes many real agents make, and the audit finds both: it sends no deferred placeholder tool,
so its first `defer_loading` tool changes Anthropic's hidden prompt (a full miss at the first
load), and before its third turn it refreshes a clock in its system prompt. The output is
byte-for-byte deterministic.

    python notebooks/data/make_sample_capture.py
"""

from __future__ import annotations

from pathlib import Path

from dtl_notebook import Session
from dtl_notebook.agent.sections import tool_catalog
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent

OUT = Path(__file__).with_name("sample_capture.jsonl")
DOMAINS = {"shipping", "weather", "billing"}
CORE = ["read_file", "list_files"]
TURNS = (
    "What is the shipping ETA of order_42?",
    "And the weather in Paris?",
    "Show me invoice inv_5004.",
)


def make_sample_capture(path: Path = OUT) -> Path:
    tools = [t for t in demo_catalog() if t.namespace in DOMAINS or t.name in CORE]
    session = Session(
        system="You are an operations assistant. Search for a tool before you say you can't.",
        tools=tools,
        active=["tool_search", *CORE],
        search="bm25",
        sections={
            "tool_catalog": tool_catalog(t for t in tools if t.name not in CORE),
            "clock": "Current time: 2026-03-02 09:00 UTC",
        },
    )
    path.unlink(missing_ok=True)
    agent = Agent(
        session,
        "anthropic",
        "claude-sonnet-4-6",
        record=str(path),
        profile={"deferred_placeholder": False},  # the first mistake
    )
    agent.run(TURNS[0])
    agent.run(TURNS[1])
    session.prompt["clock"] = "Current time: 2026-03-02 09:07 UTC"  # the bug: a clock in the prompt
    agent.run(TURNS[2])
    return path


if __name__ == "__main__":
    written = make_sample_capture()
    print(f"wrote {written} ({written.stat().st_size:,} bytes)")
