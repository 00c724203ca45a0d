"""Cache-break causes are stable codes with their words kept apart; diff ops are typed."""

from __future__ import annotations

from typing import get_args

from dtl_notebook import Session, Tool
from dtl_notebook.cache import BreakCause, analyze
from dtl_notebook.cache.causes import MESSAGES, PARTS, message
from dtl_notebook.cache.diagnostics import cause_part, provider_reason
from dtl_notebook.cache.explain import CacheBreak, DiffKind
from dtl_notebook.wire import build_request

MODEL = "claude-sonnet-4-6"


def test_every_cause_has_words_and_a_code_that_is_its_str() -> None:
    assert set(MESSAGES) == set(BreakCause)
    for cause in BreakCause:
        assert str(cause) == cause.value == f"{cause}"
        assert cause.value.isidentifier() and cause.value.islower()
        assert message(cause).strip()
    assert set(PARTS) <= set(BreakCause)


def test_a_break_shows_its_words_and_compares_by_code() -> None:
    brk = CacheBreak(BreakCause.TOOL_SET_CHANGED, "tools[2]", ["+get_weather"])
    assert brk.cause == "tool_set_changed" and brk.message == "tool set changed in the prefix"
    assert str(brk) == "tool set changed in the prefix (+get_weather) at tools[2]"
    assert cause_part(brk.cause) == "tools"
    assert provider_reason("anthropic", brk.cause) == "tools_changed"
    assert cause_part(BreakCause.EXPIRED) is None


def _tool(name: str) -> Tool:
    return Tool(name, description=f"The {name} tool. " * 40, parameters={"type": "object"})


def test_real_breaks_carry_codes_and_typed_diff_ops() -> None:
    s = Session(system="You help. " * 300, tools=[_tool("a"), _tool("b")], search=None)
    s.user("hi")
    first = build_request(s, "anthropic", MODEL)
    s.set_active_tools(["b", "a"])
    s.user("again")
    second = build_request(s, "anthropic", MODEL)
    s.prompt["rules"] = "Answer in French."
    third = build_request(s, "anthropic", MODEL)
    report = analyze([first, second, third])
    causes = [e.cache_break.cause for e in report if e.cache_break]
    assert causes and all(isinstance(c, BreakCause) for c in causes)
    for entry in report:
        for op in entry.cache_break.diff if entry.cache_break else []:
            assert op.op in get_args(DiffKind)
