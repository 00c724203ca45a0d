"""Static checks of one request: no history needed.

Anthropic's rules (https://platform.claude.com/docs/en/build-with-claude/prompt-caching): at
most `MAX_CACHE_BREAKPOINTS` breakpoints, a read looks back at most `LOOKBACK_BLOCKS` blocks, a
prefix below the model's minimum is not cached, `cache_control` on a `defer_loading` tool is
refused (https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool); the
markers and the refusals are the validator's own scans (`wire.rules`, `wire.tool_rules`).
OpenAI caches the longest common prefix
(https://developers.openai.com/api/docs/guides/prompt-caching), so volatile text early in it
matters there too (a tool order that changes needs a conversation: `tool_order`). The
deferred-tool
checks follow this package's own rules (`wire.anthropic.PLACEHOLDER`, `agent.sections`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from dtl_notebook.cache.carry import Carried, breakpoint_segments, carry
from dtl_notebook.cache.codes import capabilities
from dtl_notebook.cache.findings import Finding, finding
from dtl_notebook.cache.prefix_rules import cache_rule
from dtl_notebook.context.model import ModelContext, model_context
from dtl_notebook.wire.problems import as_list
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.rules import cache_marks, too_many_breakpoints
from dtl_notebook.wire.search_tools import is_search_tool
from dtl_notebook.wire.shape_errors import format_path
from dtl_notebook.wire.tool_rules import deferred_marks

_VOLATILE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?"  # ISO timestamp
    r"|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"  # UUID
    r"|\b(today is|current (date|time) is|the time is now)\b",
    re.I,
)
_CATALOG_TITLES = ("Deferred tools (search before use):", "Deferred tools by group")
_PREFIX_KINDS = {"tool_schema", "tool_summary", "system"}


def lint(
    payload: dict[str, Any],
    provider: str,
    model: str | None = None,
    context: ModelContext | None = None,
) -> list[Finding]:
    """Findings about one request body, in the vocabulary's order of appearance; `context`:
    its model context, where the caller already worked it out."""
    if not isinstance(payload, dict):
        raise TypeError(f"request must be a JSON object, got {type(payload).__name__}")
    model = model or str(payload.get("model", ""))
    ctx = context or model_context(payload, provider, model)
    found: list[Finding] = []
    found += _volatile(ctx)
    found += _sections(payload)
    if spec(provider).marks_breakpoints:  # the breakpoint rules bind where marks are sent
        found += _breakpoints(payload, ctx, provider)
    held = capabilities(provider, model)  # the fixes this model can take
    return [replace(f, capabilities=held) for f in found]


def _breakpoints(payload: dict[str, Any], ctx: ModelContext, provider: str) -> list[Finding]:
    out: list[Finding] = []
    tools = [t for t in payload.get("tools") or [] if isinstance(t, dict)]
    marks = cache_marks(payload)  # the validator's scan: nested blocks count too
    listed = as_list(payload.get("tools"))
    marked_deferred = [_name(listed[i]) for i in deferred_marks(listed)]  # the validator's rule
    if marked_deferred:
        out.append(finding("cache_control_on_deferred", "tools", marked_deferred))
    facts = carry(ctx, False, None)
    points = breakpoint_segments(marks, facts)
    if not points:
        return [*out, finding("no_breakpoint")]
    too_many = too_many_breakpoints(marks)
    if too_many is not None:
        where = format_path(too_many.path)
        out.append(finding("too_many_breakpoints", where, [f"{len(marks)} markers"]))
    rule = cache_rule(provider, ctx.model)
    if all(facts.cum[p] < rule.min_tokens for p, _ in points):
        best = max(facts.cum[p] for p, _ in points)
        out.append(finding("below_minimum", None, [f"{best} < {rule.min_tokens} tokens"]))
    segs = facts.segments
    out += _lookback(facts, points, rule.lookback_blocks)
    messages = payload.get("messages") or []
    start = facts.starts.get("messages")
    if start is not None and all(p < start for p, _ in points):
        out.append(finding("messages_never_cached", segs[points[-1][0]].source))
    last = segs[points[-1][0]]
    if last.kind == "system_patch" and last.source.startswith("messages."):
        index = int(last.source.split(".")[1])
        if index == len(messages) - 1:
            out.append(finding("breakpoint_on_trailing_system", last.source))
    if tools and not any(t.get("defer_loading") for t in tools) and any(map(is_search_tool, tools)):
        out.append(finding("deferred_without_placeholder", "tools"))
    return out


def _lookback(facts: Carried, points: list[tuple[int, float]], lookback: int) -> list[Finding]:
    """More blocks between two breakpoints than a read looks back. Before the first breakpoint
    nothing was written that a read could miss: a first request's long prefix is no finding."""
    segs = facts.segments
    before = segs[points[0][0]].block
    for point, _ in points[1:]:
        after = segs[point].block
        if after - before > lookback:
            return [finding("lookback_exceeded", segs[point].source, [f"{after - before} blocks"])]
        before = after
    return []


def _volatile(ctx: ModelContext) -> list[Finding]:
    """Volatile text in the part every request shares: tools and the system prompt."""
    for seg in ctx.segments:
        if seg.kind not in _PREFIX_KINDS:
            continue
        match = _VOLATILE.search(seg.text)
        if match:
            return [finding("volatile_prefix", f"{seg.source}@{match.start()}", [match.group(0)])]
    return []


def _name(tool: dict[str, Any]) -> str:
    function = tool.get("function")
    return str((function if isinstance(function, dict) else tool).get("name") or "")


def _sections(payload: dict[str, Any]) -> list[Finding]:
    """This package's own system-prompt sections: snippets and catalogs in the prefix."""
    system = _system_text(payload)
    if not system:
        return []
    out: list[Finding] = []
    tools = [t for t in payload.get("tools") or [] if isinstance(t, dict)]
    deferred = {_name(t) for t in tools if t.get("defer_loading")}
    section = re.search(r"<tools>\n(.*?)\n</tools>", system, re.S)
    if section and deferred:
        names = re.findall(r"^- ([A-Za-z0-9_-]+):", section.group(1), re.M)
        listed = [n for n in names if n in deferred]
        if listed:
            out.append(finding("deferred_tool_snippet", "system", listed))
    if any(title in system for title in _CATALOG_TITLES):
        out.append(finding("catalog_in_prefix", "system"))
    return out


def _system_text(payload: dict[str, Any]) -> str:
    system = payload.get("system", payload.get("instructions"))
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    for message in payload.get("messages") or payload.get("input") or []:
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            content = message.get("content")
            return content if isinstance(content, str) else ""
        break
    return ""
