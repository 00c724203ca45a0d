"""Anthropic message threads on the wire (beta `message-threads-2026-08-12`).

https://platform.claude.com/docs/en/build-with-claude/message-threads: a request with
`thread: {"type": "create"}` is sent as usual and the server keeps the conversation, Claude's
reply included, under the response `id`; a request with `thread: {"type": "continue",
"previous_message_id": ...}` carries only the messages since that response and no `system` or
`tools` (the SDK's `CREATE_ONLY_FIELDS`: the server takes them from the thread and rejects a
request that repeats them). The shape of `thread` is checked against the SDK's
`BetaMessageThreadParam` by the strict validator (the beta types define it); this module holds
the rules the types cannot express and the two bodies a client derives from a full request.
"""

from __future__ import annotations

from typing import Any, Literal

from dtl_notebook.wire.betas import TOP_LEVEL_BETAS
from dtl_notebook.wire.rules import check_anthropic
from dtl_notebook.wire.shape_errors import WireValidationError, fail

__all__ = [
    "CREATE_ONLY_FIELDS",
    "THREADS_BETA",
    "ThreadKind",
    "as_continuation",
    "as_create",
    "check_anthropic_thread",
    "thread_kind",
    "without_markers",
]

THREADS_BETA = TOP_LEVEL_BETAS["thread"]
CREATE_ONLY_FIELDS = ("system", "tools")
ThreadKind = Literal["create", "continue"]
# the keys that hold content blocks (the SDK's `KEYS_THAT_HOLD_BLOCKS`): a tool's `input` is
# free-form data and keeps any key it has
_BLOCK_KEYS = frozenset({"content", "source", "tool", "definition", "tool_references"})


def thread_kind(payload: Any) -> ThreadKind | None:
    """ "create", "continue" or None: what a request body's `thread` asks for."""
    thread = payload.get("thread") if isinstance(payload, dict) else None
    kind = thread.get("type") if isinstance(thread, dict) else None
    return kind if kind in ("create", "continue") else None


def check_anthropic_thread(payload: dict[str, Any], provider: str) -> None:
    """The Messages rules, read for a thread continuation: it names no create-only field, and
    its first message may answer a `tool_use` of the thread's last reply, which the request
    does not carry (nor the tools its references name)."""
    if thread_kind(payload) != "continue":
        check_anthropic(payload, provider)
        return
    for field in CREATE_ONLY_FIELDS:
        if field in payload:
            fail(
                provider,
                (field,),
                f"`{field}` cannot be sent with thread.type 'continue': the thread keeps the "
                "value of its create request; send a new create to change it",
            )
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return  # the shape check named it
    try:
        check_anthropic(_with_stand_ins(messages), provider)
    except WireValidationError as exc:  # paths into the stand-ins' body, one message later
        fail(provider, _shifted(exc.path), exc.reason)


def _with_stand_ins(messages: list[Any]) -> dict[str, Any]:
    """A body whose first message is the `tool_use`s the first message answers, and whose
    tools are the names its references load: what the thread holds, as far as the rules read."""
    first = messages[0] if messages else None
    content = first.get("content") if isinstance(first, dict) else None
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    uses: list[dict[str, Any]] = [
        {"type": "tool_use", "id": b.get("tool_use_id"), "name": "thread_tool", "input": {}}
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    names = sorted({str(n) for n in _reference_names(messages)})
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in names]
    if uses:
        return {"tools": tools, "messages": [{"role": "assistant", "content": uses}, *messages]}
    # nothing answered: a placeholder keeps the paths one message later all the same
    return {"tools": tools, "messages": [{"role": "assistant", "content": "-"}, *messages]}


def _reference_names(value: Any) -> list[Any]:
    if isinstance(value, dict):
        found = [value.get("tool_name")] if value.get("type") == "tool_reference" else []
        return found + [n for v in value.values() for n in _reference_names(v)]
    if isinstance(value, list):
        return [n for v in value for n in _reference_names(v)]
    return []


def _shifted(path: str) -> tuple[str | int, ...]:
    parts: list[str | int] = [int(p) if p.isdigit() else p for p in path.split(".") if p]
    if len(parts) > 1 and parts[0] == "messages" and isinstance(parts[1], int):
        parts[1] -= 1
    return tuple(parts)


def without_markers(value: Any) -> Any:
    """`value` without the `cache_control` of any block in it, however deep (only the keys
    that hold blocks are followed). A thread's stored messages go to the model this way: each
    marker was set for the turn that sent it first (the SDK's `without_cache_control`)."""
    if isinstance(value, dict):
        return {
            k: without_markers(v) if k in _BLOCK_KEYS else v
            for k, v in value.items()
            if k != "cache_control"
        }
    if isinstance(value, list):
        return [without_markers(v) for v in value]
    return value


def as_create(full: dict[str, Any]) -> dict[str, Any]:
    """The full request body that creates (or replaces) a thread."""
    return {**full, "thread": {"type": "create"}}


def as_continuation(full: dict[str, Any], held: int, previous_message_id: str) -> dict[str, Any]:
    """The body that continues the thread ending at `previous_message_id`, whose server holds
    the first `held` messages of the full request `full`: only the later messages are sent."""
    body = {k: v for k, v in full.items() if k not in CREATE_ONLY_FIELDS and k != "thread"}
    body["messages"] = list(full["messages"][held:])
    body["thread"] = {"type": "continue", "previous_message_id": previous_message_id}
    return body
