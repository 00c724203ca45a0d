"""The model context of an Anthropic message thread: what the server rebuilds for a continuation.

https://platform.claude.com/docs/en/build-with-claude/message-threads: the create request's
`system`, `tools` and messages, Claude's reply, then each continuation's new messages and its
reply, are kept under the latest response `id`; "the API rebuilds the conversation before it
calls the model". A thread expires 5 minutes after its last request (each stored response
starts the 5 minutes again); a continuation of an expired or unknown thread is a 404 with
`error.details.error_code` `thread_not_found`. Each response can be continued once (a second
continuation is `thread_already_continued`), so only the latest id of a thread is kept.

A `ThreadBook` holds what a server (the emulator) or an observer (the analyzer, the proxy, an
agent) has seen of its threads: `read(body, at)` gives the whole request the model sees, and
`store(read, response, at)` keeps the reply for the next continuation. The stored messages go
to the model without their `cache_control` markers (the SDK's thread state sends them again
that way: each marker was set for the turn that sent it first).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

from dtl_notebook.wire.anthropic_threads import (
    CREATE_ONLY_FIELDS,
    ThreadKind,
    thread_kind,
    without_markers,
)

__all__ = ["THREAD_IDLE_SECONDS", "HeldThread", "ThreadBook", "ThreadRead"]

THREAD_IDLE_SECONDS = 300.0  # "expires 5 minutes after its last request"
Missing = Literal["unknown", "expired"]


@dataclass(frozen=True)
class HeldThread:
    """One thread as the server holds it after its latest reply `message_id`."""

    message_id: str
    fields: dict[str, Any]  # the create request's `system` and `tools` (those it sent)
    messages: tuple[Any, ...]  # the whole history, replies included, as sent (markers kept)
    created_at: float
    used_at: float  # the latest stored response: the 5 idle minutes run from here
    turns: int  # responses stored so far

    def expires_at(self, idle_seconds: float = THREAD_IDLE_SECONDS) -> float:
        return self.used_at + idle_seconds


@dataclass(frozen=True)
class ThreadRead:
    """One request read against the threads: `payload` is the whole request the model sees
    (the body itself unless it continues a held thread), `thread` the thread it continues,
    `missing` why a continuation found none ("unknown" or "expired")."""

    kind: ThreadKind | None
    payload: dict[str, Any]
    at: float
    previous_message_id: str | None = None
    thread: HeldThread | None = None
    missing: Missing | None = None
    idle_seconds: float = THREAD_IDLE_SECONDS

    @property
    def age(self) -> float | None:
        """Seconds since the thread was created (None: not a continuation of a held one)."""
        return self.at - self.thread.created_at if self.thread is not None else None

    @property
    def expires_in(self) -> float | None:
        """Seconds left before the continued thread would have expired."""
        if self.thread is None:
            return None
        return self.thread.expires_at(self.idle_seconds) - self.at


class ThreadBook:
    """The threads seen so far, by the response id a continuation names (the `limit` most
    recently used are kept)."""

    def __init__(self, idle_seconds: float = THREAD_IDLE_SECONDS, limit: int = 1024) -> None:
        self.idle_seconds, self.limit = idle_seconds, limit
        self._held: OrderedDict[str, HeldThread] = OrderedDict()

    def get(self, message_id: str) -> HeldThread | None:
        return self._held.get(message_id)

    def read(self, payload: dict[str, Any], at: float) -> ThreadRead:
        """`payload` read at time `at` (seconds): a continuation of a held, unexpired thread
        becomes the whole request the server rebuilds."""
        kind = thread_kind(payload)
        if kind != "continue":
            return ThreadRead(kind, _unthreaded(payload), at, idle_seconds=self.idle_seconds)
        previous = str(payload["thread"].get("previous_message_id"))
        thread = self._held.get(previous)
        if thread is None or at > thread.expires_at(self.idle_seconds):
            missing: Missing = "unknown" if thread is None else "expired"
            return ThreadRead(kind, payload, at, previous, missing=missing)
        return ThreadRead(
            kind, rebuilt(payload, thread), at, previous, thread, idle_seconds=self.idle_seconds
        )

    def store(self, read: ThreadRead, response: Any, at: float) -> HeldThread | None:
        """Keep `response` (a Messages reply body) as the thread's latest turn; None where
        nothing is kept: no thread asked, no thread found, a refusal (the SDK starts a new
        thread after one), or no reply id."""
        if read.kind is None or read.missing is not None or not isinstance(response, dict):
            return None
        message_id = response.get("id")
        if not isinstance(message_id, str) or response.get("stop_reason") == "refusal":
            return None
        reply = {"role": "assistant", "content": response.get("content") or []}
        before = read.thread
        if before is not None:
            self._held.pop(before.message_id, None)  # each response is continued once
        fields = (
            before.fields
            if before is not None
            else {f: read.payload[f] for f in CREATE_ONLY_FIELDS if f in read.payload}
        )
        held = HeldThread(
            message_id,
            fields,
            (*(read.payload.get("messages") or ()), reply),
            before.created_at if before is not None else at,
            at,
            before.turns + 1 if before is not None else 1,
        )
        self._held[message_id] = held
        while len(self._held) > self.limit:
            self._held.popitem(last=False)
        return held


def rebuilt(payload: dict[str, Any], thread: HeldThread) -> dict[str, Any]:
    """The whole request the server builds for a continuation of `thread`: the continuation's
    own fields, the thread's `system` and `tools`, the held messages (markers off) and then
    the new ones."""
    body = _unthreaded(payload)
    body.update(thread.fields)
    new = payload.get("messages")
    body["messages"] = [*without_markers(list(thread.messages)), *(new or ())]
    return body


def _unthreaded(payload: dict[str, Any]) -> dict[str, Any]:
    """The body without its `thread` field, which is no content of the model's."""
    return {k: v for k, v in payload.items() if k != "thread"} if "thread" in payload else payload
