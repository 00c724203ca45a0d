"""What an emulated Responses server keeps of its answers: `previous_response_id` continues one.

A request that names a previous response carries only its new items; the server reads it
after the previous request's input and that response's output
(https://platform.openai.com/docs/guides/conversation-state). Codex does so over its
WebSocket even with `store: false`: the connection keeps its latest response in memory. The
emulator keeps the latest answers of the endpoint, whatever `store` says, so that what its
model sees, and its cache, are the whole conversation; an id it does not hold is refused as
the API refuses it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from dtl_notebook.wire.shape_errors import WireValidationError

JSON = dict[str, Any]
KEPT = 256  # responses kept, the latest


class ResponseHistory:
    """The input and output of the latest responses, by response id."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self._kept: OrderedDict[str, list[Any]] = OrderedDict()

    def expand(self, payload: JSON) -> JSON:
        """`payload` as the server reads it: a continuation's items after the conversation it
        continues (`previous_response_id` resolved and dropped); others as they are."""
        previous = payload.get("previous_response_id")
        if previous is None:
            return payload
        earlier = self._kept.get(str(previous))
        if earlier is None:
            raise WireValidationError(
                self.provider,
                "previous_response_id",
                f"Previous response with id {previous!r} not found.",
            )
        rest = {k: v for k, v in payload.items() if k != "previous_response_id"}
        return {**rest, "input": [*earlier, *_items(payload.get("input"))]}

    def keep(self, payload: JSON, body: JSON) -> None:
        """Remember an answered (expanded) request and its response."""
        output = body.get("output")
        conversation = [
            *_items(payload.get("input")),
            *(output if isinstance(output, list) else []),
        ]
        self._kept[str(body["id"])] = conversation
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)


def _items(value: Any) -> list[Any]:
    if isinstance(value, str):  # the text shorthand: one user message
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []
