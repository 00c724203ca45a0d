"""OpenAI Responses continuations as the analyzer sees them: a request naming
`previous_response_id` is predicted on the whole input the server rebuilds
(`context.response_chain`), and says so on its entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dtl_notebook.context.response_chain import ChainRead, ResponseChain, items

__all__ = ["Continuation", "read_continuation"]

NOT_SEEN = "the response it continues was not seen: the model context holds only the items sent"
NOT_GIVEN = "the previous reply was not given: the input is rebuilt without its output"


@dataclass(frozen=True)
class Continuation:
    """A request naming `previous_response_id`: the items it `sent` against the `whole` input
    the model sees; `note` says why it was not rebuilt (the named response was not seen: never
    a break then), or what the rebuild lacks."""

    previous_response_id: str
    sent: int
    whole: int
    note: str = ""


def read_continuation(
    chain: ResponseChain, payload: dict[str, Any], unanswered: dict[str, Any] | None
) -> tuple[ChainRead, Continuation | None]:
    """`payload` read after the response it names. `unanswered`: the whole body of the
    previous request of this conversation, whose reply was never given (`analyze` without
    responses): an id this chain never saw is taken to be that reply's, its output unknown."""
    read = chain.read(payload)
    previous = read.previous
    if previous is None:
        return read, None
    note = ""
    if read.missing and unanswered is not None:
        chain.keep(unanswered, {"id": previous, "output": []})
        read, note = chain.read(payload), NOT_GIVEN
    elif read.missing:
        note = NOT_SEEN
    whole = len(items(read.payload.get("input")))
    return read, Continuation(previous, read.sent, whole, note)
