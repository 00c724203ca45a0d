"""An in-process provider emulator behind the real SDK clients (an httpx2 transport).

Per request it does what the provider's server does, as far as this toolkit models it:
strict validation with the providers' error shapes and texts, the model context (layer 3)
as the only thing the emulated model sees, server-side tool search (Anthropic
`tool_search_tool_*`, OpenAI hosted `tool_search`), a prefix cache under the provider's rules
(layer 4), and usage figures from that cache. Asked for cache diagnostics (Anthropic
`diagnostics.previous_message_id`, OpenAI `prompt_cache_options.comparison_response_id`), it
answers them from that same cache, in the SDK response types' shapes.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pydantic_core

from dtl_notebook.agent.search import make_engine
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.cache.analyze import CacheAnalyzer, CacheEntry
from dtl_notebook.cache.diagnostics import provider_reason
from dtl_notebook.context.model import model_context
from dtl_notebook.context.tokens import count_tokens
from dtl_notebook.live.policies import LABEL, Action, Answer, Call, KeywordPolicy, Policy, Search
from dtl_notebook.live.request_log import RequestLog
from dtl_notebook.live.view import Event, View, VisibleTool, build_view
from dtl_notebook.wire.validate import WireValidationError, validate_payload

JSON = dict[str, Any]
PATHS = {
    "/v1/messages": "anthropic",
    "/v1/responses": "openai-responses",
    "/v1/chat/completions": "openai-chat",
}
MAX_SERVER_ROUNDS = 3


class Emulator:
    """One emulated provider endpoint; `transport` plugs into an SDK client's httpx2.Client."""

    def __init__(self, provider: str, policy: Policy | None = None, **cache_overrides: Any) -> None:
        self.provider = provider
        self.policy: Policy = policy or KeywordPolicy()
        self.cache = CacheAnalyzer(provider, **cache_overrides)
        self.requests = RequestLog()  # the accepted bodies, in order
        self.answered: list[str] = []  # response ids, in order, for diagnostics comparisons
        self._ids = 0
        self._search_index: tuple[tuple[str, str], Any] | None = None
        self.transport = httpx2.MockTransport(self.handle)

    def _id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids:04d}"

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        """The HTTP endpoint: a JSON body in, a provider-shaped JSON body out."""
        if request.url.path not in PATHS:
            return self._error(404, f"no emulated endpoint at {request.url.path}", None)
        try:
            payload = json.loads(request.content)
        except json.JSONDecodeError as exc:
            return self._error(400, f"request body is not JSON: {exc.msg}", None)
        try:
            validate_payload(payload, self.provider)
        except WireValidationError as exc:
            return self._error(400, exc.reason, exc.path)
        self.requests.append(request.content)
        # written by pydantic-core: a Responses reply echoes every tool of the request
        body = pydantic_core.to_json(self.respond(payload))
        return httpx2.Response(200, content=body, headers={"Content-Type": "application/json"})

    def respond(self, payload: JSON) -> JSON:
        """The response body for a valid request."""
        ctx = model_context(payload, provider=self.provider)
        entry = self.cache.add(payload)
        view = build_view(payload, self.provider, ctx)
        if self.provider == "anthropic":
            body = self._anthropic(payload, view, entry)
            asked = payload.get("diagnostics")
            if isinstance(asked, dict):
                body["diagnostics"] = self._anthropic_diagnostics(asked, entry)
        elif self.provider == "openai-responses":
            body = self._responses(payload, view, entry)
            options = payload.get("prompt_cache_options")
            if isinstance(options, dict) and "comparison_response_id" in options:
                body["prompt_cache_options"] = {
                    "mode": options.get("mode", "implicit"),
                    "ttl": options.get("ttl", "30m"),
                    "comparison_response_id": options["comparison_response_id"],
                }
                body["prompt_cache_diagnostics"] = self._responses_diagnostics(options, entry)
        else:
            body = self._chat(payload, view, entry)
        self.answered.append(str(body["id"]))
        return body

    # -- cache diagnostics, from the emulated cache -----------------------------------------
    def _compared(self, previous: Any) -> str:
        """Which earlier response `previous` names: "last", "older" or "unknown"."""
        if self.answered and previous == self.answered[-1]:
            return "last"
        return "older" if previous in self.answered else "unknown"

    def _anthropic_diagnostics(self, asked: JSON, entry: CacheEntry) -> JSON | None:
        previous = asked.get("previous_message_id")
        if previous is None:
            return None  # opted in, nothing to compare yet
        compared = self._compared(previous)
        if compared == "unknown":
            return {"cache_miss_reason": {"type": "previous_message_not_found"}}
        if compared == "older":
            return {"cache_miss_reason": {"type": "unavailable"}}
        cause = entry.cache_break.cause if entry.cache_break else None
        reason = provider_reason("anthropic", cause)
        if reason is None or entry.cache_break is None:
            return None  # no divergence
        missed = entry.cache_break.lost_tokens
        return {"cache_miss_reason": {"type": reason, "cache_missed_input_tokens": missed}}

    def _responses_diagnostics(self, options: JSON, entry: CacheEntry) -> JSON:
        compared = self._compared(options.get("comparison_response_id"))
        if compared == "unknown":
            return {"type": "comparison_response_not_found"}
        if compared == "older":
            return {"type": "unavailable"}
        cause = entry.cache_break.cause if entry.cache_break else None
        reason = provider_reason("openai-responses", cause)
        if reason is None or entry.cache_break is None:
            return {"type": "cache_hit"}
        missed = entry.cache_break.lost_tokens
        return {"type": "cache_miss", "reason": reason, "cache_missed_tokens": missed}

    def _error(self, status: int, message: str, param: str | None) -> httpx2.Response:
        if self.provider == "anthropic":  # the JSON path leads Anthropic's message
            text = f"{param}: {message}" if param else message
            body: JSON = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": text},
            }
        else:
            body = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": param,
                    "code": None,
                }
            }
        return httpx2.Response(status, json=body)

    # -- server-side tool search ------------------------------------------------------------
    def _server_search(self, candidates: list[JSON], query: str, regex: bool) -> list[str]:
        engine = self._index(candidates, "regex" if regex else "bm25")
        pattern = "|".join(query.split()) if regex else query
        found: list[str] = engine.search(pattern, 5)
        return found

    def _index(self, candidates: list[JSON], kind: str) -> Any:
        """The search index over these candidates, rebuilt only when they change: a provider
        indexes its deferred tools once, not on every request."""
        key = (kind, json.dumps(candidates, sort_keys=True))
        if self._search_index is not None and self._search_index[0] == key:
            return self._search_index[1]
        specs = []
        for tool in candidates:
            try:
                specs.append(
                    ToolSpec(
                        name=tool["name"],
                        description=tool.get("description", ""),
                        parameters=tool.get("input_schema")
                        or tool.get("parameters")
                        or {"type": "object"},
                    )
                )
            except Exception:  # a definition the engine cannot index is simply not found
                continue
        engine = make_engine(kind)
        engine.index(specs)
        self._search_index = (key, engine)
        return engine

    def _decide(self, view: View) -> Action:
        return self.policy.decide(view)

    # -- Anthropic Messages -----------------------------------------------------------------
    def _anthropic(self, payload: JSON, view: View, entry: CacheEntry) -> JSON:
        content: list[JSON] = []
        deferred = [t for t in payload.get("tools") or [] if t.get("defer_loading")]
        action = self._decide(view)
        rounds = 0
        server = view.search in ("tool_search_tool_bm25", "tool_search_tool_regex")
        while isinstance(action, Search) and server and rounds < MAX_SERVER_ROUNDS:
            rounds += 1
            name = str(view.search)
            regex = name.endswith("regex")
            use_id = self._id("srvtoolu_emu_")
            found = self._server_search(deferred, action.query, regex)
            query = (
                {"pattern": "|".join(action.query.split())} if regex else {"query": action.query}
            )
            content.append({"type": "server_tool_use", "id": use_id, "name": name, "input": query})
            content.append(
                {
                    "type": "tool_search_tool_result",
                    "tool_use_id": use_id,
                    "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": [
                            {"type": "tool_reference", "tool_name": n} for n in found
                        ],
                    },
                }
            )
            by_name = {t["name"]: t for t in deferred}
            for n in found:
                tool = by_name[n]
                view.tools[n] = VisibleTool(n, tool.get("description", ""), tool["input_schema"])
            view.events.append(Event(name, query, json.dumps(found)))
            action = self._decide(view)
        action = _client_search(action, view)
        if isinstance(action, Call):
            content.append(
                {
                    "type": "tool_use",
                    "id": self._id("toolu_emu_"),
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
            "output_tokens": self._output_tokens(content),
        }
        return {
            "id": self._id("msg_emu_"),
            "type": "message",
            "role": "assistant",
            "model": payload["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    # -- OpenAI Responses -------------------------------------------------------------------
    def _responses(self, payload: JSON, view: View, entry: CacheEntry) -> JSON:
        output: list[JSON] = []
        tools = payload.get("tools") or []
        search_tool = next((t for t in tools if t.get("type") == "tool_search"), None)
        hosted = search_tool is not None and search_tool.get("execution", "server") == "server"
        action = self._decide(view)
        rounds = 0
        while isinstance(action, Search) and hosted and rounds < MAX_SERVER_ROUNDS:
            rounds += 1
            candidates = _deferred_functions(tools)
            found = set(self._server_search(candidates, action.query, regex=False))
            loaded = _loaded_entries(tools, found)
            output.append(
                {
                    "type": "tool_search_call",
                    "id": self._id("tsc_emu_"),
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
                    "id": self._id("tso_emu_"),
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
            view.events.append(
                Event("tool_search", {"query": action.query}, json.dumps(sorted(found)))
            )
            action = self._decide(view)
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
                    "id": self._id("tsc_emu_"),
                    "call_id": self._id("call_emu_"),
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
                "id": self._id("fc_emu_"),
                "call_id": self._id("call_emu_"),
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
                    "id": self._id("msg_emu_"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": final.text, "annotations": []}],
                }
            )
        out_tokens = self._output_tokens(output)
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
            "id": self._id("resp_emu_"),
            "object": "response",
            "created_at": 0,
            "model": payload["model"],
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": tools,
            "usage": usage,
        }

    # -- Chat Completions (and Kimi) --------------------------------------------------------
    def _chat(self, payload: JSON, view: View, entry: CacheEntry) -> JSON:
        action = self._decide(view)
        action = _client_search(action, view)
        message: JSON = {"role": "assistant"}
        if isinstance(action, Call):
            message["content"] = None
            message["tool_calls"] = [
                {
                    "id": self._id("call_emu_"),
                    "type": "function",
                    "function": {"name": action.name, "arguments": json.dumps(action.arguments)},
                }
            ]
            finish = "tool_calls"
        else:
            assert isinstance(action, Answer)
            message["content"] = action.text
            finish = "stop"
        out_tokens = self._output_tokens([message])
        usage = {
            "prompt_tokens": entry.total_tokens,
            "completion_tokens": out_tokens,
            "total_tokens": entry.total_tokens + out_tokens,
            "prompt_tokens_details": {"cached_tokens": entry.cached_tokens},
        }
        return {
            "id": self._id("chatcmpl-emu"),
            "object": "chat.completion",
            "created": 0,
            "model": payload["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }

    def _output_tokens(self, items: list[JSON]) -> int:
        return count_tokens(json.dumps(items), "openai-chat", "gpt-4o")


def _client_search(action: Action, view: View) -> Answer | Call:
    """A search the server did not run: a call to the visible tool_search function, if any."""
    if not isinstance(action, Search):
        return action
    if "tool_search" in view.tools:
        return Call("tool_search", {"query": action.query})
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
