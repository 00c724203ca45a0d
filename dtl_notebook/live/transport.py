"""Sending a request: the official SDK clients, pointed at the provider or at the emulator."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any, Literal, Protocol, get_args
from urllib.parse import urlsplit

import anthropic
import httpx2
import openai
import pydantic_core

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.secrets import redact as redact  # re-exported for callers here
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.emulator.policies import Policy
from dtl_notebook.wire.providers import SPECS, spec
from dtl_notebook.wire.reply import ProviderError as ProviderError  # re-exported by live
from dtl_notebook.wire.request import WireRequest

JSON = dict[str, Any]
TransportName = Literal["emulator", "live"]  # the transports an Agent builds by name
TRANSPORTS: tuple[TransportName, ...] = get_args(TransportName)
KEY_VARIABLES: dict[str, str] = {name: row.key_variable for name, row in SPECS.items()}


class MissingKeyError(DtlError, RuntimeError):
    """No API key for a live transport."""


class Transport(Protocol):
    """Sends one request body and returns the response body as JSON."""

    name: str

    def send(self, request: WireRequest) -> JSON: ...


class SDKTransport:
    """The official client for a provider, posting the request body as it is.

    The body has already been validated against the same SDK request types, so its exact text
    (`request.json()`) goes through the client's `post` (auth, headers, retries and error
    mapping included) rather than `messages.create(**body)`, which would walk, re-transform and
    copy every item again: seconds per request for a body carrying thousands of tool
    definitions. The reply comes back as bytes and becomes the SDK response model the way the
    client's own parsing makes it (`construct`), less the Responses echo of the request tools.
    """

    def __init__(self, provider: str, client: Any, name: str) -> None:
        self.provider, self.client, self.name = provider, client, name

    def send(self, request: WireRequest) -> JSON:
        row = spec(self.provider)
        headers = {"Content-Type": "application/json"}
        if request.betas:
            headers["anthropic-beta"] = ",".join(request.betas)
        failure: ProviderError | None = None
        try:
            raw = self.client.post(
                row.sdk_path,
                cast_to=bytes,
                content=request.json().encode(),
                options={"headers": headers},
            )
        except (anthropic.APIStatusError, openai.APIStatusError) as exc:
            failure = ProviderError(
                self.provider,
                _error_message(exc),
                exc.status_code,
                _error_type(exc),
                request_id=getattr(exc, "request_id", None),
                code=getattr(exc, "error_code", None),
            )
        except (anthropic.APIConnectionError, openai.APIConnectionError) as exc:
            failure = ProviderError(self.provider, f"connection failed: {exc}")
        if failure is not None:
            # raised here, not in the `except`: the SDK's exception (its raw error body and
            # request headers may hold the key) is then not even the hidden `__context__`
            raise failure
        try:
            body = pydantic_core.from_json(raw)
        except ValueError as exc:
            raise ProviderError(self.provider, f"response body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ProviderError(self.provider, "response body is not a JSON object")
        # a Responses reply echoes the request's `tools` (thousands of definitions in a hosted
        # search request; no other reply has the field); the echo is in the request already,
        # and turning it into SDK objects and back cost more than the whole rest of a turn
        body.pop("tools", None)
        response = row.response_type().construct(**body)  # what the client's own parsing does
        data = response.model_dump(mode="json", exclude_none=True, warnings=False)
        assert isinstance(data, dict)
        return data


def prepare_response_type(provider: str) -> None:
    """Complete the SDK response model of `provider` now: the SDK defers building its schema
    to the first response it parses (tens of milliseconds for a Responses reply)."""
    spec(provider).response_type().model_rebuild()


def _error_type(exc: Any) -> str | None:
    """The error `type` (or `code`) of an SDK status error's body, both providers' shapes."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    kind = (error.get("type") or error.get("code")) if isinstance(error, dict) else None
    return str(kind) if kind else None


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
    return str(getattr(exc, "message", exc))


def _client(provider: str, api_key: str, base_url: str | None, http: httpx2.Client | None) -> Any:
    kwargs: dict[str, Any] = {"api_key": api_key, "max_retries": 0 if http else 2}
    if base_url:
        kwargs["base_url"] = base_url
    if http is not None:
        kwargs["http_client"] = http
    return spec(provider).client_type()(**kwargs)


def emulator_transport(
    provider: str,
    policy: Policy | None = None,
    clock: Callable[[], float] | None = None,
    store: PrefixStore | None = None,
    **cache_overrides: Any,
) -> SDKTransport:
    """The real SDK client of the provider, served by an in-process Emulator (whose cache
    expires by `clock`, where given, and lives in `store`: emulators given one store share
    their cache, as one organization's requests share the provider's)."""
    emulator = Emulator(provider, policy, clock, store, **cache_overrides)
    http = httpx2.Client(transport=emulator.transport)
    base_path = urlsplit(spec(provider).base_url).path  # the emulator serves the same paths
    client = _client(provider, "emulator-no-key", f"http://emulator.invalid{base_path}", http)
    transport = SDKTransport(provider, client, "emulator")
    transport.emulator = emulator  # type: ignore[attr-defined]
    return transport


# the emulated provider's cache of each prediction store: agents sharing a store share it
_EMULATED: weakref.WeakKeyDictionary[PrefixStore, PrefixStore] = weakref.WeakKeyDictionary()


def emulated_cache(predictions: PrefixStore) -> PrefixStore:
    """The emulated provider's cache for the organization whose predictions `predictions`
    holds: one per store, never that store itself (a prediction must not read the answer)."""
    found = _EMULATED.get(predictions)
    if found is None:
        found = _EMULATED[predictions] = PrefixStore(predictions.max_prefixes)
    return found


def live_transport(
    provider: str, api_key: str | None = None, base_url: str | None = None
) -> SDKTransport:
    """The real SDK client talking to the provider (or an OpenAI-compatible base_url)."""
    row = spec(provider)
    variable = row.key_variable
    key = api_key or os.environ.get(variable)
    if not key and base_url:
        key = "not-needed"  # local OpenAI-compatible servers (vLLM, SGLang) take any key
    if not key:
        raise MissingKeyError(
            f"no API key for {provider}: set the {variable} environment variable "
            "(or pass api_key=...)"
        )
    if row.own_host and not base_url:
        base_url = row.base_url
    return SDKTransport(provider, _client(provider, key, base_url, None), "live")


def checked_transport(transport: Any) -> Transport:
    """`transport` when it is one (a `.name` string and a callable `.send`), else a clear error."""
    if not (
        callable(getattr(transport, "send", None))
        and isinstance(getattr(transport, "name", None), str)
    ):
        raise checks.type_error(
            "transport", "'emulator', 'live' or a Transport (with .name and .send)", transport
        )
    return transport  # type: ignore[no-any-return]
