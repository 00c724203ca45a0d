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

import contextlib
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pydantic_core

from dtl_notebook.agent.search import make_engine
from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.cache.diagnostics import provider_reason
from dtl_notebook.cache.entries import CacheEntry
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.context.model import model_context
from dtl_notebook.context.response_chain import ResponseChain
from dtl_notebook.context.tokens import TokenCounter
from dtl_notebook.live.emulator.policies import Action, KeywordPolicy, Policy
from dtl_notebook.live.emulator.replies import anthropic_reply, chat_reply, responses_reply
from dtl_notebook.live.emulator.request_view import View, build_view
from dtl_notebook.live.emulator.threads import ThreadGone, ThreadKeeper
from dtl_notebook.live.request_log import RequestLog
from dtl_notebook.wire.lenient import validate_lenient
from dtl_notebook.wire.providers import (
    ANTHROPIC,
    KIMI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    Part,
    by_endpoint,
    spec,
)
from dtl_notebook.wire.validate import WireValidationError

JSON = dict[str, Any]
# each provider's part in this layer: its reply body (and what it adds to it) for a request
REPLIES: Part[Callable[[Emulator, JSON, View, CacheEntry], JSON]] = Part("reply", __name__)
# the emulated model's output, whatever the provider, is counted with o200k_base as it is
_OUTPUT_TOKENS = TokenCounter("o200k_base", True, "o200k_base (tiktoken, offline)")
PATHS = {endpoint: row.name for endpoint, row in by_endpoint().items()}  # what it serves


class Emulator:
    """One emulated provider endpoint; `transport` plugs into an SDK client's httpx2.Client."""

    def __init__(
        self,
        provider: str,
        policy: Policy | None = None,
        clock: Callable[[], float] | None = None,
        store: PrefixStore | None = None,
        **cache_overrides: Any,
    ) -> None:
        self.provider = provider
        # the cache's entries expire by `clock`; without one, each request is a second later.
        # The cache is the scope's, as the provider's is: every conversation sent here (and
        # to any emulator given the same `store`) reads what another wrote
        self.clock = clock
        self.policy: Policy = policy or KeywordPolicy()
        self.cache = CacheAnalyzer(provider, store=store, **cache_overrides)
        self.requests = RequestLog()  # the accepted bodies, in order
        self.answered: list[str] = []  # response ids, in order, for diagnostics comparisons
        self._ids = 0
        self._search_index: tuple[tuple[str, str], Any] | None = None
        self.threads = ThreadKeeper()  # Anthropic message threads
        self.history = ResponseChain()  # what `previous_response_id` continues, whatever `store`
        self.transport = httpx2.MockTransport(self.handle)

    def next_id(self, prefix: str) -> str:
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
        try:  # as the API takes it, which is laxer than the SDK types in places
            validate_lenient(payload, self.provider)
            self.expand(payload)  # a continuation of an unknown response is refused
        except WireValidationError as exc:  # the field and the value named, as the API does
            return self._error(400, exc.reason, exc.path)
        self.requests.append(request.content)
        try:
            answer = self.respond(payload)
        except ThreadGone as gone:
            return httpx2.Response(gone.status, json=gone.body(self.next_id("req_")))
        # written by pydantic-core: a Responses reply echoes every tool of the request
        body = pydantic_core.to_json(answer)
        return httpx2.Response(200, content=body, headers={"Content-Type": "application/json"})

    def expand(self, payload: JSON) -> JSON:
        """The whole request a `previous_response_id` continuation stands for; one naming a
        response this endpoint does not hold is refused as the API refuses it."""
        read = self.history.read(payload)
        if read.missing:
            raise WireValidationError(
                self.provider,
                "previous_response_id",
                f"Previous response with id {read.previous!r} not found.",
            )
        return read.payload

    def prepare(self, content: bytes) -> None:
        """Check a body as `handle` does, without answering, logging or caching it."""
        payload = json.loads(content)
        with contextlib.suppress(WireValidationError):
            validate_lenient(payload, self.provider)
            model_context(payload, provider=self.provider)

    def respond(self, payload: JSON) -> JSON:
        """The response body for a valid request (a thread continuation or a Responses body
        naming a previous response: of the whole conversation, rebuilt; ThreadGone where the
        thread is not held)."""
        at = self.clock() if self.clock is not None else None
        read = self.threads.open(payload, float(self.cache.count) if at is None else at)
        payload = self.expand(read.payload)  # only a Responses body names a previous one
        ctx = model_context(payload, provider=self.provider)
        entry = self.cache.add(payload, at=at)
        view = build_view(payload, self.provider, ctx)
        body = REPLIES[self.provider](self, payload, view, entry)
        self.answered.append(str(body["id"]))
        self.threads.keep(read, body, read.at)
        self.history.keep(payload, body)
        return body

    def _anthropic_answer(self, payload: JSON, view: View, entry: CacheEntry) -> JSON:
        body = anthropic_reply(self, payload, view, entry)
        asked = payload.get("diagnostics")
        if isinstance(asked, dict):
            body["diagnostics"] = self._anthropic_diagnostics(asked, entry)
        return body

    def _responses_answer(self, payload: JSON, view: View, entry: CacheEntry) -> JSON:
        body = responses_reply(self, payload, view, entry)
        options = payload.get("prompt_cache_options")
        if isinstance(options, dict) and "comparison_response_id" in options:
            body["prompt_cache_options"] = {
                "mode": options.get("mode", "implicit"),
                "ttl": options.get("ttl", "30m"),
                "comparison_response_id": options["comparison_response_id"],
            }
            body["prompt_cache_diagnostics"] = self._responses_diagnostics(options, entry)
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
        reason = provider_reason(self.provider, cause)
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
        reason = provider_reason(self.provider, cause)
        if reason is None or entry.cache_break is None:
            return {"type": "cache_hit"}
        missed = entry.cache_break.lost_tokens
        return {"type": "cache_miss", "reason": reason, "cache_missed_tokens": missed}

    def _error(self, status: int, message: str, param: str | None) -> httpx2.Response:
        text = f"{param}: {message}" if param else message  # the field named in the words
        if spec(self.provider).family == "anthropic":  # the JSON path leads its message
            body: JSON = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": text},
            }
        else:
            body = {
                "error": {
                    "message": text,  # OpenAI names the parameter in the message and in param
                    "type": "invalid_request_error",
                    "param": param,
                    "code": None,
                }
            }
        return httpx2.Response(status, json=body)

    # -- server-side tool search ------------------------------------------------------------
    def server_search(self, candidates: list[JSON], query: str, regex: bool) -> list[str]:
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

    def decide(self, view: View) -> Action:
        return self.policy.decide(view)

    def output_tokens(self, items: list[JSON]) -> int:
        return _OUTPUT_TOKENS.count(json.dumps(items))


REPLIES.register(ANTHROPIC, Emulator._anthropic_answer)
REPLIES.register(OPENAI_RESPONSES, Emulator._responses_answer)
REPLIES.register(OPENAI_CHAT, chat_reply)
REPLIES.register(KIMI, chat_reply)
