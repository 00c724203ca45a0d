"""Rules of OpenAI Responses input and of Chat Completions (and Kimi) messages.

Each is a step of a resumable scan that records the first :class:`~.problems.Problem`, as in
`wire.rules`: a turn costs the items it adds, and the verdict is that of a whole scan.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dtl_notebook._reuse.prefix import GrowingMap, GrowingSet, PrefixScan
from dtl_notebook.wire.problems import Problem, as_list, dict_items, first_duplicate, raise_first
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.rules import is_kimi_carrier
from dtl_notebook.wire.shape_errors import format_path, short


def check_responses(payload: dict[str, Any], provider: str) -> None:
    tools = payload.get("tools")
    raise_first(provider, _TOOL_FACTS.scan(as_list(tools)).problem)
    # With server-side history the matching call lives in an earlier response
    # (https://platform.openai.com/docs/guides/conversation-state).
    if payload.get("previous_response_id") or payload.get("conversation"):
        return
    raise_first(provider, _INPUT_FACTS.scan(as_list(payload.get("input"))).problem)


class _ToolFacts:
    """Where each tool name came first (a map that shares its bulk when copied), and the
    first problem: a duplicate name, or one inside a namespace."""

    __slots__ = ("first", "problem")

    def __init__(self) -> None:
        self.first = GrowingMap()
        self.problem: Problem | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _ToolFacts:
        copied = _ToolFacts()
        copied.first, copied.problem = self.first.__deepcopy__(memo), self.problem
        return copied


def _tool_step(facts: _ToolFacts, index: int, tool: Any) -> None:
    if facts.problem is not None or not isinstance(tool, dict):
        return
    name = tool.get("name")
    if isinstance(name, str):
        if name in facts.first:
            where = format_path(("tools", facts.first.get(name)))
            facts.problem = Problem(
                ("tools", index), f"duplicate tool name {name!r} (first at {where})"
            )
            return
        facts.first.add(name, index)
    if tool.get("type") == "namespace":
        members = ((j, t.get("name")) for j, t in dict_items(tool.get("tools")))
        what = f"tool name in namespace {short(tool.get('name'))}"
        facts.problem = first_duplicate(("tools", index, "tools"), members, what)


_TOOL_FACTS = PrefixScan(_ToolFacts, _tool_step)
# a native or hosted search body declares every registered tool: resumed over the tools a
# request shares with the last one


class _InputFacts:
    """What the Responses input rules need from the items scanned so far, and the first
    problem."""

    __slots__ = ("calls", "problem", "searches")

    def __init__(self) -> None:
        self.calls = GrowingSet()  # function_call call_ids
        self.searches = GrowingSet()  # tool_search_call call_ids
        self.problem: Problem | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _InputFacts:
        copied = _InputFacts()
        copied.calls = self.calls.__deepcopy__(memo)
        copied.searches = self.searches.__deepcopy__(memo)
        copied.problem = self.problem
        return copied


def _input_step(facts: _InputFacts, i: int, item: Any) -> None:
    if not isinstance(item, dict) or facts.problem is not None:
        return
    kind, call_id = item.get("type"), item.get("call_id")
    if kind == "function_call":
        facts.calls.add(call_id)
    elif kind == "tool_search_call" and call_id is not None:
        facts.searches.add(call_id)
    # https://platform.openai.com/docs/guides/function-calling: an output answers an earlier call
    elif kind == "function_call_output" and call_id not in facts.calls:
        facts.problem = Problem(
            ("input", i),
            f"function_call_output call_id {short(call_id)} has no earlier function_call "
            "with that call_id",
        )
    # https://platform.openai.com/docs/guides/tools-tool-search: a client-executed search
    # output pairs with the model's tool_search_call by call_id
    elif (
        kind == "tool_search_output"
        and item.get("execution") == "client"
        and (call_id is None or call_id not in facts.searches)
    ):
        facts.problem = Problem(
            ("input", i),
            f"client tool_search_output call_id {short(call_id)} has no earlier "
            "tool_search_call with that call_id",
        )


_INPUT_FACTS = PrefixScan(_InputFacts, _input_step)


# -- Chat Completions and Kimi ----------------------------------------------------------------


def _chat_tool_names(tools: Any) -> Iterator[tuple[int, Any]]:
    for i, tool in dict_items(tools):
        spec = tool.get(tool.get("type") or "function")
        if isinstance(spec, dict):
            yield i, spec.get("name")


class _ChatFacts:
    """What the chat message rules need from the messages scanned so far, and the first
    problem."""

    __slots__ = ("call_ids", "problem")

    def __init__(self) -> None:
        self.call_ids = GrowingSet()  # assistant tool_calls ids
        self.problem: Problem | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _ChatFacts:
        copied = _ChatFacts()
        copied.call_ids, copied.problem = self.call_ids.__deepcopy__(memo), self.problem
        return copied


def _chat_step(facts: _ChatFacts, i: int, msg: Any, carriers: bool = False) -> None:
    """The chat rules at message `i`; `carriers`: also Kimi's tool-bearing system messages."""
    if not isinstance(msg, dict) or facts.problem is not None:
        return
    role = msg.get("role")
    if role == "assistant":
        facts.call_ids.update(tc.get("id") for _, tc in dict_items(msg.get("tool_calls")))
    # https://platform.openai.com/docs/api-reference/chat/create: a tool message answers an
    # earlier assistant tool_calls[].id
    elif role == "tool" and msg.get("tool_call_id") not in facts.call_ids:
        facts.problem = Problem(
            ("messages", i),
            f"tool message tool_call_id {short(msg.get('tool_call_id'))} has no earlier "
            "assistant tool_calls[].id",
        )
    elif carriers and is_kimi_carrier(msg):  # Kimi: the functions a system message declares
        names = _chat_tool_names(msg.get("tools"))
        facts.problem = first_duplicate(("messages", i, "tools"), names, "function name")


def _carrier_step(facts: _ChatFacts, i: int, msg: Any) -> None:
    _chat_step(facts, i, msg, carriers=True)


# one scan per kind of Chat body, by the table's `carries_tools` (Kimi's tool carriers)
_CHAT_FACTS = {
    False: PrefixScan(_ChatFacts, _chat_step),
    True: PrefixScan(_ChatFacts, _carrier_step),
}


def check_chat(payload: dict[str, Any], provider: str) -> None:
    named = _chat_tool_names(payload.get("tools"))
    raise_first(provider, first_duplicate(("tools",), named, "function name"))
    raise_first(
        provider,
        _CHAT_FACTS[spec(provider).carries_tools].scan(as_list(payload.get("messages"))).problem,
    )
