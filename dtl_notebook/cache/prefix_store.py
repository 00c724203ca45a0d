"""The provider's prompt cache at the level it really lives: a scope, not a conversation.

Any request of one scope reads a prefix that any earlier request of that scope wrote within
its lifetime (`retention`): subagents, title requests, re-runs and a second session of one
agent all share it. A scope is, per provider's page:

- Anthropic: the organization and the model (workspace-isolated since 2026; one store is
  one organization: a store never sees a key, so traffic of two organizations needs two
  stores), https://docs.claude.com/en/docs/build-with-claude/prompt-caching;
- OpenAI: the model and the routing of `prompt_cache_key` (requests are routed by a hash of
  the prompt's start and the key), best effort: a prefix may be evicted early, or a request
  routed to a machine that does not hold it, https://platform.openai.com/docs/guides/prompt-caching;
- others: the model.

The store keeps what was written under each scope (chain hash -> lifetime), the continuation
text after each prefix, the ends of earlier requests, and each scope's latest leading part
(tools and system) so a new session that loses it is a finding. Memory is bounded: past
`max_prefixes` entries, expired ones go first, then the oldest written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Lifetime", "LostPrefix", "PrefixStore", "Scope", "SessionHead", "scope_words"]

# the scope label of each provider, written once: what a prediction's `scope` says
SCOPE_WORDS = {
    "anthropic": "organization and model",
    "openai": "model and prompt_cache_key routing, best effort",
}
_FAMILY = {"openai-responses": "openai", "openai-chat": "openai"}


@dataclass
class Lifetime:
    """When a cache entry was last written or read, and how long it lives after that."""

    written_at: float
    ttl: float

    def alive(self, now: float) -> bool:
        return now - self.written_at <= self.ttl


@dataclass(frozen=True)
class SessionHead:
    """The leading part (before the messages) of a scope's latest request: its chain keys,
    running token totals and each segment's source path, and until when it is warm."""

    keys: tuple[str, ...]
    cum: tuple[int, ...]
    sources: tuple[str, ...]
    texts: frozenset[int]  # each segment's text hash: what two heads have in common
    lifetime: Lifetime
    conversation: int  # which analyzer wrote it: a conversation does not lose its own head


@dataclass(frozen=True)
class LostPrefix:
    """A leading prefix another session of the scope left warm that this session's first
    request does not read: how many tokens, where the requests first differ, in which part."""

    tokens: int
    where: str
    part: str


@dataclass
class Scope:
    """What the requests of one scope wrote."""

    written: dict[str, Lifetime] = field(default_factory=dict)  # chain hash -> lifetime
    prefix: dict[str, tuple[int, str]] = field(default_factory=dict)  # chain -> tokens, next
    ends: set[str] = field(default_factory=set)  # chain hashes at the end of earlier requests
    head: SessionHead | None = None

    def put(self, key: str, lifetime: Lifetime) -> None:
        """Write (or refresh) `key`."""
        self.written[key] = lifetime

    def live(self, key: str, now: float) -> tuple[Lifetime | None, bool]:
        """(the entry of `key` alive at `now` or None, whether one was there but expired)."""
        hit = self.written.get(key)
        if hit is None:
            return None, False
        return (hit, False) if hit.alive(now) else (None, True)

    def _drop(self, keys: list[str]) -> None:
        for key in keys:
            del self.written[key]
            self.prefix.pop(key, None)
            self.ends.discard(key)


class PrefixStore:
    """Written prefixes keyed by scope, with expiry, in bounded memory. Pass one store to
    every `CacheAnalyzer` that sends to the same organization (or OpenAI project)."""

    def __init__(self, max_prefixes: int = 100_000) -> None:
        if not isinstance(max_prefixes, int) or max_prefixes < 1:
            raise ValueError(f"max_prefixes must be a positive int, got {max_prefixes!r}")
        self.max_prefixes = max_prefixes
        self.scopes: dict[tuple[str, str, str], Scope] = {}
        self._sequence = 0.0  # the clock of requests fed without a send time
        self._conversations = 0

    def scope(self, provider: str, model: str, routing_key: str = "") -> Scope:
        """The scope of a request to `provider`'s `model` under `routing_key` (OpenAI's
        `prompt_cache_key`; ignored where the provider does not route by it)."""
        family = _FAMILY.get(provider, provider)
        key = (family, model, routing_key if family == "openai" else "")
        found = self.scopes.get(key)
        if found is None:
            found = self.scopes[key] = Scope()
        return found

    def now(self, at: float | None) -> float:
        """The time of the next request: `at` where given, else one second after the
        previous request fed without one (a shared clock for every analyzer of the store)."""
        if at is not None:
            return at
        now, self._sequence = self._sequence, self._sequence + 1.0
        return now

    def new_conversation(self) -> int:
        """A number for one more analyzer reading this store."""
        self._conversations += 1
        return self._conversations

    def size(self) -> int:
        return sum(len(s.written) for s in self.scopes.values())

    def trim(self, now: float) -> None:
        """Keep at most `max_prefixes` entries: expired ones go first, then the oldest, down
        to nine tenths of the bound (so a store at its bound is not swept on every request)."""
        if self.size() <= self.max_prefixes:
            return
        for scope in self.scopes.values():
            scope._drop([k for k, life in scope.written.items() if not life.alive(now)])
        excess = self.size() - self.max_prefixes * 9 // 10
        if excess > 0:  # the least recently written or read go (a run refreshes in place)
            by_age = sorted(
                (life.written_at, n, key)
                for n, scope in enumerate(self.scopes.values())
                for key, life in scope.written.items()
            )
            scopes = list(self.scopes.values())
            for _, n, key in by_age[:excess]:
                scopes[n]._drop([key])
        self.scopes = {k: s for k, s in self.scopes.items() if s.written or s.head}


def scope_words(provider: str) -> str:
    """What one scope of `provider`'s cache is, in words (the label of a prediction)."""
    return SCOPE_WORDS.get(_FAMILY.get(provider, provider), "model")
