"""Which conversation a request belongs to: the one rule the proxy, the audit and the views use.

A request joins, in this order of evidence:
1. the conversation of the response its `previous_response_id` names (OpenAI Responses), or of
   the message its `thread.previous_message_id` continues (Anthropic message threads);
2. the conversation of its `prompt_cache_key` (OpenAI: the client's own conversation key, Codex
   sends its session id there);
3. the conversation whose latest request it extends: its message list (`messages`, or the
   Responses `input`) starts with all of that request's messages, read as the provider reads
   them (`normalized`); the longest such prefix wins, then the same model, then the most
   recent (another model's only where messages are added). Other conversations' requests in
   between change nothing;
4. else a new conversation.
Candidates are always of the same provider and the same `metadata.user_id` (Claude Code puts its
session id there, so two sessions never join; parallel agents of one session stay apart unless
one extends another). Each request costs one hash per message and a few dictionary look-ups:
memory per conversation is a few hashes, and only the `limit` most recently active are kept.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

_MARKERS = frozenset({"cache_control"})
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
_Scope = tuple[str, str | None]


def normalized(value: Any) -> Any:
    """`value` as the provider reads it: cache markers are not content, a one-block text list
    is the equal plain string (Claude Code sends its trailing system message as a marked
    one-block list on a session's first request and as a string afterwards), and a Responses
    item typed `message` is the untyped message with the same role and content."""
    if isinstance(value, dict):
        out = {k: normalized(v) for k, v in value.items() if k not in _MARKERS}
        if out.get("type") == "message" and "role" in out:
            del out["type"]
        return out
    if isinstance(value, list):
        items = [normalized(v) for v in value]
        if len(items) == 1 and isinstance(items[0], dict) and _is_text_block(items[0]):
            return items[0]["text"]
        return items
    return value


def _is_text_block(block: dict[str, Any]) -> bool:
    return block.keys() == {"type", "text"} and block["type"] in _TEXT_BLOCKS


def message_list(body: dict[str, Any]) -> list[Any]:
    """The turns of a request body: `messages`, or the Responses `input` as items."""
    items = body.get("messages", body.get("input"))
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return items if isinstance(items, list) else []


def prefix_hashes(messages: list[Any]) -> list[str]:
    """hashes[i]: the chain hash of messages[:i + 1], read as `normalized`."""
    chain, hashes = hashlib.sha256(), []
    for message in messages:
        text = json.dumps(normalized(message), sort_keys=True, separators=(",", ":"))
        chain.update(hashlib.sha256(text.encode()).digest())
        hashes.append(chain.copy().hexdigest()[:32])
    return hashes


def continued_id(body: dict[str, Any]) -> str | None:
    """The earlier response this request carries on from, where the provider keeps the history:
    `previous_response_id` (OpenAI Responses) or an Anthropic thread continuation's
    `thread.previous_message_id` (message-threads beta: only the new messages are sent)."""
    previous = body.get("previous_response_id")
    thread = body.get("thread")
    if (
        not isinstance(previous, str)
        and isinstance(thread, dict)
        and thread.get("type") == "continue"
    ):
        previous = thread.get("previous_message_id")
    return previous if isinstance(previous, str) and previous else None


@dataclass
class _Conversation:
    name: str
    scope: _Scope
    model: Any = None
    end: str | None = None  # chain hash of the latest whole history sent
    responses: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)


class Conversations:
    """`assign(provider, body)` names the conversation of each request in arrival order;
    `answered(name, response_id)` records its response for `previous_response_id` and thread
    links."""

    def __init__(self, limit: int = 10_000, responses_kept: int = 64) -> None:
        self.limit, self.responses_kept = limit, responses_kept
        self._count = 0
        self._live: OrderedDict[str, _Conversation] = OrderedDict()
        self._by_end: dict[tuple[_Scope, str], list[str]] = {}
        self._by_key: dict[tuple[str, str], str] = {}
        self._by_response: dict[tuple[str, str], str] = {}

    def assign(self, provider: str, body: dict[str, Any]) -> str:
        scope = (provider, _user(body))
        hashes = prefix_hashes(message_list(body))
        previous, key = continued_id(body), body.get("prompt_cache_key")
        found = self._by_response.get((provider, previous)) if previous else None
        if found is None and isinstance(key, str):
            found = self._by_key.get((provider, key))
        if found is None:
            found = self._extended(scope, hashes, body.get("model"))
        conversation = self._live.get(found) if found else None
        if conversation is None:
            self._count += 1
            conversation = _Conversation(f"c{self._count}", scope)
        conversation.model = body.get("model")
        # a continuation carries only its new messages: the whole history is the last one sent
        whole = hashes[-1] if hashes and previous is None else conversation.end
        self._remember(conversation, whole)
        if isinstance(key, str):
            self._by_key[(provider, key)] = conversation.name
            conversation.keys.add(key)
        return conversation.name

    def answered(self, name: str, response_id: str) -> None:
        conversation = self._live.get(name)
        # an id told again (the proxy learns it early, then again once the exchange is stored,
        # maybe after a later one) never makes an older response the latest
        if conversation is None or not response_id or response_id in conversation.responses:
            return
        conversation.responses.append(response_id)
        self._by_response[(conversation.scope[0], response_id)] = name
        if len(conversation.responses) > self.responses_kept:
            dropped = conversation.responses.pop(0)
            self._by_response.pop((conversation.scope[0], dropped), None)

    def latest_response(self, name: str | None) -> str | None:
        """The id of the latest answered response of conversation `name`."""
        conversation = self._live.get(name) if name is not None else None
        return conversation.responses[-1] if conversation and conversation.responses else None

    def __len__(self) -> int:
        return len(self._live)

    def _extended(self, scope: _Scope, hashes: list[str], model: Any) -> str | None:
        """The conversation whose latest history this one extends furthest, of the same model
        first, then the most recent. A conversation of another model is continued only by a
        request that adds messages to it (a model switch): OpenCode's title request, on a small
        model, repeats the first user message of the session it names and is its own."""
        for at, h in enumerate(reversed(hashes)):
            names = self._by_end.get((scope, h), [])
            same = [n for n in names if self._live[n].model == model]
            if same or (names and at > 0):  # another model: only where this adds messages
                return (same or names)[-1]
        return None

    def _remember(self, conversation: _Conversation, end: str | None) -> None:
        self._drop_end(conversation)
        conversation.end = end
        if end is not None:
            self._by_end.setdefault((conversation.scope, end), []).append(conversation.name)
        self._live[conversation.name] = conversation
        self._live.move_to_end(conversation.name)
        while len(self._live) > self.limit:
            self._forget(self._live.popitem(last=False)[1])

    def _drop_end(self, conversation: _Conversation) -> None:
        if conversation.end is None:
            return
        at = (conversation.scope, conversation.end)
        names = self._by_end.get(at, [])
        if conversation.name in names:
            names.remove(conversation.name)
        if not names:
            self._by_end.pop(at, None)

    def _forget(self, conversation: _Conversation) -> None:
        self._drop_end(conversation)
        provider = conversation.scope[0]
        for response in conversation.responses:
            self._by_response.pop((provider, response), None)
        for key in conversation.keys:
            if self._by_key.get((provider, key)) == conversation.name:
                del self._by_key[(provider, key)]


def conversation_names(
    exchanges: Iterable[tuple[str, dict[str, Any], Any]],
) -> Iterator[str]:
    """The conversation of each (provider, request body, response or None), in order; a
    response's `id` links the requests that name it later."""
    grouping = Conversations()
    for provider, request, response in exchanges:
        name = grouping.assign(provider, request)
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            grouping.answered(name, response["id"])
        yield name


def _user(body: dict[str, Any]) -> str | None:
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    return user if isinstance(user, str) else None
