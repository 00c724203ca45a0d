"""Property: in the cache-keeping modes every request extends the previous one.

Random append-only sessions (user turns, searches run by the real `tool_search` tool, explicit
markers, ordinary and parallel calls, calls to inactive and unknown tools, prompt section
changes between turns) are serialized at
every model call. For consecutive requests:

- Anthropic `tool_reference` (claude-opus-4-8, which takes mid-conversation system messages),
  automatic and explicit caching: the messages are a prefix of the next request's, the system
  blocks and the non-deferred tools are byte-identical, the tool list only grows at its end
  (deferred tools are not part of the cache key), and there are at most 4 breakpoints;
- OpenAI Responses `additional_tools` and `tool_search`: the input items are a prefix, and the
  top-level tools and the instructions are byte-identical;
- Chat Completions and Kimi: the messages are a prefix; Chat's full list only grows at its end,
  Kimi's top-level list never changes.

Items are compared as JSON after removing `cache_control` keys (breakpoints move).
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.wire import WireRequest, build_request
from tests.support.wire_requests import breakpoints, canon, strip_cache_control

WORDS = ["weather", "invoice", "calendar", "shipping", "translate", "stocks", "recipes"]
PROPS = {"text": {"type": "string"}}


def _catalog() -> list[Tool]:
    tools = [
        Tool(
            f"{word}_tool",
            description=f"Work with {word} data",
            parameters={"type": "object", "properties": PROPS},
            execute=lambda text="", word=word: f"{word}: {text or 'ok'}",
        )
        for word in WORDS
    ]
    tools.append(
        Tool(
            "loader",
            description="Prepare a workspace",
            parameters={"type": "object", "properties": PROPS},
            execute=lambda text="": "prepared",
        )
    )
    return tools


MODES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "anthropic": ("anthropic", "claude-opus-4-8", {}),
    "anthropic-explicit": ("anthropic", "claude-opus-4-8", {"cache": "explicit", "ttl": "1h"}),
    "additional_tools": ("openai-responses", "gpt-5.4", {}),
    "tool_search": ("openai-responses", "gpt-5.4", {"load_mode": "tool_search"}),
    "chat": ("openai-chat", "gpt-5.4", {}),
    "kimi": ("kimi", "kimi-k2", {}),
}

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=2, unique=True)
step = st.one_of(
    st.tuples(st.just("search"), words),
    st.tuples(st.just("mark"), st.lists(st.sampled_from(WORDS), max_size=2, unique=True)),
    st.tuples(st.just("call"), st.integers(0, 20)),
    st.tuples(st.just("parallel"), words),
    st.tuples(st.just("inactive"), st.sampled_from(WORDS)),
    st.tuples(st.just("unknown"), st.integers(0, 3)),
)
turn = st.tuples(
    st.one_of(st.none(), st.sampled_from(["Be brief.", "Use metric units.", ""])),
    st.lists(step, max_size=3),
)
sessions = st.lists(turn, min_size=1, max_size=4)


class Recorder:
    """Plays a random history and serializes the session at every model call."""

    def __init__(self) -> None:
        self.session = Session(
            system="You are a careful agent.",
            tools=_catalog(),
            active=["tool_search", "loader"],
            search="keyword",
        )
        self.requests: dict[str, list[WireRequest]] = {mode: [] for mode in MODES}
        self.calls = 0

    def model_call(self) -> None:
        for mode, (provider, model, options) in MODES.items():
            self.requests[mode].append(build_request(self.session, provider, model, **options))

    def call_id(self) -> str:
        self.calls += 1
        return f"call_{self.calls}"

    def ordinary(self, index: int) -> ToolCall:
        names = [n for n in self.session.active_tools if n != "tool_search"]
        return ToolCall(id=self.call_id(), name=names[index % len(names)], arguments={"text": "x"})

    def search(self, query: list[str]) -> ToolCall:
        arguments = {"query": " ".join(query)}
        return ToolCall(id=self.call_id(), name="tool_search", arguments=arguments)

    def play_step(self, kind: str, arg: Any) -> None:
        s = self.session
        if kind == "mark":
            call = ToolCall(id=self.call_id(), name="loader", arguments={})
            s.assistant(tool_calls=[call])
            # an explicit marker names tools that were not active: a pure append
            names = [f"{w}_tool" for w in arg if f"{w}_tool" not in s.active_tools]
            s.tool_result(call.id, "prepared", added_tool_names=names)
        elif kind in ("inactive", "unknown"):
            # a call the tool cannot receive: an error result, never a use of the tool
            name = f"{arg}_tool" if kind == "inactive" else f"no_such_tool_{arg}"
            if name in s.active_tools:
                name = "no_such_tool"
            call = ToolCall(id=self.call_id(), name=name, arguments={"text": "x"})
            s.assistant(tool_calls=[call])
            assert s.execute(call).is_error
        else:
            if kind == "search":
                calls = [self.search(arg)]
            elif kind == "call":
                calls = [self.ordinary(arg)]
            else:
                calls = [self.search(arg), self.ordinary(len(arg))]
            s.assistant(tool_calls=calls)
            for call in calls:
                assert not s.execute(call).is_error
        self.model_call()

    def play(self, history: list[tuple[str | None, list[tuple[str, Any]]]]) -> None:
        for i, (rules, steps) in enumerate(history):
            if rules is not None:
                self.session.prompt["rules"] = rules
            self.session.user(f"Task {i}")
            self.model_call()
            for kind, arg in steps:
                self.play_step(kind, arg)
            self.session.assistant(f"Finished task {i}.")


def _is_prefix(before: list[Any], after: list[Any]) -> bool:
    before, after = strip_cache_control(before), strip_cache_control(after)
    return len(before) <= len(after) and canon(before) == canon(after[: len(before)])


def _check_anthropic(a: WireRequest, b: WireRequest) -> None:
    assert a.mode == b.mode == "tool_reference", (a.mode, b.notes)
    assert _is_prefix(a.payload["messages"], b.payload["messages"])
    assert canon(strip_cache_control(a.payload["system"])) == canon(
        strip_cache_control(b.payload["system"])
    )

    def immediate(r: WireRequest) -> str:
        tools = [t for t in r.payload["tools"] if not t.get("defer_loading")]
        return canon(strip_cache_control(tools))

    assert immediate(a) == immediate(b)
    assert _is_prefix(a.payload["tools"], b.payload["tools"])
    assert 1 <= len(breakpoints(b.payload)) <= 4


def _check_responses(mode: str, a: WireRequest, b: WireRequest) -> None:
    assert a.mode == b.mode == mode
    assert _is_prefix(a.payload["input"], b.payload["input"])
    assert canon(a.payload.get("tools")) == canon(b.payload.get("tools"))
    assert a.payload["instructions"] == b.payload["instructions"]


def _check_chat(mode: str, a: WireRequest, b: WireRequest) -> None:
    assert _is_prefix(a.payload["messages"], b.payload["messages"])
    if mode == "chat":
        assert _is_prefix(a.payload["tools"], b.payload["tools"])  # newest tools last
    else:
        assert canon(a.payload["tools"]) == canon(b.payload["tools"])


@settings(max_examples=30, deadline=None)
@given(sessions)
def test_each_request_extends_the_previous_one(history: list) -> None:
    recorder = Recorder()
    recorder.play(history)
    for mode, requests in recorder.requests.items():
        for a, b in itertools.pairwise(requests):
            if mode.startswith("anthropic"):
                _check_anthropic(a, b)
            elif mode in ("additional_tools", "tool_search"):
                _check_responses(mode, a, b)
            else:
                _check_chat(mode, a, b)
    # every marker that loaded a tool shows up as a load point in the deferred-loading modes
    marked = {
        n for m in recorder.session.messages for n in (getattr(m, "added_tool_names", None) or [])
    }
    for mode in ("anthropic", "additional_tools", "tool_search", "kimi"):
        last = recorder.requests[mode][-1]
        loaded = {n for lp in last.load_points for n in lp.tools}
        assert loaded == marked, (mode, loaded, marked)


@settings(max_examples=15, deadline=None)
@given(sessions)
def test_the_same_session_builds_the_same_bytes(history: list) -> None:
    recorder = Recorder()
    recorder.play(history)
    for provider, model, options in MODES.values():
        first = build_request(recorder.session, provider, model, **options).json()
        assert build_request(recorder.session, provider, model, **options).json() == first
