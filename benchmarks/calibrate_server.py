"""Anthropic server-tool prompts, one per tool type and version, on first-call usage.

A server tool (web search, web fetch, code execution) adds a prompt whose size Anthropic does not
publish. A stream's `message_start` reports the first model call's input before the tool runs,
so each such recording pairs the request as sent with what the model saw: the gap beyond the rest
of the model context is the tool's prompt (a request with two such tools carries the sum). Each
conversation is predicted by the prompts fitted on the others; a type no other conversation
carries is left out. Used by `benchmarks/calibrate.py`.
"""

from __future__ import annotations

import numpy as np

from benchmarks.calibrate_kinds import all_pairs, conversation, kind_of
from dtl_notebook.context import model_context
from dtl_notebook.context.content_rules import server_tool_prompt
from tests.support.usage_pairs import UsagePair


def server_kinds(pair: UsagePair) -> list[str]:
    """The server-tool types (with version) of a request whose prompt size is not published."""
    kinds = [str(t.get("type", "")) for t in pair.body.get("tools") or []]
    return sorted({k for k in kinds if server_tool_prompt(k) == (None, True)})


def server_gap(pair: UsagePair) -> float:
    """What the first model call's usage shows beyond the rest of the context."""
    labels = {f"{k} prompt" for k in server_kinds(pair)}
    ctx = model_context(pair.body, provider="anthropic")
    reported = pair.comparable
    assert reported is not None
    return reported - sum(s.tokens for s in ctx if s.label not in labels)


def server_fit(pairs: list[UsagePair]) -> dict[str, float]:
    """One prompt per server-tool type and version, least squares over the requests (a request
    with two such tools carries the sum of both)."""
    kinds = sorted({k for p in pairs for k in server_kinds(p)})
    rows = [[float(k in server_kinds(p)) for k in kinds] for p in pairs]
    sizes, *_ = np.linalg.lstsq(np.array(rows), np.array([server_gap(p) for p in pairs]))
    return dict(zip(kinds, (float(v) for v in sizes), strict=True))


def server_loco(pairs: list[UsagePair]) -> dict[str, float]:
    """Signed errors (%) of server-tool requests, each conversation predicted by the prompts
    fitted on the others; one whose tool type no other conversation carries is left out."""
    errors = {}
    for group in dict.fromkeys(conversation(p) for p in pairs):
        train = [p for p in pairs if conversation(p) != group]
        sizes = server_fit(train) if train else {}
        for p in (p for p in pairs if conversation(p) == group):
            if not all(k in sizes for k in server_kinds(p)):
                continue
            reported = p.comparable
            assert reported is not None
            predicted = reported - server_gap(p) + sum(sizes[k] for k in server_kinds(p))
            errors[p.source] = 100 * (predicted - reported) / reported
    return errors


def server_pairs() -> list[UsagePair]:
    return [
        p
        for p in all_pairs()
        if kind_of(p) == "anthropic_server_tools" and p.comparable is not None and server_kinds(p)
    ]
