"""Tool changes on the wire: removals, re-additions and redefinitions keep the longest prefix.

For random sequences of changes, every provider and capability (by value, by reference, soft
removal in system messages or in user text, allowed_tools, carriers): consecutive requests
extend each other (history items are a byte prefix, the top-level tools only grow at their end,
and where the model can express the change in place the non-deferred tools never change);
every body validates strictly against the SDK types (build_request validates, beta types
where a beta is used). A call to a withdrawn tool is refused locally, through the Agent loop
and the emulator, on every provider.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.context import model_context
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator.policies import Action, Answer, Call
from dtl_notebook.live.emulator.request_view import View
from dtl_notebook.wire import WireRequest, build_request
from tests.support.wire_requests import canon, strip_cache_control

PROPS = {"type": "object", "properties": {"text": {"type": "string"}}}
NAMES = ["alpha", "beta", "gamma", "delta"]

# (provider, model, options, whether every change is expressed without touching the tools)
MODES: dict[str, tuple[str, str, dict[str, Any], bool]] = {
    "anthropic-by-value": ("anthropic", "claude-opus-4-8", {}, True),
    "anthropic-by-reference": (
        "anthropic",
        "claude-opus-4-8",
        {"profile": {"tool_changes_by_value": False}},
        True,
    ),
    "anthropic-soft-system": ("anthropic", "claude-sonnet-5-5", {}, False),
    "anthropic-soft-text": ("anthropic", "claude-sonnet-4-6", {}, False),
    "anthropic-explicit": ("anthropic", "claude-fable-5-1", {"cache": "explicit"}, True),
    "responses-5.4": ("openai-responses", "gpt-5.4", {}, True),
    "responses-5.6": ("openai-responses", "gpt-5.6", {}, True),
    "responses-search": ("openai-responses", "gpt-5.6", {"load_mode": "tool_search"}, True),
    "responses-full": ("openai-responses", "gpt-5.6", {"load_mode": "full_list"}, False),
    "chat": ("openai-chat", "gpt-5.4", {}, False),
    "chat-allowed": ("openai-chat", "gpt-5.4", {"profile": {"allowed_tools": True}}, False),
    "kimi": ("kimi", "kimi-k2", {}, True),
    # the providers' own tool search: every registered tool declared, changes told in place
    "anthropic-native-bm25": ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}, True),
    "anthropic-native-regex-by-reference": (
        "anthropic",
        "claude-opus-4-8",
        {"search": "native-regex", "profile": {"tool_changes_by_value": False}},
        True,
    ),
    "anthropic-native-soft": ("anthropic", "claude-sonnet-4-6", {"search": "native-bm25"}, False),
    "responses-hosted": ("openai-responses", "gpt-5.6", {"search": "hosted"}, True),
    "responses-hosted-5.4": ("openai-responses", "gpt-5.4", {"search": "hosted"}, True),
    "responses-native-client": ("openai-responses", "gpt-5.6", {"search": "native-client"}, True),
}
CASES = [pytest.param(*m[:3], id=name) for name, m in MODES.items()]
# native search declares every registered tool from the start, and there (by value, or
# with additional_tools) every change is told in the messages: the tools never change, but
# under OpenAI's hosted search a withdrawn deferred tool leaves them (or the search could load
# it again); Anthropic keeps it (a removal names it: it must stay declared)
FIXED_TOOLS = {"anthropic-native-bm25", "responses-hosted"}
DROPS_WITHDRAWN = {m for m in MODES if m.startswith("responses-hosted")}
# that holds under OpenAI's hosted search for a tool registered mid-session too, offered by a
# change or not (declared where its registration was recorded, in additional_tools);
# Anthropic's server search declares it among the registered tools (before versioned names
# declared at the end): its rendered prompt leaves deferred definitions out until they are
# loaded, so only the request bytes change there (wire/native_changes.py's growth note)
GROWS_AMONG_REGISTERED = {m for m in MODES if m.startswith("anthropic-native")}


def _tool(name: str, version: int = 1) -> Tool:
    return Tool(
        name,
        description=f"The {name} tool, version {version}.",
        parameters=PROPS,
        execute=lambda text="", n=name, v=version: f"{n} v{v}: {text}",
    )


def _session() -> Session:
    tools = [_tool(n) for n in NAMES]
    tools.append(Tool("loader", description="Loads tools", parameters=PROPS, execute=lambda: "ok"))
    return Session(
        system="You are careful.",
        tools=tools,
        active=["tool_search", "loader", "alpha", "beta"],
        search="keyword",
    )


ops = st.lists(
    st.tuples(
        st.sampled_from(
            ["remove", "readd", "redefine", "load", "call", "user", "offer", "register"]
        ),
        st.sampled_from(NAMES),
    ),
    min_size=1,
    max_size=12,
)


class Player:
    """Plays the changes and serializes the session in every mode at every model call."""

    def __init__(self) -> None:
        self.session = _session()
        self.requests: dict[str, list[WireRequest]] = {m: [] for m in MODES}
        self.calls = 0
        self.versions = dict.fromkeys(NAMES, 1)
        self.registered: set[int] = set()  # requests made right after a tool was registered
        self.removed: set[str] = set()  # every tool withdrawn at some point

    def model_call(self) -> None:
        for mode, (provider, model, options, _) in MODES.items():
            self.requests[mode].append(build_request(self.session, provider, model, **options))

    def _call(self, name: str) -> None:
        self.calls += 1
        call = ToolCall(id=f"c{self.calls}", name=name, arguments={"text": "x"})
        self.session.assistant(tool_calls=[call])
        self.session.execute(call)

    def step(self, op: str, name: str) -> None:
        s = self.session
        if op == "remove" and name in s.active_tools:
            s.remove_tools([name])
            self.removed.add(name)
        elif op == "readd" and name not in s.active_tools and s.timeline().events(name):
            s.set_active_tools([*s.active_tools, name])
        elif op == "redefine" and name in s.active_tools:
            self.versions[name] += 1
            s.redefine_tool(_tool(name, self.versions[name]))
        elif op == "load" and name not in s.active_tools and not s.timeline().events(name):
            self.calls += 1
            call = ToolCall(id=f"c{self.calls}", name="loader")
            s.assistant(tool_calls=[call])
            s.tool_result(call.id, "loaded", added_tool_names=[name])
        elif op == "offer" and name in s.active_tools:  # a new tool swapped in for `name`
            fresh = _tool(f"{name}_new{len(self.registered)}")
            s.registry.register(fresh)
            s.set_active_tools([*(n for n in s.active_tools if n != name), fresh.name])
            self.removed.add(name)
            self.registered.add(len(self.requests["chat"]))
        elif op == "register":  # a new tool enters the registry only (an MCP server adds one)
            s.assistant("Done.")
            s.registry.register(_tool(f"{name}_reg{len(self.registered)}"))
            s.user("Next task.")
            self.registered.add(len(self.requests["chat"]))
        elif op == "call":
            self._call(name)
        elif op == "user":
            s.assistant("Done.")
            s.user("Next task.")
        else:
            return
        self.model_call()


def _is_prefix(before: list[Any], after: list[Any]) -> bool:
    before, after = strip_cache_control(before), strip_cache_control(after)
    return len(before) <= len(after) and canon(before) == canon(after[: len(before)])


def _history(request: WireRequest) -> list[Any]:
    """The history items; Anthropic's as (role, block) pairs, since its cache works by block
    (a notice told in user text joins the user message it follows)."""
    if request.provider == "anthropic":
        return [[m["role"], b] for m in request.payload["messages"] for b in m["content"]]
    return list(request.payload.get("messages") or request.payload.get("input") or [])


def _kept(tools: list[Any], removed: set[str]) -> list[Any]:
    """The declared tools but the deferred ones ever withdrawn."""
    return [t for t in tools if not (t.get("defer_loading") and t.get("name") in removed)]


def _shown(request: WireRequest) -> str:
    tools = request.payload.get("tools") or []
    return canon(strip_cache_control([t for t in tools if not t.get("defer_loading")]))


@settings(max_examples=25, deadline=None)
@given(ops)
# a load point stays when its tool is removed later, even after a refused call before it
@example([("call", "delta"), ("load", "delta"), ("load", "alpha"), ("remove", "delta")])
# a tool registered mid-session, offered by a swap, then redefined and withdrawn
@example([("offer", "alpha"), ("call", "gamma"), ("redefine", "beta"), ("offer", "beta")])
# tools only registered mid-session, one of them swapped in later
@example([("register", "alpha"), ("call", "alpha"), ("register", "beta"), ("offer", "beta")])
def test_each_request_extends_the_previous_one_through_tool_changes(steps: list) -> None:
    player = Player()
    player.session.user("Start.")
    player.model_call()
    for op, name in steps:
        player.step(op, name)
    for mode, requests in player.requests.items():
        in_place = MODES[mode][3]
        for i, (a, b) in enumerate(itertools.pairwise(requests), 1):
            assert _is_prefix(_history(a), _history(b)), mode
            grew = i in player.registered and mode in GROWS_AMONG_REGISTERED
            tools_a, tools_b = a.payload.get("tools") or [], b.payload.get("tools") or []
            if mode in DROPS_WITHDRAWN:
                tools_a, tools_b = _kept(tools_a, player.removed), _kept(tools_b, player.removed)
            assert grew or _is_prefix(tools_a, tools_b), mode
            assert canon(a.payload.get("system")) == canon(b.payload.get("system")), mode
            assert a.payload.get("instructions") == b.payload.get("instructions"), mode
            if in_place:
                assert _shown(a) == _shown(b), (mode, b.notes)
            if mode in FIXED_TOOLS and not grew:
                assert canon(strip_cache_control(tools_a)) == canon(strip_cache_control(tools_b)), (
                    mode,
                    b.notes,
                )
        last = requests[-1]
        # a versioned name maps back to its real name, and only redefined names get one
        assert all(last.aliases[alias].startswith(alias.split("__v")[0]) for alias in last.aliases)


def _changed_session() -> Session:
    s = _session()
    s.user("Start.")
    s.assistant(tool_calls=[ToolCall(id="c0", name="alpha", arguments={"text": "x"})])
    s.execute(s.pending_calls()[0])
    s.remove_tools(["alpha"])
    s.redefine_tool(_tool("beta", 2))
    return s


def test_anthropic_by_value_keeps_tools_fixed_and_validates_with_the_inline_beta() -> None:
    start = _session()
    start.user("Start.")
    before = build_request(start, "anthropic", "claude-opus-4-8")
    s = _changed_session()
    request = build_request(s, "anthropic", "claude-opus-4-8")
    assert request.betas == ["inline-tools-2026-09-15"]
    names = [t["name"] for t in request.payload["tools"]]
    assert names == [t["name"] for t in before.payload["tools"]]  # alpha stays declared
    system = request.payload["messages"][-2:]
    blocks = [b for m in system for b in m["content"]]
    assert [m["role"] for m in system] == ["system", "system"]
    assert blocks[0] == {
        "type": "tool_removal",
        "tool": {"type": "tool_reference", "name": "alpha"},
    }
    assert blocks[1]["tool"] == {"type": "tool_reference", "name": "beta"}
    assert blocks[2]["tool"]["type"] == "tool_definition"
    assert blocks[2]["tool"]["definition"]["description"] == "The beta tool, version 2."
    # the last breakpoint is on the tool result, never on the trailing system messages
    assert "cache_control" not in str(system)
    assert "cache_control" in str(request.payload["messages"][-3])
    assert [lp.kind for lp in request.load_points] == ["removal", "redefinition"]


def test_by_reference_declares_a_versioned_name_deferred() -> None:
    s = _changed_session()
    flags = {"tool_changes_by_value": False}
    request = build_request(s, "anthropic", "claude-opus-4-8", profile=flags)
    assert request.betas == ["mid-conversation-tool-changes-2026-07-01"]
    last = request.payload["tools"][-1]
    assert last["name"] == "beta__v2" and last["defer_loading"] is True
    assert request.aliases == {"beta__v2": "beta"}
    blocks = request.payload["messages"][-1]["content"]
    assert [b["tool"]["name"] for b in blocks] == ["beta", "beta__v2"]


def test_responses_restricts_calls_with_allowed_tools_where_the_model_takes_it() -> None:
    s = _changed_session()
    request = build_request(s, "openai-responses", "gpt-5.6")
    choice = request.payload["tool_choice"]
    assert choice["type"] == "allowed_tools"
    assert {t["name"] for t in choice["tools"]} == {"tool_search", "loader", "beta__v2"}
    kinds = [i.get("type", i.get("role")) for i in request.payload["input"][-3:]]
    assert kinds == ["developer", "developer", "additional_tools"]
    older = build_request(s, "openai-responses", "gpt-5.4")
    assert "tool_choice" not in older.payload  # beta__v2 lives only in additional_tools there


def test_rewrite_sends_the_current_list_and_is_refused_where_tools_edits_are_errors() -> None:
    s = _changed_session()
    rewritten = build_request(s, "anthropic", "claude-opus-4-8", tool_changes="rewrite")
    assert "alpha" not in [t["name"] for t in rewritten.payload["tools"]]
    kept = build_request(s, "anthropic", "claude-fable-5-1", tool_changes="rewrite")
    assert "alpha" in [t["name"] for t in kept.payload["tools"]]
    assert any("refuses an edit of tools[]" in n for n in kept.notes)
    with pytest.raises(ValueError, match="tool_changes"):
        build_request(s, "anthropic", "claude-opus-4-8", tool_changes="hide")


def test_unknown_models_take_the_safe_path() -> None:
    s = _changed_session()
    request = build_request(s, "anthropic", "claude-future-9")
    assert "tool_removal" not in str(request.payload)
    assert "alpha" in [t["name"] for t in request.payload["tools"]]
    assert "no longer available" in str(request.payload["messages"])


@pytest.mark.parametrize(("provider", "model", "options"), CASES)
def test_model_context_shows_the_removal_and_the_new_definition(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    s = _changed_session()
    ctx = model_context(build_request(s, provider, model, **options))
    withdrawn = [seg.label for seg in ctx.segments if seg.kind == "tool_withdrawn"]
    assert "alpha" in withdrawn
    texts = " ".join(
        seg.text for seg in ctx.segments if seg.kind in ("loaded_schema", "tool_schema")
    )
    assert "version 2" in texts


class Stubborn:
    """A model that ignores removals: it calls the named tool whatever its context says."""

    name = "stubborn"

    def __init__(self, name: str) -> None:
        self.target, self.done = name, False

    def decide(self, view: View) -> Action:
        if self.done:
            return Answer("done")
        self.done = True
        return Call(self.target, {"text": "x"})


@pytest.mark.parametrize(("provider", "model", "options"), CASES)
def test_a_call_to_a_removed_tool_is_refused_locally(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    s = _changed_session()
    s.assistant("Ok.")
    agent = Agent(s, provider, model, policy=Stubborn("alpha"), **options)
    result = agent.run("Use alpha.")
    step = result.steps[0]
    assert step.results[0].is_error and "removed from this conversation" in step.results[0].text


@pytest.mark.parametrize(("provider", "model", "options"), CASES)
def test_a_redefined_tool_is_called_under_its_wire_name_and_runs_the_new_definition(
    provider: str, model: str, options: dict[str, Any]
) -> None:
    s = _changed_session()
    s.assistant("Ok.")
    request = build_request(s, provider, model, **options)
    wire = next((a for a, real in request.aliases.items() if real == "beta"), "beta")
    agent = Agent(s, provider, model, policy=Stubborn(wire), **options)
    step = agent.run("Use beta.").steps[0]
    assert step.reply.message.tool_calls[0].name == "beta"
    assert step.results[0].text == "beta v2: x"
