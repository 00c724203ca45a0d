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

OpenAI Responses runs hosted tools (web search, file search, code interpreter, image
generation, hosted tool search, remote MCP) the same way: each hosted call item in `output`
is followed by another model call, and `usage` sums them without itemising
(platform.openai.com/docs/guides/tools). `compare_input` sets a prediction of the request as
sent against the figure of the same call, and where the provider gives none, says what the
reported figure covers rather than comparing one call with a loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dtl_notebook.wire.providers import ANTHROPIC, SPECS

__all__ = ["InputComparison", "ModelCalls", "compare_input", "model_calls"]

_INPUT_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
# Responses output items of a call a hosted tool ran inside the request
_HOSTED_CALLS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
    }
)


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


def _hosted_call(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return kind in _HOSTED_CALLS or (
        kind == "tool_search_call" and item.get("execution") != "client"
    )


def _responses_calls(response: dict[str, Any]) -> ModelCalls:
    usage = response.get("usage") or {}
    total = int(usage.get("input_tokens") or 0) if isinstance(usage, dict) else 0
    calls = 1 + sum(1 for item in response.get("output") or [] if _hosted_call(item))
    return ModelCalls(calls, total, total if calls == 1 else None)


def model_calls(response: Any, provider: str = ANTHROPIC) -> ModelCalls:
    """The model calls a response covers: Anthropic (a JSON body, or a stream's text) or
    OpenAI Responses (a JSON body). Other providers run no tools inside a request."""
    row = SPECS.get(provider)  # a name outside the table: one call, its prompt_tokens
    shape = row.shape if row else None  # the API its reply is written in
    if shape == "responses" and isinstance(response, dict):
        return _responses_calls(response)
    if not isinstance(response, (dict, str)):
        return ModelCalls(1, None, None)  # nothing readable: one call, figure unknown
    if shape != "messages":
        usage = response.get("usage") if isinstance(response, dict) else None
        total = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return ModelCalls(1, total, total)
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


@dataclass(frozen=True)
class InputComparison:
    """A predicted input against the reported figure of the same model call. `error_pct` is
    None where the provider gives no figure for the call the request as sent produced (a
    loop summed without itemising); `label` says what is compared, e.g. 'loop of 3 calls:
    first call predicted 1,212'."""

    predicted: int
    calls: ModelCalls
    reported: int | None
    error_pct: float | None
    label: str


def compare_input(predicted: int, response: Any, provider: str) -> InputComparison:
    """`predicted` (the request as sent) against the reported input of its first model call."""
    calls = model_calls(response, provider)
    first = calls.first_input
    if calls.calls > 1 and first is None:
        total = "" if calls.total_input is None else f"reported {calls.total_input:,} "
        label = (
            f"loop of {calls.calls} calls: first call predicted {predicted:,} "
            f"({total}covers a server-side loop of {calls.calls} calls; not compared)"
        )
        return InputComparison(predicted, calls, None, None, label)
    if first is None:
        return InputComparison(predicted, calls, None, None, f"predicted {predicted:,}")
    error = round(100 * (predicted - first) / first, 1) if first else None
    off = "" if error is None else f" ({error:+g} %)"
    of = f"first call of a loop of {calls.calls}: " if calls.calls > 1 else ""
    label = f"{of}predicted {predicted:,}, reported {first:,}{off}"
    return InputComparison(predicted, calls, first, error, label)
