"""Tool changes under the providers' own tool search keep the declared tools.

Anthropic's server search (`native-bm25` / `native-regex`) and OpenAI's hosted search declare
every registered tool; a removal or a redefinition is told where it happened (tool_removal /
tool_addition by value or by reference, a versioned name, a developer notice and an
`additional_tools` item), so `tools` stays what the earlier requests sent. The random
sequences are in test_tool_change_wire.py; these pin the shapes, the notes and the analyzer.
"""

from __future__ import annotations

from typing import Any

import pytest

from dtl_notebook import Session, SystemUpdate, Tool, ToolCall
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.context import model_context
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator.policies import Action, Answer, Call
from dtl_notebook.live.emulator.request_view import View
from dtl_notebook.wire import WireRequest, build_request
from tests.support.wire_requests import canon, strip_cache_control

PROPS = {"type": "object", "properties": {"text": {"type": "string"}}}
BY_VALUE = ("anthropic", "claude-opus-4-8", {"search": "native-bm25"})
BY_REFERENCE = (
    "anthropic",
    "claude-opus-4-8",
    {"search": "native-regex", "profile": {"tool_changes_by_value": False}},
)
HOSTED = ("openai-responses", "gpt-5.6", {"search": "hosted"})
LONG = " ".join(f"Rule {i}: check the input of every tool call twice." for i in range(600))


def _tool(name: str, version: int = 1) -> Tool:
    return Tool(
        name,
        description=f"The {name} tool, version {version}.",
        parameters=PROPS,
        execute=lambda text="", n=name, v=version: f"{n} v{v}: {text}",
    )


def _session(system: str = "You are careful.") -> Session:
    s = Session(
        system=system,
        tools=[_tool(n) for n in ("alpha", "beta", "gamma", "delta")],
        active=["tool_search", "alpha", "beta"],
        search="keyword",
    )
    s.user("Start.")
    return s


def _call(s: Session, name: str, call_id: str) -> None:
    s.assistant(tool_calls=[ToolCall(id=call_id, name=name, arguments={"text": "x"})])
    s.execute(s.pending_calls()[0])


def _tools(request: WireRequest) -> str:
    return canon(strip_cache_control(request.payload["tools"]))


def _build(s: Session, case: tuple[str, str, dict[str, Any]]) -> WireRequest:
    provider, model, options = case
    return build_request(s, provider, model, **options)


@pytest.mark.parametrize("case", [BY_VALUE, HOSTED], ids=["anthropic-by-value", "hosted"])
def test_a_removal_and_a_redefinition_leave_the_tools_as_they_were(case: Any) -> None:
    s = _session()
    _call(s, "alpha", "c0")
    before = _build(s, case)
    s.remove_tools(["alpha"])
    s.redefine_tool(_tool("beta", 2))
    after = _build(s, case)
    assert _tools(after) == _tools(before)
    assert [lp.kind for lp in after.load_points] == ["removal", "redefinition"]
    assert "resend" not in " ".join(after.notes)
    if case is BY_VALUE:
        assert after.betas == ["inline-tools-2026-09-15"]
        blocks = [b for m in after.payload["messages"][-2:] for b in m["content"]]
        assert [b["type"] for b in blocks] == ["tool_removal", "tool_removal", "tool_addition"]
        assert blocks[2]["tool"]["definition"]["description"] == "The beta tool, version 2."
    else:
        item = after.payload["input"][-1]
        assert item["type"] == "additional_tools"
        assert [t["name"] for t in item["tools"]] == ["beta__v2"]
        assert "tool_choice" not in after.payload  # it would have to name every deferred tool
        assert any("allowed_tools would have to name" in n for n in after.notes)


def test_by_reference_appends_the_versioned_definition_deferred_at_the_end() -> None:
    s = _session()
    before = _build(s, BY_REFERENCE)
    s.redefine_tool(_tool("beta", 2))
    after = _build(s, BY_REFERENCE)
    assert after.betas == ["mid-conversation-tool-changes-2026-07-01"]
    tools = after.payload["tools"]
    assert canon(strip_cache_control(tools[:-1])) == _tools(before)
    assert tools[-1]["name"] == "beta__v2" and tools[-1]["defer_loading"] is True
    blocks = after.payload["messages"][-1]["content"]
    assert [(b["type"], b["tool"]["name"]) for b in blocks] == [
        ("tool_removal", "beta"),
        ("tool_addition", "beta__v2"),
    ]
    assert after.aliases == {"beta__v2": "beta"}


def test_without_system_messages_the_change_is_told_in_text() -> None:
    s = _session()
    before = build_request(s, "anthropic", "claude-sonnet-4-6", search="native-bm25")
    s.remove_tools(["alpha"])
    after = build_request(s, "anthropic", "claude-sonnet-4-6", search="native-bm25")
    assert _tools(after) == _tools(before)  # soft removal: alpha stays declared
    assert "tool_removal" not in str(after.payload)
    assert "no longer available" in after.payload["messages"][-1]["content"][-1]["text"]


@pytest.mark.parametrize(
    "case",
    [BY_VALUE, HOSTED, ("anthropic", "claude-opus-4-8", {}), ("openai-responses", "gpt-5.6", {})],
    ids=["anthropic-native", "hosted", "anthropic-client", "responses-client"],
)
def test_a_withdrawn_tool_the_registry_dropped_stays_declared(case: Any) -> None:
    """An MCP server that drops a tool: the session withdraws it, then unregisters it. Its
    declaration stays (a tool_removal naming an undeclared tool is refused)."""
    s = _session()
    _call(s, "alpha", "c0")
    before = _build(s, case)
    s.remove_tools(["alpha"])
    s.registry.unregister("alpha")
    after = _build(s, case)
    assert _tools(after) == _tools(before)
    s.assistant("Ok.")
    s.user("Use alpha.")
    _call(s, "alpha", "c1")
    assert s.messages[-1].is_error  # refused locally, whatever the model does


def test_a_tool_offered_first_by_a_change_is_declared_and_the_note_says_what_it_costs() -> None:
    s = _session()
    before = _build(s, BY_VALUE)
    s.registry.register(_tool("epsilon"))
    s.set_active_tools(["tool_search", "alpha", "epsilon"])  # a swap: beta out, epsilon in
    after = _build(s, BY_VALUE)
    tools = after.payload["tools"]
    assert canon(strip_cache_control(tools[:-1])) == _tools(before)  # grown at the end
    assert tools[-1]["name"] == "epsilon" and tools[-1]["defer_loading"] is True
    blocks = after.payload["messages"][-1]["content"]
    assert blocks[-1] == {
        "type": "tool_addition",
        "tool": {"type": "tool_reference", "name": "epsilon"},
    }
    assert any("'epsilon'" in n and "expected to hold (unverified)" in n for n in after.notes)


@pytest.mark.parametrize("case", [BY_VALUE, BY_REFERENCE, HOSTED], ids=["value", "ref", "hosted"])
def test_the_model_context_and_the_analyzer_read_the_changes(case: Any) -> None:
    s = _session(LONG)  # over every model's shortest cacheable prompt
    _call(s, "alpha", "c0")
    analyzer = CacheAnalyzer(case[0])
    analyzer.add(_build(s, case), at=0.0)
    s.remove_tools(["alpha"])
    s.redefine_tool(_tool("beta", 2))
    request = _build(s, case)
    ctx = model_context(request)
    assert "alpha" in [seg.label for seg in ctx.segments if seg.kind == "tool_withdrawn"]
    entry = analyzer.add(request, at=1.0, context=ctx)
    kinds = [c.kind for c in entry.change_savings]
    assert kinds == ["removal", "redefinition"]
    # the tools stay, so the change costs less than a rewrite from the first changed tool
    assert all(c.actual_tokens < c.naive_tokens for c in entry.change_savings)


def _offer_epsilon(s: Session) -> None:
    """A tool registered mid-session, offered by a change (a swap: beta out, epsilon in)."""
    s.registry.register(_tool("epsilon"))
    s.set_active_tools(["tool_search", "alpha", "epsilon"])


def test_hosted_search_declares_a_tool_offered_later_where_the_change_happened() -> None:
    s = _session()
    before = _build(s, HOSTED)
    _offer_epsilon(s)
    after = _build(s, HOSTED)
    assert _tools(after) == _tools(before)  # epsilon is not among the registered tools
    notice, item = after.payload["input"][-2:]
    assert "Tools available from here on: epsilon" in notice["content"]
    assert item["type"] == "additional_tools" and item["role"] == "developer"
    assert [(t["name"], t.get("defer_loading")) for t in item["tools"]] == [("epsilon", None)]
    assert [lp.kind for lp in after.load_points] == ["removal"]  # the swap: one change
    assert not any("cache miss" in n for n in after.notes)
    s.assistant("Ok.")
    s.user("Again.")
    later = _build(s, HOSTED)  # it stays out of tools[], declared once in the history
    assert _tools(later) == _tools(before)
    assert str(later.payload["input"]).count("'additional_tools'") == 1


def test_hosted_search_offers_a_later_tool_the_model_can_see_and_call() -> None:
    s = _session(LONG)
    analyzer = CacheAnalyzer("openai-responses")
    analyzer.add(_build(s, HOSTED), at=0.0)
    _offer_epsilon(s)
    request = _build(s, HOSTED)
    ctx = model_context(request)
    loaded = [seg for seg in ctx.segments if seg.kind == "loaded_schema"]
    assert any('"epsilon"' in seg.text for seg in loaded)
    tools_end = max(i for i, seg in enumerate(ctx.segments) if seg.kind == "tool_schema")
    assert all(ctx.segments.index(seg) > tools_end for seg in loaded)  # at the change
    entry = analyzer.add(request, at=1.0, context=ctx)
    assert entry.cache_break is None and entry.cached_tokens > 0
    policy = CallIfVisible("epsilon")
    step = Agent(s, *HOSTED[:2], policy=policy, **HOSTED[2]).run("Use epsilon.").steps[0]
    assert policy.seen  # the emulated model sees it among its callable tools
    assert step.results[0].text == "epsilon v1: x" and not step.results[0].is_error


class CallIfVisible:
    """An emulated model that calls a tool once, where its context offers the tool."""

    name = "call-if-visible"

    def __init__(self, tool: str, arguments: dict[str, Any] | None = None) -> None:
        self.tool, self.seen, self.done = tool, False, False
        self.arguments = arguments if arguments is not None else {"text": "x"}

    def decide(self, view: View) -> Action:
        if self.done:
            return Answer("done")
        self.done = True
        self.seen = self.tool in {t.name for t in view.callable_tools()}
        return Call(self.tool, self.arguments) if self.seen else Answer("not offered")


def test_hosted_keeps_a_tool_registered_at_the_start_in_tools_when_a_change_offers_it() -> None:
    s = _session()  # gamma: registered from the start, declared deferred in tools[]
    before = _build(s, HOSTED)
    s.set_active_tools(["tool_search", "alpha", "gamma"])  # a swap: beta out, gamma in
    after = _build(s, HOSTED)
    assert _tools(after) == _tools(before)
    assert "additional_tools" not in str(after.payload["input"])  # no second declaration
    assert "Tools available from here on: gamma" in after.payload["input"][-1]["content"]


def _register_epsilon(s: Session) -> None:
    """A tool registered mid-session and nothing else: recorded at the next turn boundary."""
    s.assistant("Ok.")
    s.registry.register(_tool("epsilon"))
    s.user("Use epsilon.")


def test_hosted_declares_a_tool_registered_mid_session_where_it_was_recorded() -> None:
    s = _session(LONG)
    analyzer = CacheAnalyzer("openai-responses")
    before = _build(s, HOSTED)
    analyzer.add(before, at=0.0)
    _register_epsilon(s)
    update = s.messages[-2]
    assert isinstance(update, SystemUpdate) and update.tools_registered == ["epsilon"]
    assert not update.tools_added and "epsilon" not in s.active_tools  # searchable, not offered
    after = _build(s, HOSTED)
    assert _tools(after) == _tools(before)
    head = len(before.payload["input"])
    assert canon(after.payload["input"][:head]) == canon(before.payload["input"])
    item = after.payload["input"][-2]  # where the registration was recorded, before the turn
    assert item["type"] == "additional_tools" and item["role"] == "developer"
    assert [(t["name"], t.get("defer_loading")) for t in item["tools"]] == [("epsilon", None)]
    assert [(lp.kind, lp.tools) for lp in after.load_points] == [("load", ["epsilon"])]
    entry = analyzer.add(after, at=1.0, context=model_context(after))
    assert entry.cache_break is None and entry.cached_tokens > 0
    policy = CallIfVisible("epsilon")
    step = Agent(s, *HOSTED[:2], policy=policy, **HOSTED[2]).run("Again.").steps[0]
    assert policy.seen  # loaded at the registration: the emulated model may call it
    assert step.results[0].text == "epsilon v1: x" and not step.results[0].is_error


CLIENT_CASES = {
    "anthropic": ("anthropic", "claude-opus-4-8", {}),
    "anthropic-native": BY_VALUE,
    "responses": ("openai-responses", "gpt-5.6", {}),
    "responses-native-client": ("openai-responses", "gpt-5.6", {"search": "native-client"}),
    "hosted-without-additional-tools": (
        "openai-responses",
        "gpt-5.6",
        {"search": "hosted", "profile": {"additional_tools": False}},
    ),
    "chat": ("openai-chat", "gpt-5.4", {}),
    "kimi": ("kimi", "kimi-k2", {}),
}


@pytest.mark.parametrize("case", list(CLIENT_CASES.values()), ids=list(CLIENT_CASES))
def test_a_registration_only_update_writes_nothing_elsewhere(case: Any) -> None:
    """Every other provider and mode sends the same history as a session that registered
    nothing; client search sends the same request (its tool_search finds the new tool)."""
    s, plain = _session(), _session()
    before = _build(s, case)
    _register_epsilon(s)
    plain.assistant("Ok.")
    plain.user("Use epsilon.")
    after, control = _build(s, case), _build(plain, case)
    history = "messages" if "messages" in after.payload else "input"
    assert canon(strip_cache_control(after.payload[history])) == canon(
        strip_cache_control(control.payload[history])
    )
    kept = strip_cache_control(before.payload[history])
    assert canon(strip_cache_control(after.payload[history])[: len(kept)]) == canon(kept)
    if case[2].get("search") is None:  # client search: nothing else changes either
        assert canon(strip_cache_control(after.payload)) == canon(
            strip_cache_control(control.payload)
        )


def test_hosted_without_additional_tools_declares_a_later_tool_among_the_registered() -> None:
    s = _session()
    case = (
        "openai-responses",
        "gpt-5.6",
        {"search": "hosted", "profile": {"additional_tools": False}},
    )
    before = _build(s, case).payload["tools"]
    _offer_epsilon(s)
    after = _build(s, case)
    tools = after.payload["tools"]
    # the registered tools, epsilon after them (deferred), then the hosted search
    assert canon(strip_cache_control(tools[:-2])) == canon(strip_cache_control(before[:-1]))
    assert tools[-2]["name"] == "epsilon" and tools[-2]["defer_loading"] is True
    assert tools[-1] == {"type": "tool_search"}
    assert "additional_tools" not in str(after.payload["input"])  # declared once
    assert "Tools available from here on: epsilon" in after.payload["input"][-1]["content"]
    assert any("'epsilon'" in n and "cache miss from that tool on" in n for n in after.notes)


@pytest.mark.parametrize("case", [BY_VALUE, BY_REFERENCE, HOSTED], ids=["value", "ref", "hosted"])
def test_the_view_marks_the_removal_and_the_redefinition(case: Any) -> None:
    from dtl_notebook.notebook.panes import Bodies
    from dtl_notebook.notebook.records import from_request
    from dtl_notebook.notebook.request_pane import request_pane

    s = _session()
    _call(s, "alpha", "c0")
    s.remove_tools(["alpha"])
    s.redefine_tool(_tool("beta", 2))
    record = from_request(_build(s, case))
    html = request_pane(record, Bodies(record, lazy=False))
    assert "removal: - alpha" in html and "redefinition: redefined beta" in html


def test_hosted_without_additional_tools_appends_the_versioned_definition_last() -> None:
    s = _session()
    case = (
        "openai-responses",
        "gpt-5.6",
        {"search": "hosted", "profile": {"additional_tools": False}},
    )
    before = _build(s, case).payload["tools"]
    s.redefine_tool(_tool("beta", 2))
    after = _build(s, case)
    tools = after.payload["tools"]
    assert canon(strip_cache_control(tools[:-1])) == canon(strip_cache_control(before))
    assert tools[-1]["name"] == "beta__v2" and tools[-1]["description"].endswith("version 2.")
    assert "additional_tools" not in str(after.payload["input"])
    assert after.aliases == {"beta__v2": "beta"}
    assert any("takes no additional_tools" in n for n in after.notes)
