"""Anthropic Messages: tools → system → messages.

Order and deferred tools: https://docs.claude.com/en/docs/build-with-claude/prompt-caching and
https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool.

Tools with `defer_loading: true` are stripped before the cache key is computed and enter at a
`tool_reference` (in a `tool_result` or a server `tool_search_tool_result`), expanded there into
the full definition. A hidden tool-use system prompt is added whenever tools are present, sized
per model and `tool_choice` in Anthropic's pricing table; a tool-search tool adds its own prompt,
and so do server tools (`content_rules`). Images and PDFs count what Anthropic bills for them
(`anthropic_media`); thinking blocks of earlier turns are kept as `not_seen` segments of 0
tokens, since the API strips them before the model sees them.
"""

from __future__ import annotations

import math
from typing import Any

from dtl_notebook.context.anthropic_media import media_block
from dtl_notebook.context.calibration import (
    anthropic_tool_framing,
    anthropic_tool_prompt,
    claude_fit,
)
from dtl_notebook.context.collector import Collector
from dtl_notebook.context.content_rules import (
    UNPUBLISHED,
    current_turn_start,
    keeps_prior_thinking,
    output_schema,
    server_tool_prompt,
)
from dtl_notebook.context.segments import block_text, dump, strip
from dtl_notebook.wire.tool_changes import withdrawn_in

_THINKING = ("thinking", "redacted_thinking")


def per_block() -> int:
    """Framing tokens Anthropic adds around each content block (fitted)."""
    return int(claude_fit()["per_block"])


def render(payload: dict[str, Any], out: Collector) -> None:
    tools = payload.get("tools") or []
    by_name = _ByName(tools)  # filled on the first expansion
    head = {
        "tools": tools,
        "tool_choice": payload.get("tool_choice"),
        "model": payload.get("model"),
        "output_config": payload.get("output_config"),
        "output_format": payload.get("output_format"),
        "thinking": payload.get("thinking"),
    }
    if not out.unit(head):
        if tools:
            _hidden(payload, tools, out)
        _structured_output(payload, out)
        for i, tool in enumerate(tools):
            if tool.get("defer_loading"):
                continue
            published, _ = server_tool_prompt(str(tool.get("type", "")))
            out.add(
                "tool_schema",
                dump(strip(tool, "cache_control")),
                f"tools.{i}",
                label=str(tool.get("name", "")),
                tokens=0 if published is not None else None,  # the published size covers it
            )
    system = payload.get("system")
    if not out.unit(system):
        if isinstance(system, str):
            out.add("system", system, "system", label="system")
        for i, block in enumerate(system or [] if not isinstance(system, str) else []):
            out.add("system", str(block.get("text", "")), f"system.{i}", label="system")
    if not out.unit({"thinking": payload.get("thinking")}):
        _thinking_settings(payload, out)
    messages = payload.get("messages") or []
    turn = current_turn_start(messages)
    keeps = keeps_prior_thinking(str(payload.get("model", "")))
    m = out.replay(messages)
    while m < len(messages):
        message = messages[m]
        seen = keeps or m > turn
        # whether its thinking is seen depends on later messages: part of the unit
        unit = {"message": message, "thinking_seen": seen} if _has_thinking(message) else message
        if not out.unit(unit):
            _message(m, message, by_name, out, seen)
        m += 1
        m += out.replay(messages, m)


def _has_thinking(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in _THINKING for b in content
    )


class _ByName:
    """The declared tools by name, indexed on the first look-up (a turn whose new messages
    expand no tool reference never walks a native-search body's thousands of tools)."""

    def __init__(self, tools: list[Any]) -> None:
        self._tools = tools
        self._index: dict[Any, Any] | None = None

    def get(self, name: Any) -> Any:
        if self._index is None:
            self._index = {t.get("name"): t for t in self._tools if isinstance(t, dict)}
        return self._index.get(name)


def _message(
    m: int, message: Any, by_name: _ByName, out: Collector, thinking_seen: bool = True
) -> None:
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        kind = "system_patch" if role == "system" else "message"
        out.add(kind, content, f"messages.{m}.content", label=role, role=role)
        withdrawn_marks(content, f"messages.{m}.content", out)
        return
    for b, block in enumerate(content or []):
        path = f"messages.{m}.content.{b}"
        btype = block.get("type")
        if btype in ("tool_addition", "tool_removal"):
            _tool_change(block, path, by_name, out)
        elif role == "system":
            out.add("system_patch", block_text(block), path, label="system", role=role)
        elif btype in _THINKING:
            _thinking(block, path, thinking_seen, out)
        elif btype in ("image", "document"):
            media_block(block, path, str(role), out)
        elif btype == "tool_result":
            _result(block, path, by_name, out)
        elif btype == "tool_search_tool_result":
            out.add("tool_result", block_text(block), path, label="tool_search", role=role)
            refs = (block.get("content") or {}).get("tool_references") or []
            for r, ref in enumerate(refs):
                _expand(
                    ref.get("tool_name"),
                    f"{path}.content.tool_references.{r}",
                    path,
                    by_name,
                    out,
                )
        else:
            out.add("message", block_text(block), path, label=str(role), role=role)
        if btype == "text":  # a tool change told in text (soft removal)
            withdrawn_marks(str(block.get("text", "")), path, out)


def _tool_change(block: Any, path: str, by_name: _ByName, out: Collector) -> None:
    """A tool change in a system message: an added definition shown where it enters (by
    value, or the declared tool a reference names), a removal as the tool withdrawn from here
    on (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages)."""
    tool = block.get("tool") or {}
    if block.get("type") == "tool_removal":
        name = str(tool.get("name") or tool.get("server_name") or "")
        out.add("tool_withdrawn", block_text(block), path, label=name, role="system")
    elif tool.get("type") == "tool_definition":
        definition = tool.get("definition") or {}
        text = dump(strip(definition, "cache_control", "defer_loading"))
        name = str(definition.get("name", ""))
        out.add("loaded_schema", text, path, label=name, load_point=path, role="system")
    else:
        out.add("system_patch", block_text(block), path, label="system", role="system")
        _expand(tool.get("name"), path, path, by_name, out)


def withdrawn_marks(text: str, path: str, out: Collector) -> None:
    """A 0-token mark per tool a soft-removal notice withdraws, after the notice."""
    for name in withdrawn_in(text):
        out.add("tool_withdrawn", "", path, label=name, new_block=False, tokens=0)


def _hidden(payload: dict[str, Any], tools: list[Any], out: Collector) -> None:
    """Anthropic's tool-use system prompt (published + fitted framing) and tool-search prompts."""
    choice = str((payload.get("tool_choice") or {}).get("type", "auto"))
    model = str(payload.get("model", ""))
    published, unpublished = anthropic_tool_prompt(model, choice)
    why = f"published, tool_choice {choice}"
    if published is None:
        published = anthropic_tool_prompt("claude-opus-4", choice)[0] or 0
        why = f"not published for this model; Claude 4.x size, tool_choice {choice}"
        out.notes.append(
            f"the tool-use system prompt size of {model!r} is not published; "
            f"assumed equal to Claude 4.x ({published} tokens)"
        )
    out.hidden("tool-use system prompt", published, "tools", why)
    framing_why = (
        "fitted on real usage"
        if anthropic_tool_framing(model)
        else "none on this model generation (measured)"
    )
    out.hidden("tool-use framing", unpublished, "tools", framing_why)
    search_prompts = claude_fit()["tool_search_prompt"]
    for i, tool in enumerate(tools):
        kind = str(tool.get("type", "")) if isinstance(tool, dict) else ""
        prefix = next((p for p in search_prompts if kind.startswith(p)), None)
        if prefix is not None:
            out.hidden(f"{prefix} prompt", int(search_prompts[prefix]), f"tools.{i}", "fitted")
        published, own_prompt = server_tool_prompt(kind)
        fitted = claude_fit()["server_tool_prompt"].get(kind)
        if published is not None:
            out.hidden(f"{kind} prompt", published, f"tools.{i}", "published")
        elif own_prompt and fitted is not None:  # this type and version, fitted on real usage
            out.hidden(f"{kind} prompt", int(fitted), f"tools.{i}", "fitted on real usage")
            if kind not in claude_fit()["server_tool_prompt_held_out"]:
                out.notes.append(
                    f"{UNPUBLISHED}the {kind} server-tool prompt (fitted on one recording)"
                )
        elif own_prompt:
            out.hidden(f"{kind} prompt", 0, f"tools.{i}", "size not published")
            out.notes.append(f"{UNPUBLISHED}the {kind} server-tool prompt (counted as 0)")


def _thinking_settings(payload: dict[str, Any], out: Collector) -> None:
    """The extended-thinking instruction and configuration, between the system prompt and the
    messages: changing the configuration invalidates the cached messages but not tools or
    system (Anthropic's prompt-caching docs, 'What invalidates the cache'). Its size is not
    published: one fixed instruction, fitted (`calibration.json` "thinking_instruction"),
    none where tools are present (measured: `thinking_instruction_with_tools_source`)."""
    thinking = payload.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        tokens = 0 if payload.get("tools") else int(claude_fit()["thinking_instruction"])
        out.hidden("extended-thinking instruction", tokens, "thinking", dump(thinking))


def _structured_output(payload: dict[str, Any], out: Collector) -> None:
    """The hidden prompt of a structured-output request: it carries the schema (sized from its
    canonical JSON, times the copies real usage shows) and a fixed instruction; Anthropic
    publishes neither, so both are fitted (`calibration.json`)."""
    schema = output_schema(payload)
    if schema is None:
        return
    fit = claude_fit()["structured_output"]
    schema_tokens = out.counter.count(dump(schema))
    tokens = math.ceil(float(fit["schema_copies"]) * schema_tokens) + int(fit["instruction"])
    out.hidden("structured-output prompt", tokens, "output_config", "schema + fitted instruction")


def _thinking(block: dict[str, Any], path: str, seen: bool, out: Collector) -> None:
    """A thinking block: its text when the model sees it, else a `not_seen` segment."""
    if block.get("type") == "thinking":
        text = str(block.get("thinking", ""))
    else:  # redacted: encrypted, roughly its decoded size over ~4 bytes per token
        text = "[redacted thinking]"
    if not seen:
        label = "thinking (earlier turn: stripped by the API, not seen by the model)"
        out.add("not_seen", text, path, label=label, role="assistant", tokens=0)
        return
    tokens = None
    if block.get("type") == "redacted_thinking":
        tokens = len(str(block.get("data", ""))) * 3 // 4 // 4
        out.notes.append(f"{UNPUBLISHED}redacted thinking at {path} (estimated from its size)")
    out.add("message", text, path, label="thinking", role="assistant", tokens=tokens)


def _result(block: dict[str, Any], path: str, by_name: _ByName, out: Collector) -> None:
    content = block.get("content")
    label = f"result {block.get('tool_use_id', '')}"
    if isinstance(content, str) or not content:
        out.add("tool_result", content or "", path, label=label, role="user")
        return
    first = True
    for c, part in enumerate(content):
        if part.get("type") in ("image", "document"):
            if first:
                out.add("tool_result", "", path, label=label, role="user")
            media_block(part, f"{path}.content.{c}", "user", out, "tool_result")
        elif part.get("type") == "tool_reference":
            if first:
                out.add("tool_result", "", path, label=label, role="user")
            _expand(part.get("tool_name"), f"{path}.content.{c}", f"{path}.content", by_name, out)
        else:
            out.add(
                "tool_result",
                block_text(part),
                f"{path}.content.{c}",
                label=label,
                role="user",
                new_block=first,
            )
        first = False


def _expand(name: Any, source: str, load_point: str, by_name: _ByName, out: Collector) -> None:
    tool = by_name.get(name)
    if tool is None:
        out.notes.append(f"tool_reference at {source} names {name!r}, which is not in tools")
        return
    text = dump(strip(tool, "cache_control", "defer_loading"))
    out.add("loaded_schema", text, source, label=str(name), load_point=load_point, new_block=False)
