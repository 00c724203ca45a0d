"""Cache-break causes are stable codes, each one row of `data/causes.json` (words, part,
severity, fix per model capability); diff ops are typed."""

from __future__ import annotations

from typing import Any, get_args

from dtl_notebook import Session, Tool
from dtl_notebook.cache import BreakCause, analyze
from dtl_notebook.cache.codes import CODES, capabilities, code
from dtl_notebook.cache.diagnostics import cause_part, provider_reason
from dtl_notebook.cache.explain import CacheBreak, DiffKind
from dtl_notebook.wire import build_request

MODEL = "claude-sonnet-4-6"
EPH = {"type": "ephemeral"}
JSON = dict[str, Any]


def test_every_cause_is_one_row_with_words_and_a_code_that_is_its_str() -> None:
    assert {c for c, row in CODES.items() if row.kind == "break"} == set(BreakCause)
    for cause in BreakCause:
        assert str(cause) == cause.value == f"{cause}"
        assert cause.value.isidentifier() and cause.value.islower()
        assert code(cause).message.strip() and code(cause).fix.strip()
    assert all(row.part is None for row in CODES.values() if row.kind != "break")


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


def test_the_rows_name_the_figures_the_rules_apply() -> None:
    from dtl_notebook.wire.cache_limits import LOOKBACK_BLOCKS, MAX_CACHE_BREAKPOINTS

    for name in ("breakpoint_out_of_lookback", "lookback_exceeded"):
        assert f"{LOOKBACK_BLOCKS} blocks" in code(name).fix
    assert (
        f"more than {MAX_CACHE_BREAKPOINTS} cache breakpoints"
        in code("too_many_breakpoints").message
    )
    assert not any("{" in row.message + row.fix for row in CODES.values())


def _system_break(model: str) -> CacheBreak:
    s = Session(system="You help. " * 300, tools=[_tool("a")], search=None)
    s.user("hi")
    first = build_request(s, "anthropic", model)
    s.prompt["rules"] = "Answer in French."
    s.user("again")
    report = analyze([first, build_request(s, "anthropic", model)])
    brk = report[1].cache_break
    assert brk is not None and brk.cause == BreakCause.SYSTEM_CHANGED
    return brk


def test_a_system_change_is_fixed_the_way_the_model_can_take() -> None:
    from dtl_notebook.cache.lint import lint
    from dtl_notebook.notebook.marks import break_html

    # claude-sonnet-4-6 takes no mid-conversation system messages; claude-opus-4-8 does
    plain = _system_break(MODEL)
    # on claude-opus-4-8 the session appends a system message (no break): a rewrite would be
    able = CacheBreak(
        BreakCause.SYSTEM_CHANGED, capabilities=capabilities("anthropic", "claude-opus-4-8")
    )
    assert "system message" in able.fix and able.fix == code("system_changed").fixes[0][1]
    assert "append a system message" not in plain.fix
    assert plain.fix == code("system_changed").fix
    assert f"fix: {plain.fix}" in break_html(plain).replace("&#x27;", "'")
    body = {
        "model": MODEL,
        "max_tokens": 16,
        "system": "Deferred tools (search before use):\n- a: reads",
        "messages": [{"role": "user", "content": "hi"}],
    }
    (catalog,) = [f for f in lint(body, "anthropic") if f.code == "catalog_in_prefix"]
    assert "as a mid-conversation system message" not in catalog.fix
    assert "next user message" in catalog.fix and catalog.to_dict()["fix"] == catalog.fix
    (catalog,) = [
        f
        for f in lint({**body, "model": "claude-opus-4-8"}, "anthropic")
        if f.code == "catalog_in_prefix"
    ]
    assert "mid-conversation system message" in catalog.fix


def test_a_thinking_budget_change_is_its_own_cause() -> None:
    def body(budget: int, messages: list[JSON]) -> JSON:
        return {
            "model": MODEL,
            "max_tokens": 8000,
            "thinking": {"type": "enabled", "budget_tokens": budget},
            "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"}}],
            "system": [{"type": "text", "text": "You help. " * 400, "cache_control": EPH}],
            "messages": messages,
        }

    def user(text: str, marked: bool) -> JSON:
        block = {"type": "text", "text": text, **({"cache_control": EPH} if marked else {})}
        return {"role": "user", "content": [block]}

    later: list[JSON] = [
        user("hi " * 300, False),
        {"role": "assistant", "content": "yo"},
        user("ok", True),
    ]
    first, second = body(1024, [user("hi " * 300, True)]), body(4096, later)
    report = analyze([first, second, second], provider="anthropic")
    brk = report[1].cache_break
    assert brk is not None and brk.cause == BreakCause.THINKING_BUDGET_CHANGED
    assert brk.where == "thinking.budget_tokens" and brk.involved == ["1024 → 4096"]
    assert code(brk.cause).invalidates == ("messages",)
    assert report[1].cached_tokens > 0 and report[2].cache_break is None  # tools, system kept
    off = analyze([first, {**second, "thinking": {"type": "disabled"}}], provider="anthropic")
    assert off[1].cache_break is not None
    assert off[1].cache_break.cause == BreakCause.THINKING_CHANGED


def test_reasoning_dropped_at_a_new_user_message_is_expected_and_says_what_helps() -> None:
    """OpenAI drops an earlier turn's reasoning at the next user message: the prefix cached
    ends at the reasoning item, and that is no edit of the user's."""
    from dtl_notebook.cache.findings import break_finding
    from dtl_notebook.notebook.marks import break_html

    reasoning: JSON = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Look it up first."}],
        "encrypted_content": "QUJD" * 400,
    }
    loop: list[JSON] = [
        {"role": "user", "content": "Weather in Paris?"},
        reasoning,
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]
    answer: JSON = {"role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]}

    def body(items: list[JSON]) -> JSON:
        return {"model": "gpt-5.4", "instructions": "You help. " * 600, "input": items}

    report = analyze(
        [body(loop), body([*loop, answer, {"role": "user", "content": "And Rome?"}])],
        provider="openai-responses",
    )
    brk = report[1].cache_break
    assert brk is not None and brk.cause == BreakCause.REASONING_DROPPED
    assert brk.where == "input.1" and brk.expected
    assert code(brk.cause).severity == "info"
    assert "previous_response_id" in brk.fix and "encrypted_content" in brk.fix
    assert "never edit" not in brk.fix
    finding = break_finding(brk, 1).to_dict()
    assert finding["expected"] is True and finding["fix"] == brk.fix
    html = break_html(brk)
    assert "Expected cache break" in html and "rgba(255, 72, 72" not in html  # grey, not red


def test_the_rows_ship_with_the_package() -> None:
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["dtl_notebook"]
    assert any(fnmatch.fnmatch("cache/data/causes.json", g) for g in globs)


def test_thinking_stripped_at_a_new_user_message_is_the_same_expected_cause() -> None:
    """Anthropic strips an earlier turn's thinking on models that do not keep it
    (claude-sonnet-4-5); a model that keeps it (claude-sonnet-4-6) has no break."""
    thinking = {"type": "thinking", "thinking": "Let me call f. " * 50, "signature": "sig"}
    call = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    result: JSON = {"type": "tool_result", "tool_use_id": "t1", "content": "done"}
    loop: list[JSON] = [
        {"role": "user", "content": "Go"},
        {"role": "assistant", "content": [thinking, call]},
    ]
    later: list[JSON] = [
        *loop,
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": [{"type": "text", "text": "Finished."}]},
        {"role": "user", "content": [{"type": "text", "text": "Next?", "cache_control": EPH}]},
    ]

    def causes(model: str) -> list[BreakCause | None]:
        def body(messages: list[JSON]) -> JSON:
            return {
                "model": model,
                "max_tokens": 8000,
                "thinking": {"type": "enabled", "budget_tokens": 2000},
                "tools": [{"name": "f", "description": "d " * 600, "input_schema": {}}],
                "system": [{"type": "text", "text": "You help. " * 400}],
                "messages": messages,
            }

        marked = [*loop, {"role": "user", "content": [{**result, "cache_control": EPH}]}]
        report = analyze([body(marked), body(later)], provider="anthropic")
        return [e.cache_break.cause if e.cache_break else None for e in report]

    assert causes("claude-sonnet-4-5") == [None, BreakCause.REASONING_DROPPED]
    assert causes("claude-sonnet-4-6") == [None, None]
    brk = CacheBreak(
        BreakCause.REASONING_DROPPED, capabilities=capabilities("anthropic", "claude-sonnet-4-5")
    )
    assert "thinking blocks" in brk.fix and "previous_response_id" not in brk.fix
