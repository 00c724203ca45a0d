"""The emulated Messages endpoint's message threads (beta `message-threads-2026-08-12`).

As https://platform.claude.com/docs/en/build-with-claude/message-threads describes the server:
a create keeps the conversation and the reply under the response `id`; a continuation is
rebuilt from it before the model is called (the emulated model, the cache and the usage
figures all see the whole thread); a thread expires 5 minutes after its last request, and a
continuation of an expired, unknown or already continued response is answered 404 with the
error body of the SDK's `ThreadNotFoundError` (`error.details.error_code` = `thread_not_found`).
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.thread_context import THREAD_IDLE_SECONDS, ThreadBook, ThreadRead

__all__ = ["ThreadGone", "ThreadKeeper"]

JSON = dict[str, Any]


class ThreadGone(LookupError):
    """A continuation whose thread the server does not hold: answered 404."""

    def __init__(self, previous_message_id: str | None) -> None:
        self.previous_message_id = previous_message_id
        super().__init__(f"no thread holds {previous_message_id!r}")

    def body(self, request_id: str) -> JSON:
        """The API's error body (the SDK reads `error.details.error_code`)."""
        return {
            "type": "error",
            "error": {
                "type": "not_found_error",
                "message": "No usable Thread state was found for `previous_message_id` "
                f"{self.previous_message_id!r}. Replay the full conversation with "
                '`thread: {"type": "create"}` to start a new Thread.',
                "details": {"error_code": "thread_not_found"},
            },
            "request_id": request_id,
        }


class ThreadKeeper:
    """The threads of one emulated endpoint."""

    def __init__(self, idle_seconds: float = THREAD_IDLE_SECONDS) -> None:
        self.book = ThreadBook(idle_seconds)

    def open(self, payload: JSON, at: float) -> ThreadRead:
        """`payload` as the model gets it at `at`; raises ThreadGone for a lost thread."""
        read = self.book.read(payload, at)
        if read.missing is not None:
            raise ThreadGone(read.previous_message_id)
        return read

    def keep(self, read: ThreadRead, reply: JSON, at: float) -> None:
        """Hold `reply` as the thread's latest turn (a create or a continuation only)."""
        self.book.store(read, reply, at)
