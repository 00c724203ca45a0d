"""What the native and hosted tool lists read from the transcript (called names, tools the
provider's search loaded) is folded over the new messages only, and always equals a fold
over the whole transcript: after appends, replaced messages and a second session."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook.agent.messages import (
    AssistantMessage,
    NativeBlock,
    NativePart,
    SystemUpdate,
    ToolCall,
    ToolCallPart,
)
from dtl_notebook.agent.sections import replay_sections
from dtl_notebook.agent.session import Session
from dtl_notebook.wire import anthropic, responses
from dtl_notebook.wire.planning import plan

NAMES = ["get_order", "track", "refund", "weather"]


def _assistant(kind: int, name: str) -> AssistantMessage:
    """A reply calling `name` (kind 0), or carrying an Anthropic (1) or OpenAI (2) search
    result that loaded it."""
    if kind == 0:
        call = ToolCall(id=f"c_{name}", name=name, arguments={})
        return AssistantMessage(content=[ToolCallPart(call=call)])
    if kind == 1:
        data: dict[str, Any] = {
            "type": "tool_search_tool_result",
            "tool_use_id": "srv_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": name}],
            },
        }
        return AssistantMessage(
            content=[NativePart(block=NativeBlock(provider="anthropic", data=data))]
        )
    data = {
        "type": "tool_search_output",
        "call_id": "ts_1",
        "execution": "server",
        "status": "completed",
        "tools": [{"type": "function", "name": name, "parameters": {}, "strict": None}],
    }
    block = NativeBlock(provider="openai-responses", data=data)
    return AssistantMessage(content=[NativePart(block=block)])


def _loaded_by(messages: list[Any], provider: str) -> list[str]:
    """The names `provider`'s search loaded, in first-seen order, from the whole transcript."""
    names: list[str] = []
    for message in messages:
        for part in message.content if isinstance(message, AssistantMessage) else []:
            if isinstance(part, NativePart) and part.block.provider == provider:
                data = part.block.data
                if provider == "anthropic":
                    refs = data["content"]["tool_references"]
                    names += [r["tool_name"] for r in refs]
                else:
                    names += [t["name"] for t in data["tools"]]
    return list(dict.fromkeys(names))


STEP = st.tuples(
    st.sampled_from(["append", "append", "append", "replace"]),
    st.integers(0, 2),
    st.sampled_from(NAMES),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=12))
def test_folds_resumed_over_a_grown_transcript_equal_whole_folds(
    steps: list[tuple[str, int, str]],
) -> None:
    session, twin = Session(), Session()
    for action, kind, name in steps:
        message = _assistant(kind, name)
        if action == "replace" and session.messages:
            session.messages[len(session.messages) // 2] = message  # a rewrite
        else:
            session.messages.append(message)
        twin.messages.append(message)  # another transcript, scanned in between
        for current in (session, twin):
            the_plan = plan(current)
            calls = anthropic._CALLS.scan(the_plan)
            messages = list(current.messages)
            assert list(calls.loaded) == _loaded_by(messages, "anthropic")
            assert calls.used == {
                c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls
            }
            hosted = responses._HOSTED_LOADED.scan(the_plan)
            assert list(hosted) == _loaded_by(messages, "openai-responses")


UPDATE = st.tuples(
    st.sampled_from(["append", "append", "replace", "assign"]),
    st.sampled_from(["preamble", "tools", "catalog"]),
    st.one_of(st.none(), st.sampled_from(["a", "b"])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(UPDATE, min_size=1, max_size=12))
def test_held_sections_resume_and_equal_a_whole_replay(
    steps: list[tuple[str, str, str | None]],
) -> None:
    session = Session()
    for action, name, text in steps:
        update = SystemUpdate(sections={name: text})
        if action == "replace" and session.messages:
            session.messages[0] = update
        elif action == "assign":
            session.messages = [*session.messages, update]
        else:
            session.messages.append(update)
        assert session.held_sections() == replay_sections(list(session.messages))
        session.held_sections()["preamble"] = "edited"  # a copy: the memo is not touched
        assert session.held_sections() == replay_sections(list(session.messages))
