"""The attributes of one provider request's span: the OpenTelemetry GenAI semantic conventions
(`gen_ai.*`: provider, model, usage with cache read and creation tokens) and this package's
own (`dtl.*`: the predicted cached / written / uncached tokens, the break's code and fix, load
points, what the request left warm, a collapse, a keep-warm refresh).

No message text, tool argument or key is written unless content capture is on
(`capture_content`): then the request's messages and the reply go in `gen_ai.input.messages`
and `gen_ai.output.messages`, as JSON, keys masked. Pure data: no OpenTelemetry import here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from dtl_notebook.agent.secrets import redact
from dtl_notebook.cache.collapse import CacheMiss
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.keep_warm import RefreshDecision
from dtl_notebook.wire.request import LoadPoint

__all__ = ["AttributeValue", "SpanFacts", "span_attributes", "span_name", "telemetry_table"]

AttributeValue = str | bool | int | float | Sequence[str]


@cache
def telemetry_table() -> dict[str, Any]:
    """`live/data/telemetry.json`: provider names and the variables read."""
    text = resources.files("dtl_notebook.live").joinpath("data/telemetry.json").read_text()
    table: dict[str, Any] = json.loads(text)
    return table


@dataclass(frozen=True)
class SpanFacts:
    """What one request's span tells, gathered by the Agent or the proxy."""

    entry: CacheEntry
    response: Mapping[str, Any] | None
    load_points: Sequence[LoadPoint] | None = None  # None: not known (the proxy)
    mode: str | None = None
    conversation: str | None = None
    miss: CacheMiss | None = None
    keep_warm: RefreshDecision | None = None
    status: int | None = None  # the HTTP status, where a proxy saw one
    request: Mapping[str, Any] | None = None  # the body: read only with content capture


def span_name(entry: CacheEntry) -> str:
    """`chat {model}`, the convention's `{gen_ai.operation.name} {gen_ai.request.model}`."""
    return f"chat {entry.model}"


def span_attributes(facts: SpanFacts, capture_content: bool = False) -> dict[str, AttributeValue]:
    """The span's attributes; message content only with `capture_content`."""
    entry = facts.entry
    names: dict[str, str] = telemetry_table()["provider_names"]
    out: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": names.get(entry.provider, entry.provider),
        "gen_ai.request.model": entry.model,
        "dtl.provider": entry.provider,
        "dtl.predicted.cached_tokens": entry.cached_tokens,
        "dtl.predicted.written_tokens": entry.written_tokens,
        "dtl.predicted.uncached_tokens": entry.uncached_tokens,
        "dtl.predicted.input_tokens": entry.total_tokens,
    }
    out.update(_usage(facts))
    out.update(_break(entry))
    out.update(_load_points(facts))
    out.update(_warmth(entry))
    out.update(_events(facts))
    if facts.conversation is not None:
        out["dtl.conversation"] = facts.conversation
    if facts.status is not None:
        out["http.response.status_code"] = facts.status
    if capture_content:
        out.update(_content(facts))
    return out


def _usage(facts: SpanFacts) -> dict[str, AttributeValue]:
    """Usage as the provider reported it; the prediction's input total where it did not."""
    response, entry = facts.response or {}, facts.entry
    out: dict[str, AttributeValue] = {}
    for name, field in (("gen_ai.response.model", "model"), ("gen_ai.response.id", "id")):
        if isinstance(response.get(field), str):
            out[name] = response[field]
    used = entry.reported
    figures = (used.cached, used.written, used.uncached) if used else (None, None, None)
    known = [n for n in figures if n is not None]
    total = used.input if used and used.input is not None else sum(known) if known else None
    out["gen_ai.usage.input_tokens"] = total if total is not None else entry.total_tokens
    if used is not None and used.cached is not None:
        out["gen_ai.usage.cache_read.input_tokens"] = used.cached
    if used is not None and used.written is not None:
        out["gen_ai.usage.cache_creation.input_tokens"] = used.written
    usage = response.get("usage")
    if isinstance(usage, Mapping):
        for field in telemetry_table()["output_tokens_fields"]:
            value = usage.get(field)
            if isinstance(value, int) and not isinstance(value, bool):
                out["gen_ai.usage.output_tokens"] = value
                break
    return out


def _break(entry: CacheEntry) -> dict[str, AttributeValue]:
    brk = entry.cache_break
    if brk is None:
        return {}
    return {
        "dtl.break.code": str(brk.cause),
        "dtl.break.fix": brk.fix,
        "dtl.break.lost_tokens": brk.lost_tokens,
    }


def _load_points(facts: SpanFacts) -> dict[str, AttributeValue]:
    if facts.load_points is None:
        return {}
    out: dict[str, AttributeValue] = {"dtl.load_points": len(facts.load_points)}
    if facts.load_points:
        out["dtl.load_points.tools"] = sorted({t for lp in facts.load_points for t in lp.tools})
        out["dtl.load_points.kinds"] = sorted({lp.kind for lp in facts.load_points})
    if facts.mode is not None:
        out["dtl.load_mode"] = facts.mode
    return out


def _warmth(entry: CacheEntry) -> dict[str, AttributeValue]:
    warm = entry.warmth
    if warm is None or warm.expires_at is None:
        return {"dtl.warmth.tokens": 0}
    out: dict[str, AttributeValue] = {
        "dtl.warmth.tokens": warm.tokens,
        "dtl.warmth.expires_at": warm.expires_at,
        "dtl.warmth.ttl_seconds": warm.ttl,
        "dtl.warmth.best_effort": warm.best_effort,
    }
    if warm.warning is not None:
        out["dtl.warmth.warning"] = warm.warning.message
        out["dtl.warmth.warning_tokens"] = warm.warning.tokens
        if warm.warning.dollars is not None:
            out["dtl.warmth.warning_dollars"] = warm.warning.dollars
    return out


def _events(facts: SpanFacts) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {"dtl.keep_warm": facts.keep_warm is not None}
    if facts.keep_warm is not None and facts.keep_warm.saving is not None:
        out["dtl.keep_warm.saving_dollars"] = facts.keep_warm.saving
    if facts.miss is not None:
        out["dtl.miss.reason"] = facts.miss.reason
        out["dtl.miss.code"] = facts.miss.code
        out["dtl.miss.lost_tokens"] = facts.miss.lost
        out["dtl.miss.fix"] = facts.miss.fix
    return out


def _content(facts: SpanFacts) -> dict[str, AttributeValue]:
    """The opted-in content: the request's input and the reply, keys masked."""
    out: dict[str, AttributeValue] = {}
    body = dict(facts.request or {})
    sent = {k: body[k] for k in ("system", "instructions", "messages", "input") if k in body}
    if sent:
        out["gen_ai.input.messages"] = json.dumps(redact(sent), ensure_ascii=False)
    response = dict(facts.response or {})
    said = {k: response[k] for k in ("content", "output", "choices") if k in response}
    if said:
        out["gen_ai.output.messages"] = json.dumps(redact(said), ensure_ascii=False)
    return out
