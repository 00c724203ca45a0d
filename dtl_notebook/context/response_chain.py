"""The model context of an OpenAI Responses continuation: what `previous_response_id` names.

A request that names a previous response carries only its new items; the server reads them
after the previous request's (whole) input and that response's output
(https://platform.openai.com/docs/guides/conversation-state). Codex does so over its
WebSocket even with `store: false`: the connection keeps its latest response in memory.

A `ResponseChain` holds what a server (the emulator) or an observer (the analyzer) has seen of
its responses: `read(body)` gives the whole request the model sees, and `keep(whole,
response)` remembers an answered one for the next continuation. The rule is written here
once; the emulator refuses a continuation it cannot rebuild, the analyzer notes it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["ChainRead", "ResponseChain", "previous_response"]

KEPT = 256  # responses kept, the latest


@dataclass(frozen=True)
class ChainRead:
    """One request read against the responses seen: `payload` is the whole request the model
    sees (the body itself where it names no previous response or an unknown one), `previous`
    the id it names, `missing` whether that response was never seen, `sent` the items it
    carries itself."""

    payload: dict[str, Any]
    previous: str | None = None
    missing: bool = False
    sent: int = 0

    @property
    def continued(self) -> bool:
        """Whether the body continues a response that was rebuilt into `payload`."""
        return self.previous is not None and not self.missing


def previous_response(payload: dict[str, Any]) -> str | None:
    """The `previous_response_id` a body names (None: none, or an empty one)."""
    previous = payload.get("previous_response_id")
    return str(previous) if previous else None


class ResponseChain:
    """The whole input and output of the latest `limit` responses, by response id."""

    def __init__(self, limit: int = KEPT) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, list[Any]] = OrderedDict()

    def read(self, payload: dict[str, Any]) -> ChainRead:
        """`payload` as the server reads it: a continuation's items after the conversation it
        continues (`previous_response_id` resolved and dropped); others as they are."""
        previous = previous_response(payload)
        if previous is None:
            return ChainRead(payload)
        sent = items(payload.get("input"))
        earlier = self._kept.get(previous)
        if earlier is None:
            return ChainRead(payload, previous, missing=True, sent=len(sent))
        rest = {k: v for k, v in payload.items() if k != "previous_response_id"}
        return ChainRead({**rest, "input": [*earlier, *sent]}, previous, sent=len(sent))

    def keep(self, whole: dict[str, Any], response: Any) -> None:
        """Remember an answered request (`whole`: as `read` rebuilt it) and its response body;
        a body without an id (an error) is not kept."""
        if not isinstance(response, dict) or not isinstance(response.get("id"), str):
            return
        output = response.get("output")
        conversation = [*items(whole.get("input")), *(output if isinstance(output, list) else [])]
        self._kept[response["id"]] = conversation
        self._kept.move_to_end(response["id"])
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)


def items(value: Any) -> list[Any]:
    """The Responses `input` as a list of items (the text shorthand: one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []
