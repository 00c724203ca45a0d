"""Real request bodies paired with the input tokens the API reported for them.

Anthropic, two sources:
- `anth_sdk/*.json` of the real recordings (recorded by anthropics/anthropic-sdk-python, read at
  run time through tests/support/real_recordings.py; absent folder -> no pairs from it);
- `tests/data/anthropic_usage_pairs.json`: request bodies and usage figures excerpted from public
  recordings (pydantic/pydantic-ai cassettes, vercel/ai fixtures), each naming its source.

"Reported" is input + cache_read + cache_creation tokens: the whole input the model saw.

OpenAI: `tests/data/openai_usage_pairs.json`, excerpts of pydantic/pydantic-ai cassettes (Responses
`usage.input_tokens` or the `responses/input_tokens` count; Chat Completions `usage.prompt_tokens`).

Cached follow-ups: `tests/data/cached_followups.json`, conversations whose later requests read the
cache, with the cached / written / uncached tokens reported for each request (`followups()`); each
request is also an input-token pair (`followup_pairs()`). Every source and its licence:
`tests/data/sources.json`.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anthropic.types import RawMessageStartEvent, Usage

from dtl_notebook.context import model_context
from dtl_notebook.context.server_loop import model_calls
from tests.support.real_recordings import real_root

EMBEDDED = Path(__file__).resolve().parents[1] / "data" / "anthropic_usage_pairs.json"
OPENAI_EMBEDDED = Path(__file__).resolve().parents[1] / "data" / "openai_usage_pairs.json"
FOLLOWUPS = Path(__file__).resolve().parents[1] / "data" / "cached_followups.json"
# Server tools whose prompts model_context does not size (they run to thousands of tokens).
_UNMODELLED_SERVER_TOOLS = ("web_search", "web_fetch", "code_execution", "bash_", "text_editor")


@dataclass(frozen=True)
class UsagePair:
    source: str
    body: dict[str, Any]
    reported: int
    provider: str = "anthropic"
    excluded: str | None = None  # why the recording is outside the model, as its data says
    calls: int = 1  # model calls the reported usage covers (a server tool's loop adds calls)
    first_input: int | None = None  # the first call's input, where the usage itemises calls

    @property
    def with_tools(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def unmodelled(self) -> str | None:
        """Why this request is outside what the estimate covers, or None."""
        if self.excluded:
            return self.excluded
        if "output_config" in self.body:
            return "structured-output prompt (output_config) is not modelled"
        for tool in self.body.get("tools") or []:
            if str(tool.get("type", "")).startswith(_UNMODELLED_SERVER_TOOLS):
                return f"server tool {tool['type']} adds a prompt that is not modelled"
            if tool.get("allowed_callers"):
                return "programmatic tool calling adds the code-execution prompt"
        return None

    @property
    def comparable(self) -> int | None:
        """The reported input of the call the request as sent produced: all of it for one
        call, the first iteration for a server loop (None where that is not itemised)."""
        return self.reported if self.calls == 1 else self.first_input

    def predicted(self) -> int:
        return model_context(self.body, provider=self.provider).total_tokens

    def signed_error(self) -> float:
        """(predicted - reported) / reported, against the first model call."""
        reported = self.comparable
        if reported is None:
            raise ValueError(f"{self.source}: usage sums {self.calls} model calls, not itemised")
        return (self.predicted() - reported) / reported

    def error(self) -> float:
        """|predicted - reported| / reported."""
        return abs(self.signed_error())


def _total(usage: Usage) -> int:
    return (
        usage.input_tokens
        + (usage.cache_read_input_tokens or 0)
        + (usage.cache_creation_input_tokens or 0)
    )


def _reported(body: Any) -> int:
    """Input tokens of a JSON response body, or of a stream's `message_start` event."""
    if isinstance(body, dict):
        return _total(Usage.model_validate(body["usage"]))
    for line in str(body).splitlines():
        if line.startswith("data:") and '"message_start"' in line:
            event = RawMessageStartEvent.model_validate_json(line[len("data:") :])
            return _total(event.message.usage)
    raise ValueError("stream has no message_start event")


def sdk_pairs() -> list[UsagePair]:
    """Successful exchanges in `anth_sdk/` (empty where the real recordings are absent)."""
    root = real_root()
    pairs = []
    for path in sorted((root / "anth_sdk").glob("*.json") if root else []):
        for i, exchange in enumerate(json.loads(path.read_text())):
            if exchange["response"]["status_code"] != 200:
                continue
            response = exchange["response"]["body"]
            reported = _reported(response)
            if reported:  # a container-continuation reply reports 0 input tokens
                body = exchange["request"]["body"]
                calls = model_calls(response)
                source = f"anth_sdk/{path.name}#{i}"
                pairs.append(
                    UsagePair(
                        source, body, reported, calls=calls.calls, first_input=calls.first_input
                    )
                )
    return pairs


def embedded_pairs() -> list[UsagePair]:
    pairs = []
    for conversation in json.loads(EMBEDDED.read_text())["conversations"]:
        for messages, reported in conversation["turns"]:
            body = {**conversation["body"], "messages": conversation["body"]["messages"][:messages]}
            pairs.append(UsagePair(f"{conversation['source']} [{messages}]", body, reported))
    return pairs


def covered(pairs: list[UsagePair]) -> list[UsagePair]:
    """The requests with tools that the estimate covers."""
    return [p for p in pairs if p.with_tools and p.unmodelled is None]


def openai_pairs() -> list[UsagePair]:
    """Every embedded OpenAI request (Responses and Chat Completions), excluded ones included."""
    pairs = []
    for conversation in json.loads(OPENAI_EMBEDDED.read_text())["conversations"]:
        provider = conversation["provider"]
        key = "input" if provider == "openai-responses" else "messages"
        whole = _expand(conversation["body"])
        for items, reported in conversation["turns"]:
            body = {**whole, key: whole[key][:items]}
            source = f"{conversation['source']} [{items}]"
            excluded = conversation.get("unmodelled")
            pairs.append(UsagePair(source, body, reported, provider, excluded))
    return pairs


def openai_calibration_pairs() -> list[UsagePair]:
    """OpenAI requests with tools that the estimate covers."""
    return [p for p in openai_pairs() if p.with_tools and p.unmodelled is None]


def summary(pairs: list[UsagePair]) -> tuple[float, float]:
    """(median, 90th percentile) absolute relative error, in percent."""
    errors = sorted(100 * p.error() for p in pairs)
    p90 = errors[min(len(errors) - 1, round(0.9 * (len(errors) - 1)))]
    return statistics.median(errors), p90


def _expand(value: Any) -> Any:
    """A body with each `{"repeat": text, "times": n}` written out."""
    if isinstance(value, dict):
        if set(value) == {"repeat", "times"}:
            return str(value["repeat"]) * int(value["times"])
        return {k: _expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v) for v in value]
    return value


@dataclass(frozen=True)
class Followups:
    """One recorded conversation: its requests in order and, per request, the reported
    (cached, written, uncached) input tokens."""

    source: str
    provider: str
    requests: list[dict[str, Any]]
    reported: list[tuple[int, int, int]]


def followups() -> list[Followups]:
    return [
        Followups(
            c["source"],
            c["provider"],
            [_expand(r) for r in c["requests"]],
            [(int(a), int(b), int(u)) for a, b, u in c["reported"]],
        )
        for c in json.loads(FOLLOWUPS.read_text())["conversations"]
    ]


def followup_pairs() -> list[UsagePair]:
    """Each request of the cached conversations, against its whole reported input; a request
    sent again unchanged is one input-token pair (it adds a cache read, not a new input)."""
    return [
        UsagePair(f"{f.source} [{i + 1}]", body, sum(usage), f.provider)
        for f in followups()
        for i, (body, usage) in enumerate(zip(f.requests, f.reported, strict=True))
        if i == 0 or body != f.requests[i - 1]
    ]
