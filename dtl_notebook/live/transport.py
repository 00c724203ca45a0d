"""Sending a request: the official SDK clients, pointed at the provider or at the emulator."""

from __future__ import annotations

import os
from typing import Any, Protocol

import anthropic
import httpx2
import openai

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.secrets import redact as redact  # re-exported for callers here
from dtl_notebook.live.emulator import Emulator
from dtl_notebook.live.policies import Policy
from dtl_notebook.wire.common import WireRequest

JSON = dict[str, Any]
KEY_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
    "kimi": "MOONSHOT_API_KEY",
}
KIMI_BASE_URL = "https://api.moonshot.ai/v1"


class ProviderError(DtlError, RuntimeError):
    """The provider (or emulator) refused a request or could not be reached."""

    def __init__(self, provider: str, message: str, status: int | None = None) -> None:
        self.provider, self.status = provider, status
        where = f" (HTTP {status})" if status else ""
        # a server may echo the key it was sent: mask it before it reaches any text
        super().__init__(redact(f"{provider} request failed{where}: {message}"))


class MissingKeyError(DtlError, RuntimeError):
    """No API key for a live transport."""


class Transport(Protocol):
    """Sends one request body and returns the response body as JSON."""

    name: str

    def send(self, request: WireRequest) -> JSON: ...


class SDKTransport:
    """The official client for a provider: `messages.create`, `responses.create` or
    `chat.completions.create`, with the request body passed as it is."""

    def __init__(self, provider: str, client: Any, name: str) -> None:
        self.provider, self.client, self.name = provider, client, name

    def send(self, request: WireRequest) -> JSON:
        body = dict(request.payload)
        try:
            if self.provider == "anthropic":
                response = self.client.messages.create(**body)
            elif self.provider == "openai-responses":
                response = self.client.responses.create(**body)
            else:
                response = self.client.chat.completions.create(**body)
        except (anthropic.APIStatusError, openai.APIStatusError) as exc:
            raise ProviderError(self.provider, _error_message(exc), exc.status_code) from exc
        except (anthropic.APIConnectionError, openai.APIConnectionError) as exc:
            raise ProviderError(self.provider, f"connection failed: {exc}") from exc
        data = response.model_dump(mode="json", exclude_none=True, warnings=False)
        assert isinstance(data, dict)
        return data


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
    if provider == "anthropic":
        return anthropic.Anthropic(**kwargs)
    return openai.OpenAI(**kwargs)


def emulator_transport(
    provider: str, policy: Policy | None = None, **cache_overrides: Any
) -> SDKTransport:
    """The real SDK client of the provider, served by an in-process Emulator."""
    emulator = Emulator(provider, policy, **cache_overrides)
    http = httpx2.Client(transport=emulator.transport)
    client = _client(
        provider,
        "emulator-no-key",
        "http://emulator.invalid/v1" if provider != "anthropic" else "http://emulator.invalid",
        http,
    )
    transport = SDKTransport(provider, client, "emulator")
    transport.emulator = emulator  # type: ignore[attr-defined]
    return transport


def live_transport(
    provider: str, api_key: str | None = None, base_url: str | None = None
) -> SDKTransport:
    """The real SDK client talking to the provider (or an OpenAI-compatible base_url)."""
    variable = KEY_VARIABLES[provider]
    key = api_key or os.environ.get(variable)
    if not key and base_url:
        key = "not-needed"  # local OpenAI-compatible servers (vLLM, SGLang) take any key
    if not key:
        raise MissingKeyError(
            f"no API key for {provider}: set the {variable} environment variable "
            "(or pass api_key=...)"
        )
    if provider == "kimi" and not base_url:
        base_url = KIMI_BASE_URL
    return SDKTransport(provider, _client(provider, key, base_url, None), "live")
