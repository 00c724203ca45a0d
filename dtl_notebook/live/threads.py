"""An agent's Anthropic message thread (`Agent(..., threads=True)`): each full request the
session builds goes out as a thread create or as a continuation carrying only its new messages.

https://platform.claude.com/docs/en/build-with-claude/message-threads. The full request stays
the source of truth (the provider page: "keep your own copy of every message"): a turn
continues the thread only where the server would rebuild exactly that request, i.e. the same
`system` and `tools` as the create and the held history (reply included, markers aside) as the
start of its messages, and the thread has not expired (5 minutes after its last request).
Anything else (a rewritten history, a changed tool list or system prompt, an expired thread, a
model the beta does not list) sends the full request: a create where the model takes threads,
else the plain request. A `thread_not_found` answer (or `thread_already_continued`,
`thread_continue_in_flight`) is replayed once as a create; a
`thread_unsupported_request` one as the plain request, and threading stops (the SDK's
"continue_unthreaded").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dtl_notebook.context.thread_context import THREAD_IDLE_SECONDS, HeldThread, ThreadBook
from dtl_notebook.live.steps import Step
from dtl_notebook.wire.anthropic_threads import (
    CREATE_ONLY_FIELDS,
    THREADS_BETA,
    as_continuation,
    as_create,
    without_markers,
)
from dtl_notebook.wire.reply import ProviderError
from dtl_notebook.wire.request import LoadPoint, WireRequest
from dtl_notebook.wire.validate import required_betas

__all__ = ["CONTINUE_NOTE", "ThreadClient"]

CONTINUE_NOTE = "thread: continues"  # a continuation's note (the view shows its own line)

# the rejections a full replay under a new thread recovers from (the SDK's `ReplayErrorCode`)
_MESSAGE_PATH = re.compile(r"^messages\.(\d+)(.*)$")
_REPLAYED = frozenset({"thread_not_found", "thread_already_continued", "thread_continue_in_flight"})


class ThreadClient:
    """The agent's side of its thread: `request_for` before sending, `answered` after."""

    def __init__(self, idle_seconds: float = THREAD_IDLE_SECONDS) -> None:
        self.book = ThreadBook(idle_seconds, limit=8)  # what the server holds, mirrored
        self.latest: HeldThread | None = None
        self.off = False  # the provider refused to thread this agent's requests

    def takes(self, full: WireRequest) -> bool:
        """Whether `full`'s provider and model take message threads."""
        profile = full.profile
        return (
            not self.off
            and profile is not None
            and profile.message_threads  # set only by a provider and model that thread
        )

    def send(
        self, full: WireRequest, send: Callable[[WireRequest], Step], clock: Callable[[], float]
    ) -> Step:
        """Send the session's full request through `send`, as a thread create or continuation;
        a lost or refused thread is sent again as `recover` says."""
        request = self.request_for(full, clock())
        try:
            step = send(request)
        except ProviderError as failure:
            again = self.recover(failure, full, clock())
            if again is None:
                raise
            request = again
            step = send(request)
        self.answered(request, step.response, clock())
        return step

    def request_for(self, full: WireRequest, at: float) -> WireRequest:
        """The request to send at `at` for the session's full request `full`."""
        if not self.takes(full):
            return full
        held = self.latest
        if held is not None and self._continues(full.payload, held, at):
            count = len(held.messages)
            body = as_continuation(full.payload, count, held.message_id)
            sent = len(body["messages"])
            note = f"{CONTINUE_NOTE} {held.message_id} ({sent} new of {count + sent} messages)"
            points = _sent_points(full.load_points, count)
            return replace(_with_body(full, body, note), load_points=points)
        why = "" if held is None else f" ({self._why_not(full.payload, held, at)})"
        return _with_body(full, as_create(full.payload), f"thread: create{why}")

    def answered(self, request: WireRequest, response: Any, at: float) -> None:
        """Mirror what the server now holds after `response` to `request`."""
        if "thread" not in request.payload:
            return
        read = self.book.read(request.payload, at)
        self.latest = self.book.store(read, response, at)

    def recover(self, failure: ProviderError, full: WireRequest, at: float) -> WireRequest | None:
        """The request to send again after `failure`, or None where threads change nothing."""
        if failure.code in _REPLAYED and self.latest is not None:
            self.latest = None  # not continuable on the server: the full history goes again
            return self.request_for(full, at)
        if failure.code == "thread_unsupported_request" and not self.off:
            self.off, self.latest = True, None
            return replace(full, notes=[*full.notes, f"thread refused: {failure.message}"])
        return None

    def _continues(self, full: dict[str, Any], held: HeldThread, at: float) -> bool:
        return not self._why_not(full, held, at)

    def _why_not(self, full: dict[str, Any], held: HeldThread, at: float) -> str:
        """Why `full` cannot continue `held` at `at` ("" where it can)."""
        if at > held.expires_at(self.book.idle_seconds):
            return f"the thread of {held.message_id} expired"
        for field in CREATE_ONLY_FIELDS:
            if full.get(field) != held.fields.get(field):
                return f"{field} changed since the create"
        messages = full.get("messages") or []
        count = len(held.messages)
        if without_markers(messages[:count]) != without_markers(list(held.messages)):
            return "the history differs from the thread's"
        return ""


def _sent_points(points: list[LoadPoint], held: int) -> list[LoadPoint]:
    """The load points of the messages a continuation sends, at their paths in its body (those
    in the held messages are the thread's, not on this request's wire)."""
    sent = []
    for point in points:
        found = _MESSAGE_PATH.match(point.path)
        if found and int(found[1]) >= held:
            sent.append(replace(point, path=f"messages.{int(found[1]) - held}{found[2]}"))
    return sent


def _with_body(full: WireRequest, body: dict[str, Any], note: str) -> WireRequest:
    betas = sorted({*full.betas, *required_betas(body, full.provider), THREADS_BETA})
    return replace(full, payload=body, betas=betas, notes=[*full.notes, note])
