"""The emulated Messages endpoint's message threads (beta `message-threads-2026-08-12`).

As https://platform.claude.com/docs/en/build-with-claude/message-threads describes the server:
a create keeps the conversation and the reply under the response `id`; a continuation is
rebuilt from it before the model is called (the emulated model, the cache and the usage
figures all see the whole thread); a thread expires 5 minutes after its last request, and a
continuation of an expired or unknown response is answered 404 with the error body of the
SDK's `ThreadNotFoundError` (`error.details.error_code` = `thread_not_found`), one of a response
continued before 400 `thread_already_continued`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from dtl_notebook.context.thread_context import THREAD_IDLE_SECONDS, ThreadBook, ThreadRead

__all__ = ["ThreadGone", "ThreadKeeper"]

JSON = dict[str, Any]


class ThreadGone(LookupError):
    """A continuation whose thread the server does not hold: answered 404
    `thread_not_found`, or 400 `thread_already_continued` for a response continued before."""

    def __init__(self, previous_message_id: str | None, continued: bool = False) -> None:
        self.previous_message_id, self.continued = previous_message_id, continued
        self.status = 400 if continued else 404
        super().__init__(f"no thread holds {previous_message_id!r}")

    def body(self, request_id: str) -> JSON:
        """The API's error body (the SDK reads `error.details.error_code`); the words are the
        SDK's error types' own."""
        named = repr(self.previous_message_id)
        if self.continued:
            kind, code = "invalid_request_error", "thread_already_continued"
            message = (
                f"The response {named} has already been continued, and each response can be "
                "continued only once. Continue from the Thread's most recent response `id`."
            )
        else:
            kind, code = "not_found_error", "thread_not_found"
            message = (
                f"No usable Thread state was found for `previous_message_id` {named}. Replay the "
                'full conversation with `thread: {"type": "create"}` to start a new Thread.'
            )
        return {
            "type": "error",
            "error": {"type": kind, "message": message, "details": {"error_code": code}},
            "request_id": request_id,
        }


class ThreadKeeper:
    """The threads of one emulated endpoint."""

    def __init__(self, idle_seconds: float = THREAD_IDLE_SECONDS) -> None:
        self.book = ThreadBook(idle_seconds)
        self._continued: OrderedDict[str, None] = OrderedDict()  # ids continued once already

    def open(self, payload: JSON, at: float) -> ThreadRead:
        """`payload` as the model gets it at `at`; raises ThreadGone for a lost thread."""
        read = self.book.read(payload, at)
        if read.missing is not None:
            previous = read.previous_message_id
            raise ThreadGone(previous, previous in self._continued)
        return read

    def keep(self, read: ThreadRead, reply: JSON, at: float) -> None:
        """Hold `reply` as the thread's latest turn (a create or a continuation only)."""
        if self.book.store(read, reply, at) is not None and read.previous_message_id:
            self._continued[read.previous_message_id] = None
            while len(self._continued) > self.book.limit:
                self._continued.popitem(last=False)
