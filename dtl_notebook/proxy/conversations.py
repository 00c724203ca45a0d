"""Grouping exchanges into conversations as they arrive.

A request joins, in this order of evidence:
1. the conversation of the response its `previous_response_id` names (OpenAI Responses);
2. the conversation of its `prompt_cache_key` (OpenAI: the client's own conversation key);
3. the conversation whose latest request it extends: its message list (`messages`, or the
   Responses `input`) starts with all of that request's messages, cache markers aside (they
   move from turn to turn); the longest such prefix wins;
4. else a new conversation.
Candidates are always of the same provider and the same Anthropic `metadata.user_id`
(several agents of one user, such as parallel sub-agents, stay apart unless one extends
another). Memory per conversation is a few hashes, and only the `limit` most recently active
conversations are remembered.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

_MARKERS = frozenset({"cache_control"})


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k not in _MARKERS}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def message_list(body: dict[str, Any]) -> list[Any]:
    """The turns of a request body: `messages`, or the Responses `input` as items."""
    items = body.get("messages", body.get("input"))
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return items if isinstance(items, list) else []


def prefix_hashes(messages: list[Any]) -> list[str]:
    """hashes[i]: the chain hash of messages[:i + 1], cache markers aside."""
    chain, hashes = hashlib.sha256(), []
    for message in messages:
        text = json.dumps(_without_markers(message), sort_keys=True, separators=(",", ":"))
        chain.update(hashlib.sha256(text.encode()).digest())
        hashes.append(chain.copy().hexdigest()[:32])
    return hashes


@dataclass
class _Conversation:
    name: str
    scope: tuple[str, str | None]
    end: str | None = None  # chain hash of the latest request's messages
    responses: list[str] = field(default_factory=list)


class Conversations:
    """`assign(provider, body)` names the conversation of each request in arrival order;
    `answered(name, response_id)` records its response for `previous_response_id` links."""

    def __init__(self, limit: int = 10_000, responses_kept: int = 64) -> None:
        self.limit, self.responses_kept = limit, responses_kept
        self._count = 0
        self._live: OrderedDict[str, _Conversation] = OrderedDict()
        self._by_end: dict[tuple[tuple[str, str | None], str], str] = {}
        self._by_key: dict[tuple[str, str], str] = {}
        self._by_response: dict[str, str] = {}

    def assign(self, provider: str, body: dict[str, Any]) -> str:
        scope = (provider, _user(body))
        hashes = prefix_hashes(message_list(body))
        found = self._by_response.get(str(body.get("previous_response_id")))
        key = body.get("prompt_cache_key")
        if found is None and isinstance(key, str):
            found = self._by_key.get((provider, key))
        if found is None:
            found = next(
                (self._by_end[(scope, h)] for h in reversed(hashes) if (scope, h) in self._by_end),
                None,
            )
        conversation = self._live.get(found) if found else None
        if conversation is None or conversation.scope[0] != provider:
            self._count += 1
            conversation = _Conversation(f"c{self._count}", scope)
        self._remember(conversation, hashes[-1] if hashes else None)
        if isinstance(key, str):
            self._by_key[(provider, key)] = conversation.name
        return conversation.name

    def answered(self, name: str, response_id: str) -> None:
        conversation = self._live.get(name)
        if conversation is None or not response_id or response_id in conversation.responses[-1:]:
            return
        conversation.responses.append(response_id)
        self._by_response[response_id] = name
        if len(conversation.responses) > self.responses_kept:
            self._by_response.pop(conversation.responses.pop(0), None)

    def latest_response(self, name: str | None) -> str | None:
        """The id of the latest answered response of conversation `name`."""
        conversation = self._live.get(name) if name is not None else None
        return conversation.responses[-1] if conversation and conversation.responses else None

    def __len__(self) -> int:
        return len(self._live)

    def _remember(self, conversation: _Conversation, end: str | None) -> None:
        self._drop_end(conversation)
        conversation.end = end
        if end is not None:
            self._by_end[(conversation.scope, end)] = conversation.name
        self._live[conversation.name] = conversation
        self._live.move_to_end(conversation.name)
        while len(self._live) > self.limit:
            self._forget(self._live.popitem(last=False)[1])

    def _drop_end(self, conversation: _Conversation) -> None:
        if conversation.end is None:
            return
        at = (conversation.scope, conversation.end)
        if self._by_end.get(at) == conversation.name:
            del self._by_end[at]

    def _forget(self, conversation: _Conversation) -> None:
        self._drop_end(conversation)
        for response in conversation.responses:
            self._by_response.pop(response, None)
        for key in [k for k, v in self._by_key.items() if v == conversation.name]:
            del self._by_key[key]


def _user(body: dict[str, Any]) -> str | None:
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    return user if isinstance(user, str) else None
