"""The layer's two doors: a session serialized as one provider's request, and a provider's
response read back as a neutral Reply (`dtl_notebook.wire` exports both), each dispatched
through the provider table's parts: BUILD and PARSE, one entry per provider."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from dtl_notebook.agent.checks import bad_text
from dtl_notebook.wire import anthropic, bridge, chat, kimi, responses
from dtl_notebook.wire.arguments import check_build_arguments
from dtl_notebook.wire.modes import check_modes, check_provider
from dtl_notebook.wire.planning import plan
from dtl_notebook.wire.profiles import ModelProfile, profile_for
from dtl_notebook.wire.providers import Part
from dtl_notebook.wire.reply import Reply, ResponseFormatError, with_real_names
from dtl_notebook.wire.request import Plan, WireRequest
from dtl_notebook.wire.stream import response_bodies, response_body
from dtl_notebook.wire.validate import validate_payload

if TYPE_CHECKING:
    from dtl_notebook.agent.session import Session

Options = dict[str, Any]  # a request's provider options, as `build_request` takes them
# each provider's adapter: its request builder and its reply parser (registered below)
BUILD: Part[Callable[[Plan, ModelProfile, Session, Options], WireRequest]] = Part("build", __name__)
PARSE: Part[Callable[[Any, str | None], Reply]] = Part("parse", __name__)


def build_request(
    session: Session,
    provider: str,
    model: str,
    *,
    profile: dict[str, Any] | None = None,
    validate: bool = True,
    **options: Any,
) -> WireRequest:
    """Serialize the session for one provider and model.

    `profile` overrides model capability flags (see ModelProfile). Provider options:
    anthropic `max_tokens`, `search`, `cache`, `ttl`; openai-responses `search`, `load_mode`,
    `namespaces`; openai-chat and kimi `system_updates`, and `load_mode="bridge"` (a fixed
    tool_search + call_tool pair: wire/bridge.py; openai-chat also takes "full_list", what it
    does anyway); every provider `tool_changes` ("keep": removals, additions and redefinitions
    keep the longest prefix the model allows; "rewrite": the current list, for a definition the
    model must no longer see). Any other keyword goes into the body.
    The payload is checked against the SDK request types in strict mode and the provider
    rules (WireValidationError) unless `validate=False`.
    """
    check_build_arguments(session, profile, validate, options)
    check_modes(provider, options.get("search"), options.get("load_mode"))
    model_profile, notes = profile_for(provider, model, **(profile or {}))
    the_plan = plan(session)
    the_plan.notes[:0] = notes
    if options.get("load_mode") == "bridge":  # any provider whose row takes the bridge
        del options["load_mode"]
        request = bridge.build(the_plan, model_profile, session, notes, **options)
    else:
        request = BUILD[provider](the_plan, model_profile, session, options)
    if validate:
        validate_payload(request.payload, provider)
    return request


def parse_response(
    response: Any,
    provider: str,
    model: str | None = None,
    aliases: Mapping[str, str] | None = None,
) -> Reply:
    """A provider response as a neutral Reply: an SDK object, a plain dict, the body as JSON
    text/bytes, or a streamed response (server-sent events as text/bytes, or a list of event
    dicts), which is accumulated first. An error body or error event raises ProviderError;
    a body that is not JSON, a stream cut short, or a text of several streams (see
    parse_responses) raises ResponseFormatError naming where. `aliases` (the request's
    `WireRequest.aliases`) maps calls to a versioned tool name back to the real name."""
    check_provider(provider)
    reply = _parse(response_body(response, provider), provider, model)
    return with_real_names(reply, aliases or {})


def parse_responses(response: Any, provider: str, model: str | None = None) -> list[Reply]:
    """One Reply per stream in `response` (a multi-step run logged as one text: each
    `message_start`…`message_stop`, `response.created`…`response.completed`, or Chat
    completion id is its own reply); a whole response gives one."""
    check_provider(provider)
    return [_parse(body, provider, model) for body in response_bodies(response, provider)]


def _parse(response: Any, provider: str, model: str | None) -> Reply:
    found = bad_text(response) if isinstance(response, dict) else None
    if found is not None:  # such text could never be shown, saved or sent on
        raise ResponseFormatError(provider, *found)
    return PARSE[provider](response, model)


def _with_registry(build: Callable[..., WireRequest]) -> Callable[..., WireRequest]:
    """An adapter whose native search reads the whole registry (deferred tools included)."""

    def call(plan: Plan, profile: ModelProfile, session: Session, options: Options) -> WireRequest:
        return build(plan, profile, session.registry, **options)

    return call


def _build_chat(plan: Plan, profile: ModelProfile, _: Session, options: Options) -> WireRequest:
    options.pop("load_mode", None)  # "full_list": what Chat Completions sends anyway
    return chat.build(plan, profile, **options)


def _build_kimi(plan: Plan, profile: ModelProfile, _: Session, options: Options) -> WireRequest:
    return kimi.build(plan, profile, **options)


def _parse_kimi(response: Any, model: str | None) -> Reply:
    return chat.parse(response, model, kimi.PROVIDER)  # Kimi replies in the Chat shape


BUILD.register(anthropic.PROVIDER, _with_registry(anthropic.build))
BUILD.register(responses.PROVIDER, _with_registry(responses.build))
BUILD.register(chat.PROVIDER, _build_chat)
BUILD.register(kimi.PROVIDER, _build_kimi)
PARSE.register(anthropic.PROVIDER, anthropic.parse)
PARSE.register(responses.PROVIDER, responses.parse)
PARSE.register(chat.PROVIDER, chat.parse)
PARSE.register(kimi.PROVIDER, _parse_kimi)
