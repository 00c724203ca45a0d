"""Anthropic message threads as the analyzer sees them: which thread a request continues, what
the model is billed for, and the two thread events (`thread_not_found`, `thread_replaced`).

The whole request comes from `context.thread_context` (the create's system, tools and
messages, every reply, the new messages): token and cache predictions are made on it, as the
provider rebuilds it before it calls the model. A create that replays a conversation a held
thread already kept (its messages start with that thread's whole history, compared as the
conversation rule compares them: `conversation_key.prefix_hashes`) replaces that thread.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from dtl_notebook.cache.codes import code
from dtl_notebook.cache.conversation_key import message_list, prefix_hashes
from dtl_notebook.context.thread_context import THREAD_IDLE_SECONDS, ThreadBook, ThreadRead

__all__ = ["ThreadFacts", "ThreadWatch", "thread_error_code"]


@dataclass(frozen=True)
class ThreadFacts:
    """One thread request: `sent` messages on the wire against `whole` in the model context,
    the thread's age and time left at send time, and its event code, if any."""

    kind: str  # "create" | "continue"
    sent: int
    whole: int
    previous_message_id: str | None = None
    age_seconds: float | None = None
    expires_in_seconds: float | None = None
    idle_seconds: float = THREAD_IDLE_SECONDS
    event: str | None = None  # "thread_not_found" | "thread_replaced"
    replaced: str | None = None  # the latest response id of the thread a create replaces
    note: str = ""

    @property
    def message(self) -> str:
        """The event's words (the row in `causes.json`), or the note."""
        return code(self.event).message if self.event else self.note


class ThreadWatch:
    """The threads of one analyzer: `read` each request before it is predicted, `answered`
    once its response is known."""

    def __init__(self, idle_seconds: float = THREAD_IDLE_SECONDS) -> None:
        self.book = ThreadBook(idle_seconds)
        # chain hash of a held thread's whole history -> its latest id (as many as the book)
        self._ends: OrderedDict[str, str] = OrderedDict()

    def read(
        self, payload: dict[str, Any], at: float, unanswered: ThreadRead | None = None
    ) -> tuple[ThreadRead, ThreadFacts | None]:
        """`payload` read at `at`. `unanswered`: the previous request of this conversation,
        whose reply was never given (`analyze` without responses): a continuation naming an
        unknown id is taken to continue it, the reply's tokens left out (said in the note)."""
        read = self.book.read(payload, at)
        if read.kind is None:
            return read, None
        unheard = read.missing == "unknown" and unanswered is not None
        if unanswered is not None and unheard and unanswered.kind is not None:
            reply: dict[str, Any] = {"id": read.previous_message_id, "content": []}
            self.answered(unanswered, reply, unanswered.at)
            read = self.book.read(payload, at)
        unheard = unheard and read.missing is None
        sent = len(message_list(payload))
        whole = len(message_list(read.payload))
        if read.kind == "create":
            replaced = self._replaced(payload)
            event = "thread_replaced" if replaced else None
            return read, ThreadFacts("create", sent, whole, event=event, replaced=replaced)
        if read.missing is not None:
            note = (
                "the thread expired before this continuation"
                if read.missing == "expired"
                else "this thread's create was not seen: the model context holds only the "
                "messages sent"
            )
            event = "thread_not_found" if read.missing == "expired" else None
            facts = ThreadFacts(
                "continue", sent, whole, read.previous_message_id, event=event, note=note
            )
            return read, facts
        facts = ThreadFacts(
            "continue",
            sent,
            whole,
            read.previous_message_id,
            read.age,
            read.expires_in,
            self.book.idle_seconds,
            note="the previous reply was not given: the thread is rebuilt without its tokens"
            if unheard
            else "",
        )
        return read, facts

    def answered(self, read: ThreadRead, response: Any, at: float) -> None:
        """Keep the reply for the next continuation; forget a thread the provider lost."""
        if thread_error_code(response) == "thread_not_found" and read.previous_message_id:
            return
        held = self.book.store(read, response, at)
        if held is not None:
            self._ends[prefix_hashes(list(held.messages))[-1]] = held.message_id
            while len(self._ends) > self.book.limit:
                self._ends.popitem(last=False)

    def _replaced(self, payload: dict[str, Any]) -> str | None:
        for h in reversed(prefix_hashes(message_list(payload))):
            if h in self._ends:
                return self._ends[h]
        return None


def thread_error_code(response: Any) -> str | None:
    """`error.details.error_code` of an Anthropic error body (e.g. "thread_not_found")."""
    error = response.get("error") if isinstance(response, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    found = details.get("error_code") if isinstance(details, dict) else None
    return found if isinstance(found, str) else None
