"""How many model calls one response's usage covers, and the first call's input.

A server tool (Anthropic web search, web fetch, code execution) runs inside one request: the
model calls the tool, the server runs it, its result re-enters the context and the model is
sampled again. The reported usage then sums several model calls. Anthropic itemises them in
`usage.iterations` where it reports them (platform.claude.com/docs/en/api/messages, the
`iterations` of `usage`); otherwise each `server_tool_use` block in the reply marks one more
call. Only the first call sees the request as sent: the rest is what the server added.
A stream's `message_start` is sent before the first call samples, so its usage is that call's
input; the usage of `message_delta` is cumulative (platform.claude.com/docs/en/build-with-claude/
streaming), the whole loop's input where the delta reports it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelCalls", "model_calls"]

_INPUT_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass(frozen=True)
class ModelCalls:
    """`calls` model calls behind one reported usage; `first_input`: the input tokens of the
    first (None where the usage sums several calls without itemising them); `total_input`: of
    all of them (None where a stream reports only its first call's)."""

    calls: int
    total_input: int | None
    first_input: int | None

    @property
    def server_added(self) -> int | None:
        """Input tokens the server's own loop added beyond the first call, where known."""
        if self.first_input is None or self.total_input is None:
            return None
        return self.total_input - self.first_input


def _input(usage: dict[str, Any]) -> int:
    return sum(int(usage.get(k) or 0) for k in _INPUT_KEYS)


def _events(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        line = line.removeprefix("data:").strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


def model_calls(response: Any) -> ModelCalls:
    """The model calls an Anthropic response (a JSON body, or a stream's text) covers."""
    first: int | None = None
    cumulative: int | None = None
    if isinstance(response, str):
        events = _events(response)
        start = next((e for e in events if e.get("type") == "message_start"), {})
        usage = dict((start.get("message") or {}).get("usage") or {})
        first = _input(usage)
        for e in events:  # the final message_delta may carry iterations and the loop's input
            if e.get("type") == "message_delta" and isinstance(e.get("usage"), dict):
                usage.update({k: v for k, v in e["usage"].items() if k == "iterations"})
                if e["usage"].get("input_tokens") is not None:
                    cumulative = _input(e["usage"])
        blocks = [
            e.get("content_block") or {} for e in events if e.get("type") == "content_block_start"
        ]
    else:
        usage = dict(response.get("usage") or {})
        blocks = list(response.get("content") or [])
    total = _input(usage)
    iterations = usage.get("iterations")
    if isinstance(iterations, list) and iterations and all(isinstance(i, dict) for i in iterations):
        return ModelCalls(
            len(iterations), sum(_input(i) for i in iterations), _input(iterations[0])
        )
    calls = 1 + sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "server_tool_use")
    if first is not None:  # a stream: its start reports the first call
        return ModelCalls(calls, first if calls == 1 else cumulative, first)
    return ModelCalls(calls, total, total if calls == 1 else None)
