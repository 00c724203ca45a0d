"""What the model context holds for one request: ordered segments with token counts.

Documented by the providers (providers.md §1.4, §2, §3.2, §4):
- Anthropic renders tools → system → messages. Tools with `defer_loading: true` are stripped
  before the cache key is computed and enter at a `tool_reference` (in a `tool_result` or a
  server `tool_search_tool_result`), expanded there into the full definition. A hidden
  tool-use system prompt is added whenever tools are present, sized per model and
  `tool_choice` in Anthropic's pricing table; a tool-search tool adds its own prompt.
- OpenAI renders hidden system content → tools → instructions/developer → history. Deferred
  functions and namespaces show only their name and description up front; loaded definitions
  join at the `additional_tools` or `tool_search_output` item, at the end of the context.
- Chat Completions: tools, then messages. Kimi: the same, with definitions in system messages.

Our model (not documented): the exact text each provider renders for a tool or a block is not
public, so each segment's text is a canonical JSON or plain-text rendering of what the request
says, and token counts come from the offline tokenizer named in `ModelContext.tokenizer`
(estimates for Claude and Kimi). What the provider adds around the text (hidden prompts, framing
per block or message) comes from `calibration.py`: each message-like segment carries its framing
tokens, fixed additions are `hidden` segments, and `ModelContext.estimate` says how far the total
can be trusted. Segment order and presence follow the documented rules above.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from dtl_notebook.context.calibration import (
    Estimate,
    anthropic_tool_prompt,
    calibration,
    estimate_for,
)
from dtl_notebook.context.tokens import encoding_for
from dtl_notebook.wire.arguments import check_context_arguments
from dtl_notebook.wire.common import WireRequest

KINDS = (
    "hidden",
    "tool_schema",
    "tool_summary",
    "system",
    "system_patch",
    "message",
    "tool_result",
    "loaded_schema",
)
# Segments the provider frames one by one (role markers, block delimiters).
FRAMED_KINDS = frozenset({"system", "system_patch", "message", "tool_result"})


@dataclass(frozen=True)
class Segment:
    """One piece of the model context, in order."""

    kind: str
    text: str
    tokens: int
    source: str
    label: str = ""
    role: str | None = None
    load_point: str | None = None  # JSON path of the item that loaded this definition
    block: int = -1  # cacheable unit (Anthropic block) this segment belongs to

    @property
    def digest(self) -> str:
        return _digest(self.text, self.kind)


@dataclass(repr=False)
class ModelContext:
    """The ordered segments a provider puts in front of the model for one request."""

    provider: str
    model: str
    segments: list[Segment]
    tokenizer: str
    exact_tokens: bool
    notes: list[str] = field(default_factory=list)
    estimate: Estimate = field(default_factory=lambda: Estimate("unknown", False))

    @property
    def total_tokens(self) -> int:
        return sum(s.tokens for s in self.segments)

    def __repr__(self) -> str:
        return (
            f"ModelContext(provider={self.provider}, model={self.model}, "
            f"segments={len(self.segments)}, tokens={self.total_tokens}"
            f"{'' if self.estimate.exact else ' (estimate)'})"
        )

    def __iter__(self) -> Iterator[Segment]:
        return iter(self.segments)

    def __len__(self) -> int:
        return len(self.segments)

    def of_kind(self, *kinds: str) -> list[Segment]:
        return [s for s in self.segments if s.kind in kinds]


@lru_cache(maxsize=200_000)
def _digest(text: str, kind: str) -> str:
    return hashlib.blake2b(f"{kind}\0{text}".encode(), digest_size=16).hexdigest()


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _strip(tool: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k not in keys}


class _Collector:
    def __init__(self, provider: str, model: str, framing: int = 0) -> None:
        self.counter = encoding_for(provider, model)
        self.segments: list[Segment] = []
        self.block = -1
        self.framing = framing  # tokens the provider adds around each framed segment

    @staticmethod
    @lru_cache(maxsize=200_000)
    def _count(counter: Any, text: str) -> int:
        return int(counter.count(text))

    def add(
        self,
        kind: str,
        text: str,
        source: str,
        *,
        label: str = "",
        role: str | None = None,
        load_point: str | None = None,
        new_block: bool = True,
    ) -> None:
        if new_block:
            self.block += 1
        tokens = self._count(self.counter, text) if text else 0
        if kind in FRAMED_KINDS:
            tokens += self.framing
        self.segments.append(
            Segment(kind, text, tokens, source, label, role, load_point, self.block)
        )

    def hidden(self, label: str, tokens: int, source: str, why: str) -> None:
        """A fixed addition the request does not spell out (kind `hidden`, no cache block)."""
        self.segments.append(
            Segment("hidden", f"[{label}: {tokens} tokens, {why}]", tokens, source, label)
        )


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "input_image", "image_url"):
        return "[image]"
    if kind == "tool_use":
        return _dump(
            {"tool_use": block.get("name"), "id": block.get("id"), "input": block.get("input")}
        )
    return _dump(_strip(block, "cache_control"))


# -- Anthropic ---------------------------------------------------------------------------------
def _anthropic(payload: dict[str, Any], out: _Collector) -> list[str]:
    notes: list[str] = []
    tools = payload.get("tools") or []
    by_name = {t.get("name"): t for t in tools if isinstance(t, dict)}
    if tools:
        _anthropic_hidden(payload, tools, out, notes)
    for i, tool in enumerate(tools):
        if tool.get("defer_loading"):
            continue
        out.add(
            "tool_schema",
            _dump(_strip(tool, "cache_control")),
            f"tools.{i}",
            label=str(tool.get("name", "")),
        )
    system = payload.get("system")
    if isinstance(system, str):
        out.add("system", system, "system", label="system")
    for i, block in enumerate(system or [] if not isinstance(system, str) else []):
        out.add("system", str(block.get("text", "")), f"system.{i}", label="system")
    for m, message in enumerate(payload.get("messages") or []):
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            kind = "system_patch" if role == "system" else "message"
            out.add(kind, content, f"messages.{m}.content", label=role, role=role)
            continue
        for b, block in enumerate(content or []):
            path = f"messages.{m}.content.{b}"
            btype = block.get("type")
            if role == "system":
                out.add("system_patch", _block_text(block), path, label="system", role=role)
            elif btype == "tool_result":
                _anthropic_result(block, path, by_name, out, notes)
            elif btype == "tool_search_tool_result":
                out.add("tool_result", _block_text(block), path, label="tool_search", role=role)
                refs = (block.get("content") or {}).get("tool_references") or []
                for r, ref in enumerate(refs):
                    _expand(
                        ref.get("tool_name"),
                        f"{path}.content.tool_references.{r}",
                        path,
                        by_name,
                        out,
                        notes,
                    )
            else:
                out.add("message", _block_text(block), path, label=str(role), role=role)
    return notes


def _anthropic_hidden(
    payload: dict[str, Any], tools: list[Any], out: _Collector, notes: list[str]
) -> None:
    """Anthropic's tool-use system prompt (published + fitted framing) and tool-search prompts."""
    choice = str((payload.get("tool_choice") or {}).get("type", "auto"))
    model = str(payload.get("model", ""))
    published, unpublished = anthropic_tool_prompt(model, choice)
    why = f"published, tool_choice {choice}"
    if published is None:
        published = anthropic_tool_prompt("claude-opus-4", choice)[0] or 0
        why = f"not published for this model; Claude 4.x size, tool_choice {choice}"
        notes.append(
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


def _anthropic_result(
    block: dict[str, Any], path: str, by_name: dict[Any, Any], out: _Collector, notes: list[str]
) -> None:
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
            _expand(
                part.get("tool_name"),
                f"{path}.content.{c}",
                f"{path}.content",
                by_name,
                out,
                notes,
                new_block=False,
            )
        else:
            out.add(
                "tool_result",
                _block_text(part),
                f"{path}.content.{c}",
                label=label,
                role="user",
                new_block=first,
            )
        first = False


def _expand(
    name: Any,
    source: str,
    load_point: str,
    by_name: dict[Any, Any],
    out: _Collector,
    notes: list[str],
    new_block: bool = False,
) -> None:
    tool = by_name.get(name)
    if tool is None:
        notes.append(f"tool_reference at {source} names {name!r}, which is not in tools")
        return
    text = _dump(_strip(tool, "cache_control", "defer_loading"))
    out.add(
        "loaded_schema", text, source, label=str(name), load_point=load_point, new_block=new_block
    )


# -- OpenAI Responses --------------------------------------------------------------------------
def _function_text(tool: dict[str, Any]) -> str:
    return _dump(_strip(tool, "defer_loading", "strict"))


def _responses_tool(tool: dict[str, Any], source: str, out: _Collector) -> None:
    kind = tool.get("type")
    if kind == "namespace":
        summary = {"namespace": tool.get("name"), "description": tool.get("description")}
        out.add("tool_summary", _dump(summary), source, label=str(tool.get("name")))
        for i, member in enumerate(tool.get("tools") or []):
            if not member.get("defer_loading"):
                out.add(
                    "tool_schema",
                    _function_text(member),
                    f"{source}.tools.{i}",
                    label=f"{tool.get('name')}.{member.get('name')}",
                )
    elif kind == "function" and tool.get("defer_loading"):
        summary = {"name": tool.get("name"), "description": tool.get("description")}
        out.add("tool_summary", _dump(summary), source, label=str(tool.get("name")))
    else:
        out.add("tool_schema", _function_text(tool), source, label=str(tool.get("name", kind)))


def _openai_hidden(tools: list[Any], history: str, out: _Collector, notes: list[str]) -> None:
    """OpenAI's documented framing, and the hosted tool-search prompt (size unknown)."""
    data = calibration()["openai"]
    out.hidden("reply priming", int(data["reply_priming"]), history, "OpenAI cookbook")
    if tools:
        out.hidden(
            "end of function definitions", int(data["functions_end"]), "tools", "OpenAI cookbook"
        )
    for i, tool in enumerate(tools):
        if (
            isinstance(tool, dict)
            and tool.get("type") == "tool_search"
            and tool.get("execution") != "client"
        ):
            out.hidden("hosted tool-search prompt", 0, f"tools.{i}", "size not published")
            notes.append(
                "OpenAI's hosted tool search adds a prompt of unpublished size; counted as 0"
            )


def _loaded_tools(item: dict[str, Any], path: str, out: _Collector) -> None:
    """Definitions an `additional_tools` / `tool_search_output` item loads; namespaces by member."""
    for t, tool in enumerate(item.get("tools") or []):
        source = f"{path}.tools.{t}"
        members = tool.get("tools") if tool.get("type") == "namespace" else None
        if not isinstance(members, list):
            out.add(
                "loaded_schema",
                _function_text(tool),
                source,
                label=str(tool.get("name")),
                load_point=path,
                new_block=False,
            )
            continue
        summary = {"namespace": tool.get("name"), "description": tool.get("description")}
        out.add(
            "loaded_schema",
            _dump(summary),
            source,
            label=str(tool.get("name")),
            load_point=path,
            new_block=False,
        )
        for m, member in enumerate(members):
            out.add(
                "loaded_schema",
                _function_text(member),
                f"{source}.tools.{m}",
                label=f"{tool.get('name')}.{member.get('name')}",
                load_point=path,
                new_block=False,
            )


def _responses(payload: dict[str, Any], out: _Collector) -> list[str]:
    notes = ["OpenAI adds hidden system content ahead of the tools; it is not counted here"]
    _openai_hidden(payload.get("tools") or [], "input", out, notes)
    for i, tool in enumerate(payload.get("tools") or []):
        _responses_tool(tool, f"tools.{i}", out)
    if payload.get("instructions"):
        out.add("system", str(payload["instructions"]), "instructions", label="instructions")
    items = payload.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    seen_message = False
    for i, item in enumerate(items or []):
        path = f"input.{i}"
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "additional_tools" or kind == "tool_search_output":
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
            text = output if isinstance(output, str) else _dump(output)
            out.add("tool_result", text, path, label=f"result {item.get('call_id')}", role="tool")
        elif kind == "message" and role in ("developer", "system"):
            text = _content_text(item.get("content"))
            out.add("system_patch" if seen_message else "system", text, path, label=role, role=role)
        elif kind == "message":
            seen_message = True
            out.add("message", _content_text(item.get("content")), path, label=str(role), role=role)
        else:
            out.add("message", _dump(item), path, label=kind, role="assistant")
    return notes


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        _block_text({**p, "type": "text"} if p.get("type") in ("input_text", "output_text") else p)
        for p in content or []
    )


# -- Chat Completions and Kimi -----------------------------------------------------------------
def _chat(payload: dict[str, Any], out: _Collector, provider: str) -> list[str]:
    notes: list[str] = []
    if provider == "openai-chat":
        _openai_hidden(payload.get("tools") or [], "messages", out, notes)
    for i, tool in enumerate(payload.get("tools") or []):
        out.add(
            "tool_schema",
            _dump(tool.get("function", tool)),
            f"tools.{i}",
            label=str((tool.get("function") or {}).get("name", "")),
        )
    first_turn = True
    for m, message in enumerate(payload.get("messages") or []):
        role = message.get("role")
        path = f"messages.{m}"
        if role in ("system", "developer") and "tools" in message:
            out.add("system_patch", "", path, label="tools", role=role)
            for t, tool in enumerate(message["tools"]):
                function = tool.get("function", tool)
                out.add(
                    "loaded_schema",
                    _dump(function),
                    f"{path}.tools.{t}",
                    label=str(function.get("name")),
                    load_point=f"{path}.tools",
                    new_block=False,
                )
        elif role in ("system", "developer"):
            kind = "system" if first_turn else "system_patch"
            out.add(kind, _content_text(message.get("content")), path, label=role, role=role)
        elif role == "tool":
            out.add(
                "tool_result",
                _content_text(message.get("content")),
                path,
                label=f"result {message.get('tool_call_id')}",
                role=role,
            )
        else:
            first_turn = False
            text = _content_text(message.get("content"))
            calls = message.get("tool_calls")
            if calls:
                text += _dump(calls)
            out.add("message", text, path, label=str(role), role=role)
    return notes


def model_context(
    request: WireRequest | dict[str, Any], provider: str | None = None, model: str | None = None
) -> ModelContext:
    """The ordered segments the provider assembles for the model from one request."""
    check_context_arguments(request, provider, model)
    if isinstance(request, WireRequest):
        payload, provider, model = request.payload, request.provider, request.model
    else:
        payload = request
        if provider is None:
            raise ValueError("model_context(payload) needs provider=...")
        model = model or str(payload.get("model", ""))
    if provider == "anthropic":
        out = _Collector(provider, model, int(calibration()["anthropic"]["per_block"]))
        notes = _anthropic(payload, out)
    elif provider == "openai-responses":
        out = _Collector(provider, model, int(calibration()["openai"]["per_message"]))
        notes = _responses(payload, out)
    elif provider in ("openai-chat", "kimi"):
        framing = int(calibration()["openai"]["per_message"]) if provider == "openai-chat" else 0
        out = _Collector(provider, model, framing)
        notes = _chat(payload, out, provider)
    else:
        raise ValueError(f"unknown provider {provider!r}")
    counter = out.counter
    estimate = estimate_for(provider, counter.method)
    return ModelContext(
        provider, model, out.segments, counter.method, counter.exact, notes, estimate
    )
