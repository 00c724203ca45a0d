"""Provider rules the request types cannot express.

All tools deferred, ``cache_control`` on a deferred tool, a dangling ``tool_reference``,
unpaired call ids, breakpoint limits and TTL order, duplicate tool names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dtl_notebook._reuse.prefix import GrowingSet, PrefixScan
from dtl_notebook.wire.explain import Path, fail, format_path, short

ALL_DEFERRED_MESSAGE = (
    "At least one tool must have defer_loading=false. All tools cannot be deferred."
)
MAX_CACHE_BREAKPOINTS = 4


def is_kimi_carrier(msg: Any) -> bool:
    """Kimi's ``{"role": "system", "tools": [...]}`` message (tools loaded mid-conversation)."""
    return (
        isinstance(msg, dict)
        and msg.get("role") == "system"
        and "tools" in msg
        and "content" not in msg
    )


def _dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index, item)`` for the dict items of a list (anything else yields nothing)."""
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def _check_unique(provider: str, prefix: Path, named: Iterable[tuple[int, Any]], what: str) -> None:
    """Fail on the second occurrence of a name; `named` holds (index under prefix, name)."""
    first: dict[str, int] = {}
    for i, name in named:
        if not isinstance(name, str):
            continue
        if name in first:
            where = format_path((*prefix, first[name]))
            fail(provider, (*prefix, i), f"duplicate {what} {name!r} (first at {where})")
        first[name] = i


def _nested_blocks(block: dict[str, Any], path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``block`` and the blocks nested in it (tool_result content, references, sources)."""
    yield path, block
    for key in ("content", "tool_references", "source"):
        child = block.get(key)
        if isinstance(child, dict):
            yield from _nested_blocks(child, (*path, key))
        for i, item in _dicts(child):
            yield from _nested_blocks(item, (*path, key, i))


def _check_anthropic(payload: dict[str, Any], provider: str) -> None:
    tool_names, breakpoints = _check_anthropic_tools(payload.get("tools"), provider)
    for j, block in _dicts(payload.get("system")):
        for path, b in _nested_blocks(block, ("system", j)):
            if b.get("cache_control") is not None:
                breakpoints.append(((*path, "cache_control"), b["cache_control"]))
    messages = payload.get("messages")
    listed = messages if isinstance(messages, list) else []
    facts = _MESSAGE_FACTS.scan(list(messages) if isinstance(messages, tuple) else listed)
    if facts.problem or not facts.references <= tool_names:
        _fail_on_messages(payload, provider, tool_names)  # names the first problem
    breakpoints.extend(facts.breakpoints)
    if payload.get("cache_control") is not None:
        breakpoints.append((("cache_control",), payload["cache_control"]))
    _check_breakpoints(provider, breakpoints)


class _MessageFacts:
    """What the message rules need from the messages scanned so far."""

    def __init__(self) -> None:
        self.pending: set[Any] = set()  # tool_use ids of the last message, if an assistant's
        self.references: set[str] = set()  # tool_reference names
        self.breakpoints: list[tuple[Path, Any]] = []
        self.problem = False  # an unpaired tool_result, a non-text error result, a bad name

    def __deepcopy__(self, memo: dict[int, Any]) -> _MessageFacts:
        copied = _MessageFacts()  # a breakpoint's path and cache_control are only read
        copied.pending, copied.references = set(self.pending), set(self.references)
        copied.breakpoints, copied.problem = list(self.breakpoints), self.problem
        return copied


def _step(facts: _MessageFacts, m: int, msg: Any) -> None:
    if not isinstance(msg, dict):
        return
    for j, block in _dicts(msg.get("content")):
        if block.get("type") == "tool_result":
            facts.problem |= block.get("tool_use_id") not in facts.pending
            facts.problem |= block.get("is_error") is True and any(
                item.get("type") != "text" for _, item in _dicts(block.get("content"))
            )
        for path, b in _nested_blocks(block, ("messages", m, "content", j)):
            if b.get("type") == "tool_reference":
                name = b.get("tool_name")
                if isinstance(name, str):
                    facts.references.add(name)
                else:
                    facts.problem = True
            if b.get("cache_control") is not None:
                facts.breakpoints.append(((*path, "cache_control"), b["cache_control"]))
    facts.pending = (
        {b.get("id") for _, b in _dicts(msg.get("content")) if b.get("type") == "tool_use"}
        if msg.get("role") == "assistant"
        else set()
    )


_MESSAGE_FACTS = PrefixScan(_MessageFacts, _step)


def _fail_on_messages(payload: dict[str, Any], provider: str, tool_names: set[str]) -> None:
    """Fail on the first message problem, in document order."""
    previous: dict[str, Any] | None = None
    for m, msg in _dicts(payload.get("messages")):
        pending_ids = set()
        if previous is not None and previous.get("role") == "assistant":
            pending_ids = {
                b.get("id")
                for _, b in _dicts(previous.get("content"))
                if b.get("type") == "tool_use"
            }
        for j, block in _dicts(msg.get("content")):
            here: Path = ("messages", m, "content", j)
            if block.get("type") == "tool_result":
                _check_tool_result(provider, block, here, pending_ids)
            for path, b in _nested_blocks(block, here):
                if b.get("type") == "tool_reference" and b.get("tool_name") not in tool_names:
                    fail(
                        provider,
                        path,
                        f"Tool reference '{b.get('tool_name')}' not found in available tools",
                    )
        previous = msg


def _check_anthropic_tools(tools: Any, provider: str) -> tuple[set[str], list[tuple[Path, Any]]]:
    """Unique names, not all deferred, no breakpoint on a deferred tool (in that order of
    report), in one pass: a native-search body declares every registered tool. Returns the
    tool names and the tools' breakpoints."""
    names: dict[str, int] = {}
    breakpoints: list[tuple[Path, Any]] = []
    duplicate: tuple[int, str] | None = None
    deferred_breakpoint: int | None = None
    counted = deferred_count = 0
    for i, tool in enumerate(tools if isinstance(tools, list | tuple) else ()):
        if not isinstance(tool, dict):
            continue
        counted += 1
        name = tool.get("name")
        if isinstance(name, str):
            if name in names and duplicate is None:
                duplicate = (i, name)
            names.setdefault(name, i)
        deferred = tool.get("defer_loading") is True
        deferred_count += deferred
        if tool.get("cache_control") is not None:
            if deferred and deferred_breakpoint is None:
                deferred_breakpoint = i
            breakpoints.append((("tools", i, "cache_control"), tool["cache_control"]))
    if duplicate is not None:
        i, name = duplicate
        first = format_path(("tools", names[name]))
        fail(provider, ("tools", i), f"duplicate tool name {name!r} (first at {first})")
    if counted and deferred_count == counted:
        fail(provider, ("tools",), ALL_DEFERRED_MESSAGE)
    if deferred_breakpoint is not None:
        fail(
            provider,
            ("tools", deferred_breakpoint, "cache_control"),
            "a tool with defer_loading=true cannot have cache_control; "
            "put the breakpoint on a non-deferred tool",
        )
    return set(names), breakpoints


def _check_tool_result(
    provider: str, block: dict[str, Any], path: Path, tool_use_ids: set[Any]
) -> None:
    """Pairing with the preceding assistant ``tool_use`` and the ``is_error`` text-only rule."""
    if block.get("tool_use_id") not in tool_use_ids:
        fail(
            provider,
            path,
            f"tool_result tool_use_id {short(block.get('tool_use_id'))} has no matching "
            "tool_use in the immediately preceding assistant message",
        )
    if block.get("is_error") is True:
        for k, item in _dicts(block.get("content")):
            if item.get("type") != "text":
                fail(
                    provider,
                    (*path, "content", k),
                    "all content must be type 'text' if 'is_error' is true "
                    f"(found {short(item.get('type'))})",
                )


def _check_breakpoints(provider: str, breakpoints: list[tuple[Path, Any]]) -> None:
    """At most 4 ``cache_control`` breakpoints; 1h TTLs must precede 5m ones (prefix order)."""
    if len(breakpoints) > MAX_CACHE_BREAKPOINTS:
        fail(
            provider,
            breakpoints[MAX_CACHE_BREAKPOINTS][0],
            f"too many cache_control breakpoints: {len(breakpoints)} "
            f"(at most {MAX_CACHE_BREAKPOINTS}; a top-level cache_control counts as one)",
        )
    first_5m: Path | None = None
    for path, control in breakpoints:
        ttl = control.get("ttl") if isinstance(control, dict) else None
        if ttl == "1h" and first_5m is not None:
            fail(
                provider,
                path,
                f"cache_control ttl '1h' after a 5m breakpoint at {format_path(first_5m)}; "
                "1h breakpoints must come before 5m ones",
            )
        if ttl != "1h" and first_5m is None:
            first_5m = path


def _check_responses(payload: dict[str, Any], provider: str) -> None:
    tools = payload.get("tools")
    _check_unique(provider, ("tools",), ((i, t.get("name")) for i, t in _dicts(tools)), "tool name")
    for i, tool in _dicts(tools):
        if tool.get("type") == "namespace":
            _check_unique(
                provider,
                ("tools", i, "tools"),
                ((j, t.get("name")) for j, t in _dicts(tool.get("tools"))),
                f"tool name in namespace {short(tool.get('name'))}",
            )
    # With server-side history the matching call lives in an earlier response.
    if payload.get("previous_response_id") or payload.get("conversation"):
        return
    items = payload.get("input")
    listed = items if isinstance(items, list) else []
    listed = list(items) if isinstance(items, tuple) else listed
    if not _INPUT_FACTS.scan(listed).problem:
        return
    _fail_on_input(payload, provider)


class _InputFacts:
    """What the Responses input rules need from the items scanned so far."""

    def __init__(self) -> None:
        self.calls = GrowingSet()  # function_call call_ids
        self.searches = GrowingSet()  # tool_search_call call_ids
        self.problem = False  # an output without its call


def _input_step(facts: _InputFacts, i: int, item: Any) -> None:
    if not isinstance(item, dict) or facts.problem:
        return
    kind, call_id = item.get("type"), item.get("call_id")
    if kind == "function_call":
        facts.calls.add(call_id)
    elif kind == "tool_search_call" and call_id is not None:
        facts.searches.add(call_id)
    elif kind == "function_call_output":
        facts.problem = call_id not in facts.calls
    elif kind == "tool_search_output" and item.get("execution") == "client":
        facts.problem = call_id is None or call_id not in facts.searches


_INPUT_FACTS = PrefixScan(_InputFacts, _input_step)


def _fail_on_input(payload: dict[str, Any], provider: str) -> None:
    """Fail on the first input problem, in document order."""
    calls: set[Any] = set()
    searches: set[Any] = set()
    for i, item in _dicts(payload.get("input")):
        kind, call_id = item.get("type"), item.get("call_id")
        if kind == "function_call":
            calls.add(call_id)
        elif kind == "tool_search_call" and call_id is not None:
            searches.add(call_id)
        elif kind == "function_call_output" and call_id not in calls:
            fail(
                provider,
                ("input", i),
                f"function_call_output call_id {short(call_id)} has no earlier function_call "
                "with that call_id",
            )
        elif (
            kind == "tool_search_output"
            and item.get("execution") == "client"
            and (call_id is None or call_id not in searches)
        ):
            fail(
                provider,
                ("input", i),
                f"client tool_search_output call_id {short(call_id)} has no earlier "
                "tool_search_call with that call_id",
            )


def _chat_tool_names(tools: Any) -> Iterator[tuple[int, Any]]:
    for i, tool in _dicts(tools):
        spec = tool.get(tool.get("type") or "function")
        if isinstance(spec, dict):
            yield i, spec.get("name")


class _ChatFacts:
    """What the chat message rules need from the messages scanned so far."""

    def __init__(self) -> None:
        self.call_ids = GrowingSet()  # assistant tool_calls ids
        self.problem = False  # an unpaired tool message or a carrier with a repeated name


def _chat_step(facts: _ChatFacts, i: int, msg: Any) -> None:
    if not isinstance(msg, dict) or facts.problem:
        return
    role = msg.get("role")
    if role == "assistant":
        facts.call_ids.update(tc.get("id") for _, tc in _dicts(msg.get("tool_calls")))
    elif role == "tool":
        facts.problem = msg.get("tool_call_id") not in facts.call_ids
    elif is_kimi_carrier(msg):  # checked for Kimi only, by the cold pass
        names = [n for _, n in _chat_tool_names(msg.get("tools")) if isinstance(n, str)]
        facts.problem = len(set(names)) < len(names)


_CHAT_FACTS = PrefixScan(_ChatFacts, _chat_step)


def _check_chat(payload: dict[str, Any], provider: str) -> None:
    _check_unique(provider, ("tools",), _chat_tool_names(payload.get("tools")), "function name")
    messages = payload.get("messages")
    listed = messages if isinstance(messages, list) else []
    listed = list(messages) if isinstance(messages, tuple) else listed
    if not _CHAT_FACTS.scan(listed).problem:
        return
    _fail_on_chat_messages(payload, provider)


def _fail_on_chat_messages(payload: dict[str, Any], provider: str) -> None:
    """Fail on the first message problem, in document order."""
    call_ids: set[Any] = set()
    for i, msg in _dicts(payload.get("messages")):
        role = msg.get("role")
        if role == "assistant":
            call_ids.update(tc.get("id") for _, tc in _dicts(msg.get("tool_calls")))
        elif role == "tool" and msg.get("tool_call_id") not in call_ids:
            fail(
                provider,
                ("messages", i),
                f"tool message tool_call_id {short(msg.get('tool_call_id'))} has no earlier "
                "assistant tool_calls[].id",
            )
        elif provider == "kimi" and is_kimi_carrier(msg):
            _check_unique(
                provider,
                ("messages", i, "tools"),
                _chat_tool_names(msg.get("tools")),
                "function name",
            )


SEMANTIC_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "anthropic": _check_anthropic,
    "openai-responses": _check_responses,
    "openai-chat": _check_chat,
    "kimi": _check_chat,
}
