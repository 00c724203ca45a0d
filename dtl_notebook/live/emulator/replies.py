"""The emulator's response bodies, one builder per provider, in the SDK response types' shapes.

Each builder asks the emulated model (through `Endpoint.decide`) for the next action, runs the
server-side tool search the request declares, and reports usage from the emulated cache entry.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from dtl_notebook.agent.bridge import CALL_TOOL
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.live.emulator.policies import LABEL, Action, Answer, Call, Search
from dtl_notebook.live.emulator.request_view import Event, View, VisibleTool
from dtl_notebook.wire.search_tools import CLIENT_SEARCH_TOOLS

JSON = dict[str, Any]
MAX_SERVER_ROUNDS = 3


class Endpoint(Protocol):
    """What a builder needs of the emulated endpoint."""

    def next_id(self, prefix: str) -> str: ...

    def decide(self, view: View) -> Action: ...

    def server_search(self, candidates: list[JSON], query: str, regex: bool) -> list[str]: ...

    def output_tokens(self, items: list[JSON]) -> int: ...


# -- Anthropic Messages -----------------------------------------------------------------
def anthropic_reply(endpoint: Endpoint, payload: JSON, view: View, entry: CacheEntry) -> JSON:
    """An Anthropic Messages response, server-side tool search rounds included."""
    content: list[JSON] = []
    deferred = [t for t in payload.get("tools") or [] if t.get("defer_loading")]
    action = endpoint.decide(view)
    rounds = 0
    server = view.search in ("tool_search_tool_bm25", "tool_search_tool_regex")
    while isinstance(action, Search) and server and rounds < MAX_SERVER_ROUNDS:
        rounds += 1
        name = str(view.search)
        regex = name.endswith("regex")
        use_id = endpoint.next_id("srvtoolu_emu_")
        found = endpoint.server_search(deferred, action.query, regex)
        query = {"pattern": "|".join(action.query.split())} if regex else {"query": action.query}
        content.append({"type": "server_tool_use", "id": use_id, "name": name, "input": query})
        content.append(
            {
                "type": "tool_search_tool_result",
                "tool_use_id": use_id,
                "content": {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": n} for n in found],
                },
            }
        )
        by_name = {t["name"]: t for t in deferred}
        for n in found:
            tool = by_name[n]
            view.tools[n] = VisibleTool(n, tool.get("description", ""), tool["input_schema"])
        view.events.append(Event(name, query, json.dumps(found)))
        action = endpoint.decide(view)
    action = _client_search(action, view)
    if isinstance(action, Call):
        content.append(
            {
                "type": "tool_use",
                "id": endpoint.next_id("toolu_emu_"),
                "name": action.name,
                "input": action.arguments,
            }
        )
        stop = "tool_use"
    else:
        content.append({"type": "text", "text": action.text})
        stop = "end_turn"
    usage = {
        "input_tokens": entry.uncached_tokens,
        "cache_creation_input_tokens": entry.written_tokens,
        "cache_read_input_tokens": entry.cached_tokens,
        "output_tokens": endpoint.output_tokens(content),
    }
    return {
        "id": endpoint.next_id("msg_emu_"),
        "type": "message",
        "role": "assistant",
        "model": payload["model"],
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


# -- OpenAI Responses -------------------------------------------------------------------
def responses_reply(endpoint: Endpoint, payload: JSON, view: View, entry: CacheEntry) -> JSON:
    """An OpenAI Responses response, hosted tool search rounds included."""
    if payload.get("generate") is False:  # a WebSocket prefetch: the prefix is cached only
        return _responses_body(endpoint, payload, [], entry)
    output: list[JSON] = []
    tools = payload.get("tools") or []
    search_tool = next((t for t in tools if t.get("type") == "tool_search"), None)
    hosted = search_tool is not None and search_tool.get("execution", "server") == "server"
    action = endpoint.decide(view)
    rounds = 0
    while isinstance(action, Search) and hosted and rounds < MAX_SERVER_ROUNDS:
        rounds += 1
        candidates = _deferred_functions(tools)
        found = set(endpoint.server_search(candidates, action.query, regex=False))
        loaded = _loaded_entries(tools, found)
        output.append(
            {
                "type": "tool_search_call",
                "id": endpoint.next_id("tsc_emu_"),
                "call_id": None,
                "execution": "server",
                "status": "completed",
                # as OpenAI records it: the paths the search loaded, not the query
                "arguments": {"paths": [entry["name"] for entry in loaded]},
            }
        )
        output.append(
            {
                "type": "tool_search_output",
                "id": endpoint.next_id("tso_emu_"),
                "call_id": None,
                "execution": "server",
                "status": "completed",
                "tools": loaded,
            }
        )
        for tool in candidates:
            if tool["name"] in found:
                view.tools[tool["name"]] = VisibleTool(
                    tool["name"], tool.get("description", ""), tool.get("parameters") or {}
                )
        view.events.append(Event("tool_search", {"query": action.query}, json.dumps(sorted(found))))
        action = endpoint.decide(view)
    final: Answer | Call | None = None
    search_function = any(
        t.get("type") == "function" and t.get("name") == "tool_search" for t in tools
    )
    if (
        isinstance(action, Search)
        and search_tool is not None
        and (search_tool.get("execution") == "client")
        and not search_function  # the loader declaration of load_mode="tool_search"
    ):
        output.append(
            {
                "type": "tool_search_call",
                "id": endpoint.next_id("tsc_emu_"),
                "call_id": endpoint.next_id("call_emu_"),
                "execution": "client",
                "status": "completed",
                "arguments": {"query": action.query},
            }
        )
    else:
        final = _client_search(action, view)
    if isinstance(final, Call):
        item = {
            "type": "function_call",
            "id": endpoint.next_id("fc_emu_"),
            "call_id": endpoint.next_id("call_emu_"),
            "name": final.name,
            "arguments": json.dumps(final.arguments),
            "status": "completed",
        }
        namespace = _namespace_of(tools, final.name)
        if namespace:
            item["namespace"] = namespace
        output.append(item)
    elif isinstance(final, Answer):
        output.append(
            {
                "type": "message",
                "id": endpoint.next_id("msg_emu_"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": final.text, "annotations": []}],
            }
        )
    return _responses_body(endpoint, payload, output, entry)


def _responses_body(
    endpoint: Endpoint, payload: JSON, output: list[JSON], entry: CacheEntry
) -> JSON:
    out_tokens = endpoint.output_tokens(output) if output else 0
    # the SDK's usage type requires cache_write_tokens (0 before GPT-5.6)
    details = {"cached_tokens": entry.cached_tokens, "cache_write_tokens": entry.written_tokens}
    usage = {
        "input_tokens": entry.total_tokens,
        "input_tokens_details": details,
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": entry.total_tokens + out_tokens,
    }
    return {
        "id": endpoint.next_id("resp_emu_"),
        "object": "response",
        "created_at": 0,
        "model": payload["model"],
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": payload.get("tools") or [],
        "usage": usage,
    }


# -- Chat Completions (and Kimi) --------------------------------------------------------
def chat_reply(endpoint: Endpoint, payload: JSON, view: View, entry: CacheEntry) -> JSON:
    """A Chat Completions (or Kimi) response."""
    action = endpoint.decide(view)
    action = _client_search(action, view)
    message: JSON = {"role": "assistant"}
    if isinstance(action, Call):
        name, arguments = action.name, action.arguments
        declared = {(t.get("function") or {}).get("name") for t in payload.get("tools") or []}
        if view.dispatcher and name not in declared:  # the bridge: through the dispatcher
            name, arguments = CALL_TOOL, {"name": action.name, "arguments": action.arguments}
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": endpoint.next_id("call_emu_"),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ]
        finish = "tool_calls"
    else:
        assert isinstance(action, Answer)
        message["content"] = action.text
        finish = "stop"
    out_tokens = endpoint.output_tokens([message])
    usage = {
        "prompt_tokens": entry.total_tokens,
        "completion_tokens": out_tokens,
        "total_tokens": entry.total_tokens + out_tokens,
        "prompt_tokens_details": {"cached_tokens": entry.cached_tokens},
    }
    return {
        "id": endpoint.next_id("chatcmpl-emu"),
        "object": "chat.completion",
        "created": 0,
        "model": payload["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _client_search(action: Action, view: View) -> Answer | Call:
    """A search the server did not run: a call to the visible client search tool, if any."""
    if not isinstance(action, Search):
        return action
    client = next((name for name in CLIENT_SEARCH_TOOLS if name in view.tools), None)
    if client is not None:
        return Call(client, {"query": action.query})
    return Answer(f"({LABEL}) I have no way to search for tools here")


def _deferred_functions(tools: list[JSON]) -> list[JSON]:
    out = []
    for tool in tools:
        if tool.get("type") == "namespace":
            out += [m for m in tool.get("tools") or [] if m.get("defer_loading")]
        elif tool.get("type") == "function" and tool.get("defer_loading"):
            out.append(tool)
    return out


def _loaded_entries(tools: list[JSON], found: set[str]) -> list[JSON]:
    """Hosted search output: the namespaces (with matching members) and functions found."""
    out = []
    for tool in tools:
        if tool.get("type") == "namespace":
            members = [m for m in tool.get("tools") or [] if m.get("name") in found]
            if members:
                out.append({**tool, "tools": members})
        elif tool.get("type") == "function" and tool.get("name") in found:
            out.append(tool)
    return out


def _namespace_of(tools: list[JSON], name: str) -> str | None:
    for tool in tools:
        if tool.get("type") == "namespace" and any(
            m.get("name") == name for m in tool.get("tools") or []
        ):
            return str(tool["name"])
    return None
