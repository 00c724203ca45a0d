"""pydantic-ai's own tool search on the cache workload, through its real provider models.

The same 40-turn conversation and catalogs as the dtl strategies run through pydantic-ai's
`AnthropicModel` (native BM25 tool search on claude-sonnet-4-6) and `OpenAIResponsesModel`
(server-executed `tool_search` on gpt-5.4). Each tool is registered as a pydantic-ai tool with the
same name, description and JSON schema; every tool outside the core set is deferred
(`toolset.defer_loading`) and found with pydantic-ai's `ToolSearch` capability.

The provider SDK clients get an `httpx2.AsyncClient` (pydantic-ai's models are async) whose
transport keeps each request body and answers with the dtl Emulator's response under the same
scripted policy as the dtl strategies, checked against the SDK's response model first.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx2
import openai
from cache_workload import GPT, SONNET, SYSTEM, Outcome, Strategy, row, script_steps
from pydantic_ai import Agent, Tool
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.toolsets import FunctionToolset
from workload_script import CATALOGS, Turn, conversation

import dtl_notebook
from dtl_notebook.cache import analyze
from dtl_notebook.demo import core_tool_names
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.emulator.policies import ScriptedPolicy

JSON = dict[str, Any]
# (label, provider, model, pydantic-ai's `cache` opt-in). Anthropic caches only at breakpoints
# and pydantic-ai sends none unless asked; `cache=True` (top-level automatic caching, as the dtl
# strategies send) is its documented opt-in. The out-of-the-box run is kept as a row of its own.
# OpenAI caches prefixes automatically, so the default settings are the fair run there.
PEERS = (
    ("pydantic-ai tool search (anthropic)", "anthropic", SONNET, True),
    ("pydantic-ai tool search (anthropic, default settings)", "anthropic", SONNET, False),
    ("pydantic-ai tool search (openai-responses)", "openai-responses", GPT, False),
)
REFUSAL = "I cannot call"
_RESPONSE_MODELS: dict[str, Any] = {
    "anthropic": anthropic.types.beta.BetaMessage,  # pydantic-ai uses the beta Messages API
    "openai-responses": openai.types.responses.Response,
}


class RecordingResponder:
    """An httpx2 handler: keeps each request body, answers with the emulator's response.

    OpenAI's hosted search reports what it loaded as `arguments: {"paths": [...]}` (the
    documented wire shape, which pydantic-ai requires); the emulator reports its query instead,
    so the call's arguments are rewritten to the paths of the tools its output carries.
    """

    def __init__(self, provider: str, policy: ScriptedPolicy) -> None:
        self.provider = provider
        self.emulator = Emulator(provider, policy)
        self.bodies: list[JSON] = []
        self.refused = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        answer = self.emulator.respond(body)
        _RESPONSE_MODELS[self.provider].model_validate(answer)
        self.refused += REFUSAL in json.dumps(answer.get("content") or answer.get("output"))
        return httpx2.Response(200, json=answer)


def _implementation(tool: dtl_notebook.Tool) -> Callable[..., Any]:
    """The tool's own code; an exception reaches the model as a failed result, as in dtl."""
    execute = tool.execute

    def run(**arguments: Any) -> Any:
        if execute is None:
            return "ok"
        try:
            return execute(**arguments)
        except Exception as exc:
            raise ToolFailed(f"Error in tool {tool.name!r}: {type(exc).__name__}: {exc}") from exc

    return run


def deferred_toolset(tools: list[dtl_notebook.Tool]) -> FunctionToolset[None]:
    """Every tool as a pydantic-ai tool (same name, description, schema), in catalog order;
    all but the core tools deferred. Namespaces have no pydantic-ai counterpart: tools go flat."""
    core = set(core_tool_names())
    toolset: FunctionToolset[None] = FunctionToolset(
        [Tool.from_schema(_implementation(t), t.name, t.description, t.parameters) for t in tools]
    )
    deferred = [t.name for t in tools if t.name not in core]
    return toolset.defer_loading(deferred)  # type: ignore[return-value]


def _model(
    provider: str, model: str, http: httpx2.AsyncClient, cache: bool
) -> tuple[Model, ModelSettings]:
    settings = ModelSettings(cache=True) if cache else ModelSettings()
    if provider == "anthropic":
        # a large max_tokens makes pydantic-ai stream; 1024 keeps plain JSON responses
        settings["max_tokens"] = 1024
        client = AnthropicProvider(api_key="emulator-no-key", http_client=http)
        return AnthropicModel(model, provider=client), settings
    client_ = OpenAIProvider(api_key="emulator-no-key", http_client=http)
    return OpenAIResponsesModel(model, provider=client_), settings


def run_peer(
    tools: list[dtl_notebook.Tool],
    label: str,
    provider: str,
    model: str,
    cache: bool,
    turns_played: int | None = None,
) -> Outcome:
    """Play the conversation (its first `turns_played` turns, or all) through pydantic-ai on
    one provider; keep every request body."""
    turns = conversation(tools)[:turns_played]
    steps = script_steps(turns, Strategy(label, provider, model))  # as dtl's server search
    responder = RecordingResponder(provider, ScriptedPolicy(steps))
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(responder))
    pydantic_model, settings = _model(provider, model, http, cache)
    agent = Agent(
        pydantic_model,
        instructions=SYSTEM,
        toolsets=[deferred_toolset(tools)],
        capabilities=[ToolSearch()],
        model_settings=settings,
    )
    # pydantic-ai's models are async: play in a thread with a loop of its own, whatever loop
    # the caller may be running (a notebook, Playwright's sync API in a test session)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, _play(agent, turns)).result()
    report = analyze(responder.bodies, provider=provider, model=model)
    return Outcome(label, provider, responder.bodies, report.entries, responder.refused)


async def _play(agent: Agent[None, str], turns: list[Turn]) -> None:
    history: list[ModelMessage] = []
    for turn in turns:
        history = (await agent.run(turn.text, message_history=history)).all_messages()


def peer_table(title: str) -> list[dict[str, Any]]:
    """The workload rows of every pydantic-ai run on one of the workload's catalogs (by title;
    built here, so a worker process can run it)."""
    tools = CATALOGS[title]()
    return [row(run_peer(tools, *peer)) for peer in PEERS]
