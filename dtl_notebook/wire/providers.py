"""The provider table: one `ProviderSpec` row per provider, and the registry of its parts.

A row's plain data (endpoint, upstream family, API-key variable, SDK roots, stream format,
native searches, load modes, default model, and how the provider caches, reports usage and is
called) is in `data/providers.json`, whose `_doc` describes every column. The code parts live
in the layers that own them: each layer declares a `Part` (the adapters' `build` and `parse`
here in wire, the renderer in context, the cache rule in cache, the emulated reply in live)
and registers one entry per provider into it. Every dispatch reads the row or the part, never
a provider's name, so a provider is its adapter, its renderer, one row and its tests.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Literal, TypeVar, cast, get_args
from urllib.parse import urlsplit

from dtl_notebook.agent.checks import shown
from dtl_notebook.agent.errors import InvalidArgumentError

__all__ = [
    "ANTHROPIC",
    "KIMI",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "PROVIDERS",
    "SPECS",
    "Part",
    "Provider",
    "ProviderSpec",
    "UnknownProviderError",
    "all_parts",
    "by_endpoint",
    "check_provider",
    "marked_provider",
    "provider_at",
    "spec",
]

# the one union of provider names (a row of data/providers.json each)
Provider = Literal["anthropic", "openai-responses", "openai-chat", "kimi"]
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
# each name once more as a constant, for the modules that register a part per provider
ANTHROPIC: Provider = "anthropic"
OPENAI_RESPONSES: Provider = "openai-responses"
OPENAI_CHAT: Provider = "openai-chat"
KIMI: Provider = "kimi"


@dataclass(frozen=True)
class ProviderSpec:
    """One provider: where its requests go, how its bodies and replies are typed, what it
    takes. `family` is the upstream it is served by (its SDK and error shape)."""

    name: Provider
    family: str
    base_url: str  # the SDK client's default base URL
    endpoint: str  # the generation path on the origin
    extra_paths: tuple[str, ...]  # other paths of the same upstream a proxy forwards
    hosts: tuple[str, ...]  # words in a URL's host that name this provider on a shared endpoint
    key_variable: str  # the environment variable holding its API key
    client: tuple[str, str]  # the SDK client class (module, name)
    request_roots: tuple[str, ...]  # wire/schema.py ROOTS its bodies are checked against
    response_root: tuple[str, str]  # the SDK response model (module, name)
    stream_format: str  # how its server-sent events make one response
    history_key: str  # the body field that holds the conversation
    native_searches: tuple[str, ...]
    load_modes: tuple[str, ...]
    default_model: str
    shape: str  # "messages", "responses" or "chat": the API its bodies are written in
    fit: str | None  # "claude" or "openai": its fitted context estimate, None: none
    cache_marks: str  # "breakpoints" (cache_control blocks) or "automatic"
    settings_cached_after: str | None  # the part the cached-on settings sit in front of
    diagnosis: str | None  # the provider's own cache-miss diagnosis, by style
    diagnosis_reasons: dict[str, str] | None  # request part -> its reason word
    usage_split: tuple[str, str, str] | None  # (cached, written, uncached) usage fields
    usage_details: tuple[str, str] | None  # (the object holding cached_tokens, input total)
    key_header: str  # "x-api-key" or "bearer"
    smallest_answer: tuple[str, int]  # the output-length field and its least value
    older_answer_field: str | None  # a deprecated name of that field it still takes
    retention: str  # the entry of cache/data/retention.json
    harmony: str | None  # "responses" or "chat": how the harmony renderer walks it
    harmony_note: str | None
    native_growth_effect: str | None
    body_signs: tuple[dict[str, Any], ...]  # what a body written for it shows (body_signs.py)

    @property
    def marks_breakpoints(self) -> bool:
        """Whether its requests mark the cached prefix with cache_control blocks."""
        return self.cache_marks == "breakpoints"

    @property
    def route(self) -> str:
        """The endpoint below the API version (`/messages`): what a URL's path ends with,
        whatever base URL (a proxy, an OpenAI-compatible server) is in front."""
        return self.endpoint.removeprefix("/v1")

    @property
    def serves_socket(self) -> bool:
        """Whether its endpoint has a WebSocket transport too: OpenAI Responses (`GET` upgraded,
        a `response.create` message per request answered by the stream's events, as Codex
        uses it; https://developers.openai.com/api/reference/resources/responses/websocket-events)."""
        return self.stream_format == "response-events"

    @property
    def takes_betas(self) -> bool:
        """Whether its bodies may use beta request types (named in an `anthropic-beta`
        header, checked against the beta root)."""
        return any(root.endswith("-beta") for root in self.request_roots)

    @property
    def carries_tools(self) -> bool:
        """Whether its bodies declare tools inside messages too (Kimi's `{"role": "system",
        "tools": [...]}` carriers, checked against the Chat tool type)."""
        return "chat-tool" in self.request_roots

    @property
    def own_host(self) -> bool:
        """Whether it is served at its own host through its family's SDK (named by `hosts` on
        a shared endpoint): its client must be given `base_url`, the SDK's default is another's."""
        return bool(self.hosts)

    @property
    def sdk_path(self) -> str:
        """The endpoint relative to the SDK's base URL, as its client's `post` takes it."""
        return self.endpoint.removeprefix(urlsplit(self.base_url).path.rstrip("/"))

    @property
    def endpoint_url(self) -> str:
        """The full URL of the provider's generation endpoint."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}{self.endpoint}"

    def response_type(self) -> Any:
        """The SDK response model class (imported on first use)."""
        return _imported(self.response_root)

    def client_type(self) -> Any:
        """The SDK client class (imported on first use)."""
        return _imported(self.client)


def _imported(where: tuple[str, str]) -> Any:
    return getattr(importlib.import_module(where[0]), where[1])


def _load() -> dict[str, ProviderSpec]:
    rows = json.loads(files(__package__).joinpath("data/providers.json").read_text("utf-8"))
    return {name: _row(name, row) for name, row in rows.items() if not name.startswith("_")}


def _row(name: str, row: dict[str, Any]) -> ProviderSpec:
    fields: dict[str, Any] = {
        key: tuple(value) if isinstance(value, list) else value for key, value in row.items()
    }
    return ProviderSpec(name=cast(Provider, name), **fields)


SPECS: Mapping[str, ProviderSpec] = _load()


class UnknownProviderError(InvalidArgumentError):
    """A provider name that is not in the table; names the value and the known ones."""


def check_provider(provider: object, param: str = "provider") -> Provider:
    """`provider` when it is a known name, else the one error for an unknown provider."""
    if isinstance(provider, str) and provider in SPECS:
        return SPECS[provider].name
    near = _near(provider) if isinstance(provider, str) else []
    hint = f"; did you mean {' or '.join(map(repr, near))}?" if near else ""
    raise UnknownProviderError(
        f"unknown {param} {shown(provider)}; choose one of {', '.join(SPECS)}{hint}"
    )


def _near(name: str) -> list[str]:
    """Known names that start with `name` (`openai`) or are spelt nearly like it."""
    key = name.strip().lower()
    if not key:
        return []
    starting = [known for known in SPECS if known.startswith(key)]
    return starting or difflib.get_close_matches(key, list(SPECS), n=2, cutoff=0.6)


def spec(provider: object) -> ProviderSpec:
    """The row of a provider (UnknownProviderError for a name not in the table)."""
    return SPECS[check_provider(provider)]


def marked_provider() -> ProviderSpec:
    """The first provider whose requests carry cache_control breakpoints (whose `ttl` a mark
    names)."""
    return next(row for row in SPECS.values() if row.marks_breakpoints)


def by_endpoint() -> dict[str, ProviderSpec]:
    """Each generation endpoint's row; where rows share one (a provider named by its host on
    another's endpoint), the first row's."""
    rows: dict[str, ProviderSpec] = {}
    for row in SPECS.values():
        rows.setdefault(row.endpoint, row)
    return rows


def provider_at(url: str) -> Provider | None:
    """The provider whose generation endpoint `url` calls (a host word picks between providers
    of one endpoint, else the first row has it), or None for any other URL."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    found = [row for row in SPECS.values() if path.endswith(row.route)]
    named = [row for row in found if any(word in parts.netloc for word in row.hosts)]
    plain = [row for row in found if not row.hosts]
    chosen = named or plain
    return chosen[0].name if chosen else None


T = TypeVar("T")
_PARTS: dict[str, Part[Any]] = {}


class Part(Mapping[str, T]):
    """One kind of per-provider code (an adapter's `build`, a renderer), declared by the layer
    that owns it and filled by registering one entry per provider; read as a mapping from
    provider to entry, whose lookup names an unknown provider or a missing entry."""

    def __init__(self, name: str, owner: str) -> None:
        if name in _PARTS:
            raise ValueError(f"a provider part named {name!r} is declared already")
        self.name, self.owner = name, owner  # owner: the module that registers the entries
        self._entries: dict[str, T] = {}
        _PARTS[name] = self

    def register(self, provider: str, entry: T) -> None:
        """Make `entry` this part of `provider` (a row of the table)."""
        self._entries[spec(provider).name] = entry

    def __getitem__(self, provider: object) -> T:
        """The entry of `provider`: UnknownProviderError for a name not in the table, and a
        LookupError naming the module to fill in for a row that has none yet."""
        name = spec(provider).name
        try:
            return self._entries[name]
        except KeyError:
            raise LookupError(
                f"provider {name!r} has no {self.name} part: register one in {self.owner}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def all_parts() -> Mapping[str, Part[Any]]:
    """Every part declared so far (each layer declares its own when it is imported)."""
    return dict(_PARTS)
