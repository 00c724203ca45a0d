"""The plan resumed from the previous request equals a plan made from scratch.

`wire.planning.plan` resumes the split and the load points over the messages a transcript
gained since the last plan; wherever a new message could change an earlier decision it plans
from scratch. Random transcripts with hand-written markers and error results (including ones
that change an earlier decision) check every plan against a cold one.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, ToolCall
from dtl_notebook._reuse import disabled
from dtl_notebook.agent.messages import (
    AssistantMessage,
    SystemUpdate,
    TextPart,
    ToolCallPart,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.wire.planning import plan
from dtl_notebook.wire.request import Plan
from tests.cache.test_incremental_turns import _tool

NAMES = [_tool(i).name for i in range(6)]
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(0, 5)),
        st.tuples(st.just("call"), st.integers(0, 5)),
        st.tuples(st.just("marker"), st.integers(0, 5)),
        st.tuples(st.just("error"), st.integers(0, 5)),
        st.tuples(st.just("section"), st.integers(0, 5)),
        st.tuples(st.just("deactivate"), st.integers(0, 5)),
        st.tuples(st.just("replace"), st.integers(0, 5)),
    ),
    min_size=1,
    max_size=25,
)


def _facts(the_plan: Plan) -> tuple[Any, ...]:
    loads = {i: [s.model_dump() for s in specs] for i, specs in the_plan.loads.items()}
    return (
        [t.name for t in the_plan.split.immediate],
        list(the_plan.split.deferred),
        the_plan.system,
        the_plan.first,
        loads,
        {n: t.model_dump() for n, t in the_plan.redefined.items()},
        the_plan.notes,
        the_plan.order,
        {n: t.model_dump() for n, t in the_plan.retired.items()},
        len(the_plan.messages),
    )


def _session(tools: int) -> Session:
    session = Session(system="You help.", tools=[_tool(i) for i in range(tools)])
    session.set_active_tools([*session.active_tools, *NAMES[:tools]])
    return session


def _step(session: Session, kind: str, value: int, step: int) -> None:
    name = NAMES[value]
    if kind == "user":
        session.messages.append(UserMessage(content=[TextPart(text=f"step {step}")]))
    elif kind == "call":  # a call, answered later by a marker or an error result
        call = ToolCall(id=f"c{value}", name=name, arguments={})
        session.messages.append(AssistantMessage(content=[ToolCallPart(call=call)]))
    elif kind == "marker":  # a result that loads `name` (it may have been used before)
        session.messages.append(
            ToolResultMessage(
                call_id=f"m{step}",
                content=[TextPart(text="loaded")],
                added_tool_names=[name],
                added_tools=[session.registry[name].spec()],
            )
        )
    elif kind == "error":  # an error result for the call `c{value}`, made or not
        session.messages.append(
            ToolResultMessage(call_id=f"c{value}", content=[TextPart(text="no")], is_error=True)
        )
    elif kind == "section":
        session.messages.append(SystemUpdate(sections={"notes": f"note {step}"}))
    elif kind == "deactivate":
        session.set_active_tools(n for n in session.active_tools if n != name)
    elif kind == "replace" and session.messages:
        index = value % len(session.messages)
        session.messages[index] = session.messages[index].model_copy()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_resumed_plan_equals_cold_plan(steps: list[tuple[str, int]]) -> None:
    session = _session(6)
    for step, (kind, value) in enumerate(steps):
        _step(session, kind, value, step)
        warm = plan(session)
        with disabled():
            cold = plan(session)
        assert _facts(warm) == _facts(cold)


def test_a_later_marker_or_error_changes_an_earlier_decision() -> None:
    """A marker for a tool used earlier does not defer it; an error result for that use makes
    the earlier marker defer it after all, which a resumed plan must not miss."""
    session = _session(3)
    name = NAMES[1]
    session.user("go")
    _step(session, "call", 1, 1)
    _step(session, "marker", 1, 2)
    marker = len(session.messages) - 1
    assert name not in plan(session).split.deferred
    _step(session, "error", 1, 3)  # the call failed: it was never a use
    resumed = plan(session)
    with disabled():
        cold = plan(session)
    assert name in resumed.split.deferred and _facts(resumed) == _facts(cold)
    assert [s.name for s in resumed.loads[marker]] == [name]
