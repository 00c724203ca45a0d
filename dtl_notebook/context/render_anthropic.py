"""Anthropic Messages: tools → system → messages (providers.md §1.4).

Tools with `defer_loading: true` are stripped before the cache key is computed and enter at a
`tool_reference` (in a `tool_result` or a server `tool_search_tool_result`), expanded there into
the full definition. A hidden tool-use system prompt is added whenever tools are present, sized
per model and `tool_choice` in Anthropic's pricing table; a tool-search tool adds its own prompt.
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.calibration import anthropic_tool_prompt, calibration
from dtl_notebook.context.segments import Collector, block_text, dump, strip


def render(payload: dict[str, Any], out: Collector) -> None:
    tools = payload.get("tools") or []
    by_name = _ByName(tools)  # filled on the first expansion
    head = {
        "tools": tools,
        "tool_choice": payload.get("tool_choice"),
        "model": payload.get("model"),
    }
    if not out.unit(head):
        if tools:
            _hidden(payload, tools, out)
        for i, tool in enumerate(tools):
            if tool.get("defer_loading"):
                continue
            out.add(
                "tool_schema",
                dump(strip(tool, "cache_control")),
                f"tools.{i}",
                label=str(tool.get("name", "")),
            )
    system = payload.get("system")
    if not out.unit(system):
        if isinstance(system, str):
            out.add("system", system, "system", label="system")
        for i, block in enumerate(system or [] if not isinstance(system, str) else []):
            out.add("system", str(block.get("text", "")), f"system.{i}", label="system")
    messages = payload.get("messages") or []
    m = out.replay(messages)
    while m < len(messages):
        message = messages[m]
        if not out.unit(message):
            _message(m, message, by_name, out)
        m += 1
        m += out.replay(messages, m)


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


def _message(m: int, message: Any, by_name: _ByName, out: Collector) -> None:
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        kind = "system_patch" if role == "system" else "message"
        out.add(kind, content, f"messages.{m}.content", label=role, role=role)
        return
    for b, block in enumerate(content or []):
        path = f"messages.{m}.content.{b}"
        btype = block.get("type")
        if role == "system":
            out.add("system_patch", block_text(block), path, label="system", role=role)
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
    out.hidden("tool-use framing", unpublished, "tools", "fitted on real usage")
    search_prompts = calibration()["anthropic"]["tool_search_prompt"]
    for i, tool in enumerate(tools):
        kind = str(tool.get("type", "")) if isinstance(tool, dict) else ""
        prefix = next((p for p in search_prompts if kind.startswith(p)), None)
        if prefix is not None:
            out.hidden(f"{prefix} prompt", int(search_prompts[prefix]), f"tools.{i}", "fitted")


def _result(block: dict[str, Any], path: str, by_name: _ByName, out: Collector) -> None:
    content = block.get("content")
    label = f"result {block.get('tool_use_id', '')}"
    if isinstance(content, str) or not content:
        out.add("tool_result", content or "", path, label=label, role="user")
        return
    first = True
    for c, part in enumerate(content):
        if part.get("type") == "tool_reference":
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
