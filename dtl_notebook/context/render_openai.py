"""OpenAI Responses, and the hidden prompts and image counts Chat Completions shares
(`render_chat`).

Order and loaded tools: https://platform.openai.com/docs/guides/prompt-caching and
https://platform.openai.com/docs/guides/tools-tool-search.

OpenAI renders hidden system content → tools → instructions/developer → history. Deferred
functions and namespaces show only their name and description up front; loaded definitions
join at the `additional_tools` or `tool_search_output` item, at the end of the context.
Images count what OpenAI bills for them (`media`); reasoning items of earlier turns are
`not_seen` (dropped before the model sees them); hosted tools and structured output add
prompts whose size OpenAI does not publish, named as such in the notes.
"""

from __future__ import annotations

import dataclasses
from itertools import islice
from typing import Any

from dtl_notebook.context.collector import Collector
from dtl_notebook.context.content_rules import (
    UNPUBLISHED,
    current_turn_start,
    openai_hosted_unpublished,
    output_schema,
)
from dtl_notebook.context.media import billing, openai_image_tokens
from dtl_notebook.context.openai_functions import (
    answered_call,
    count_as_declaration,
    reply_priming,
    tool_call_tokens,
    tool_output_header,
)
from dtl_notebook.context.openai_parts import own_rule, own_rule_tokens
from dtl_notebook.context.openai_tool_search import (
    add_load_prompt,
    add_search_prompts,
    search_exhausted,
    shown,
)
from dtl_notebook.context.render_anthropic import withdrawn_marks
from dtl_notebook.context.request_kinds import item_types
from dtl_notebook.context.segments import content_text, dump, strip

_IMAGES = ("input_image", "image_url")

HIDDEN_NOTE = "OpenAI adds hidden system content ahead of the tools; it is not counted here"


def _function_text(tool: dict[str, Any]) -> str:
    return dump(strip(tool, "defer_loading", "strict"))


def _responses_tool(tool: dict[str, Any], source: str, out: Collector) -> None:
    kind = tool.get("type")
    if kind == "namespace":
        summary = {"namespace": tool.get("name"), "description": tool.get("description")}
        out.add("tool_summary", dump(summary), source, label=str(tool.get("name")))
        for i, member in enumerate(tool.get("tools") or []):
            if not member.get("defer_loading"):
                out.add(
                    "tool_schema",
                    _function_text(member),
                    f"{source}.tools.{i}",
                    label=f"{tool.get('name')}.{member.get('name')}",
                )
                count_as_declaration(out, member)
    elif kind == "function" and tool.get("defer_loading"):
        summary = {"name": tool.get("name"), "description": tool.get("description")}
        out.add("tool_summary", dump(summary), source, label=str(tool.get("name")))
        count_as_declaration(out, summary)
    else:
        out.add("tool_schema", _function_text(tool), source, label=str(tool.get("name", kind)))
        count_as_declaration(out, tool)
        if kind != "tool_search" and openai_hosted_unpublished(str(kind)):
            out.notes.append(f"{UNPUBLISHED}the hosted {kind} tool's prompt")


def content_tokens(content: Any, model: str, out: Collector) -> tuple[str, int | None]:
    """(text, billed tokens or None when they are the text's) of message content: images,
    audio and files by reference count by their own rules, not as text."""
    text = content_text(content)
    if not isinstance(content, list):
        return text, None
    images = [p for p in content if isinstance(p, dict) and p.get("type") in _IMAGES]
    own = [p for p in content if own_rule(p)]  # audio by duration, files by reference
    if not images and not own:
        return text, None
    words = content_text([p for p in content if p not in images and p not in own])
    tokens = (out.counter.count(words) if words else 0) + own_rule_tokens(own, out)
    for part in images:
        url = part.get("image_url")
        detail = str(part.get("detail") or "auto")
        if isinstance(url, dict):  # Chat Completions: {"url": ..., "detail": ...}
            detail, url = str(url.get("detail") or "auto"), url.get("url")
        image = openai_image_tokens(url, detail, model)
        unknown = image.unknown("an image given by URL or file id")
        if unknown:
            out.notes.append(f"{UNPUBLISHED}{unknown}")
        tokens += image.tokens
    return text, tokens


def structured_output(payload: dict[str, Any], source: str, out: Collector) -> None:
    schema = output_schema(payload)
    if schema is None:
        return
    out.hidden("structured-output schema", out.counter.count(dump(schema)), source, "its JSON")
    out.notes.append(f"{UNPUBLISHED}the instruction around the structured-output schema")


def _reasoning(item: dict[str, Any], path: str, seen: bool, out: Collector) -> None:
    """A reasoning item: an earlier turn's is dropped; the current turn's counts its
    encrypted reasoning by size (the real count is not published)."""
    summary = " ".join(
        str(p.get("text", "")) for p in item.get("summary") or [] if isinstance(p, dict)
    )
    if not seen:
        label = "reasoning (earlier turn: dropped by the API, not seen by the model)"
        out.add("not_seen", summary, path, label=label, role="assistant", tokens=0)
        return
    encrypted = item.get("encrypted_content")
    if isinstance(encrypted, str) and encrypted:
        per_token = int(billing()["openai"]["reasoning"]["bytes_per_token"])
        tokens = len(encrypted) * 3 // 4 // per_token
        out.notes.append(f"{UNPUBLISHED}reasoning at {path} (estimated from its encrypted size)")
        out.add("message", summary, path, label="reasoning", role="assistant", tokens=tokens)
        return
    out.notes.append(f"{UNPUBLISHED}reasoning at {path} (kept by the server, size unknown)")
    out.add("message", summary, path, label="reasoning", role="assistant")


def hidden_prompts(tools: list[Any], history: str, exhausted: bool, out: Collector) -> None:
    """The published framing (`billing.json` "openai" "framing") and the tool-search prompts
    (`openai_tool_search`)."""
    out.hidden("reply priming", reply_priming(out.model), history, "published")
    if any(shown(t, exhausted) for t in tools):
        section = int(billing()["openai"]["framing"]["function"]["section"])
        out.hidden("function definitions framing", section, "tools", "published")
    add_search_prompts(tools, exhausted, out)


def _loaded_tools(item: dict[str, Any], path: str, out: Collector) -> None:
    """Definitions an `additional_tools` / `tool_search_output` item loads; namespaces by member."""
    for t, tool in enumerate(item.get("tools") or []):
        source = f"{path}.tools.{t}"
        members = tool.get("tools") if tool.get("type") == "namespace" else None
        text = (
            dump({"namespace": tool.get("name"), "description": tool.get("description")})
            if isinstance(members, list)
            else _function_text(tool)
        )
        out.add(
            "loaded_schema",
            text,
            source,
            label=str(tool.get("name")),
            load_point=path,
            new_block=False,
        )
        if not isinstance(members, list):
            count_as_declaration(out, tool)
            continue
        for m, member in enumerate(members):
            out.add(
                "loaded_schema",
                _function_text(member),
                f"{source}.tools.{m}",
                label=f"{tool.get('name')}.{member.get('name')}",
                load_point=path,
                new_block=False,
            )
            count_as_declaration(out, member)


def render_responses(payload: dict[str, Any], out: Collector) -> None:
    tools = payload.get("tools") or []
    items = payload.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = items or []
    exhausted = search_exhausted(tools, items, item_types(payload))
    head = {
        "tools": tools,
        "instructions": payload.get("instructions"),
        "text": payload.get("text"),
        "exhausted": exhausted,
    }
    if not out.unit(head):
        out.notes.append(HIDDEN_NOTE)
        hidden_prompts(tools, "input", exhausted, out)
        structured_output(payload, "text.format", out)
        for i, tool in enumerate(tools):
            if shown(tool, exhausted):
                _responses_tool(tool, f"tools.{i}", out)
        if payload.get("instructions"):
            out.add("system", str(payload["instructions"]), "instructions", label="instructions")
    turn = current_turn_start(items)
    i = out.replay(items)
    while i < len(items):
        item = items[i]
        reasoning = isinstance(item, dict) and item.get("type") == "reasoning"
        # whether a reasoning item is seen depends on later items: part of the unit
        unit = {"item": item, "seen": i > turn} if reasoning else item
        if not out.unit(unit):
            if reasoning:
                _reasoning(item, f"input.{i}", i > turn, out)
                i += 1
                i += out.replay(items, i)
                continue
            kind, role = item.get("type", "message"), item.get("role")
            # read only for a developer or system message; any() stops at the first
            # conversation message: in practice at once
            seen_message = any(
                earlier.get("type", "message") == "message"
                and earlier.get("role") not in ("developer", "system")
                for earlier in islice(items, i)
            )
            _responses_item(items, i, kind, role, seen_message, out)
        i += 1
        i += out.replay(items, i)


def _responses_item(
    items: list[Any], i: int, kind: str, role: Any, seen_message: bool, out: Collector
) -> None:
    item, path = items[i], f"input.{i}"
    if kind == "additional_tools" or kind == "tool_search_output":
        add_load_prompt(items, i, out)
        out.add(
            "tool_result" if kind == "tool_search_output" else "system_patch",
            "",
            path,
            label=kind,
            role="developer",
        )
        _loaded_tools(item, path, out)
    elif kind == "function_call_output":
        output = item.get("output")
        text = output if isinstance(output, str) else dump(output)
        out.add("tool_result", text, path, label=f"result {item.get('call_id')}", role="tool")
        add_output_header(items, i, item.get("call_id"), out)
    elif kind == "message" and role in ("developer", "system"):
        text = content_text(item.get("content"))
        out.add("system_patch" if seen_message else "system", text, path, label=role, role=role)
        withdrawn_marks(text, path, out)
    elif kind == "message":
        text, tokens = content_tokens(item.get("content"), out.model, out)
        out.add("message", text, path, label=str(role), role=role, tokens=tokens)
    else:
        # Item ids, call ids and statuses are bookkeeping: fitting real usage shows the model
        # does not see them (benchmarks/calibrate.py).
        shown = strip(item, "id", "call_id", "status", "type", "execution")
        tokens = None
        if kind == "function_call":
            tokens = tool_call_tokens(item, lambda text: int(out.counter.count(text)))
        out.add("message", dump(shown), path, label=kind, role="assistant", tokens=tokens)


def add_output_header(items: list[Any], i: int, call_id: Any, out: Collector) -> None:
    """Give the tool output just added its header: authored by the function it answers."""
    call = answered_call(items, i, call_id)
    if call is not None:
        segment = out.segments[-1]
        header = tool_output_header(call, lambda text: int(out.counter.count(text)))
        out.segments[-1] = dataclasses.replace(segment, tokens=segment.tokens + header)
