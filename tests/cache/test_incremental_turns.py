"""A turn reuses earlier work, and the result is byte-identical to a from-scratch computation.

Random sessions (user, assistant, tool calls and results, tool_search markers, system prompt
updates), with registry edits through every public path (register, redefine, unregister) and
active-set shrinks, provider switches and profile overrides between requests: every
request's body, model context and cache prediction must equal what a cold computation gives
(the rendering memo off, validation from scratch). In-place edits of a tool definition or a system
section, and an old message replaced by an edited copy, must show up in the next request;
editing a message in place is refused (messages are frozen).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook._reuse import disabled
from dtl_notebook.agent.messages import TextPart, UserMessage
from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.context.model import model_context
from dtl_notebook.wire import build_request, validate_payload
from tests.support.reuse_marks import shares

WORDS = "weather order eta invoice refund flight hotel email report chart".split()
MODES: list[tuple[str, str, dict[str, Any]]] = [
    ("anthropic", "claude-opus-4-8", {}),
    ("anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
    ("anthropic", "claude-opus-4-8", {"cache": "explicit"}),
    ("openai-responses", "gpt-5.4", {"load_mode": "additional_tools"}),
    ("openai-responses", "gpt-5.4", {"load_mode": "tool_search"}),
    ("openai-responses", "gpt-5.4", {"search": "hosted"}),
    ("openai-chat", "gpt-5.4", {}),
    ("kimi", "kimi-k2.5", {}),
]
PROFILES: list[dict[str, Any] | None] = [
    None,
    {"deferred_placeholder": False},
    {"mid_conversation_system": False},
    {"tool_reference": False, "additional_tools": False},
]


def _tool(i: int, text: str = "") -> Tool:
    a, b = WORDS[i % len(WORDS)], WORDS[(i * 3 + 1) % len(WORDS)]
    props = {f"{a}_id": {"type": "string", "description": f"The {a} {text}".strip()}}
    return Tool(
        f"{a}_{b}_{i}",
        description=f"{a} {b} tool {i} {text}".strip(),
        parameters={"type": "object", "properties": props, "required": list(props)},
        execute=lambda **_: f"{a} done",
    )


ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.sampled_from(WORDS)),
        st.tuples(st.just("assistant"), st.sampled_from(WORDS)),
        st.tuples(st.just("search"), st.sampled_from(WORDS)),
        st.tuples(st.just("call"), st.integers(0, 11)),
        st.tuples(st.just("section"), st.sampled_from(WORDS)),
        st.tuples(st.just("redefine"), st.integers(0, 11)),
        st.tuples(st.just("register"), st.integers(12, 15)),
        st.tuples(st.just("unregister"), st.integers(0, 15)),
        st.tuples(st.just("deactivate"), st.integers(0, 15)),
        st.tuples(st.just("replace"), st.integers(0, 40)),
        st.tuples(st.just("request"), st.integers(0, len(MODES) * len(PROFILES) - 1)),
    ),
    min_size=4,
    max_size=30,
)


def _apply(session: Session, action: tuple[str, Any], step: int) -> None:
    kind, value = action
    if kind == "user":
        session.user(f"please {value} {step}")
    elif kind == "assistant":
        session.assistant(f"noted {value} {step}")
    elif kind == "search":
        call = ToolCall(id=f"s{step}", name="tool_search", arguments={"query": value})
        session.assistant(tool_calls=[call])
        session.execute(call)
    elif kind == "call":
        name = _tool(value).name
        call = ToolCall(id=f"c{step}", name=name, arguments={f"{name.split('_')[0]}_id": "x"})
        session.assistant(tool_calls=[call])
        session.execute(call)
    elif kind == "section":
        session.prompt["notes"] = f"remember {value} {step}"
    elif kind == "redefine":
        session.registry.register(_tool(value, f"v{step}"), replace=True)
    elif kind == "register" and _tool(value).name not in session.registry:
        session.registry.register(_tool(value))
    elif kind == "unregister" and _tool(value).name in session.registry:
        session.registry.unregister(_tool(value).name)
    elif kind == "deactivate":
        session.set_active_tools(n for n in session.active_tools if n != _tool(value).name)
    elif kind == "replace":  # an old user message replaced by an edited copy; appends follow
        users = [i for i, m in enumerate(session.messages) if isinstance(m, UserMessage)]
        if users:
            index = users[value % len(users)]
            edited = [TextPart(text=f"edited {value} {step}")]
            session.messages[index] = session.messages[index].model_copy(update={"content": edited})


def _warm_and_cold(
    session: Session,
    mode: tuple[str, str, dict[str, Any]],
    profile: dict[str, Any] | None,
    warm: CacheAnalyzer,
    cold: CacheAnalyzer,
) -> None:
    provider, model, options = mode
    try:
        request = build_request(session, provider, model, profile=profile, **options)
    except ValueError as error:  # an unsupported combination fails the same way from scratch
        with disabled():
            try:
                build_request(session, provider, model, profile=profile, **options)
            except ValueError as again:
                assert str(again) == str(error)
                return
        raise AssertionError(f"warm build failed, cold build did not: {error}") from None
    context = model_context(request)
    # the analyzer takes the context it was given, or works it out: every other request
    entry = warm.add(request, context=context) if len(warm.entries) % 2 else warm.add(request)
    with disabled():
        scratch = build_request(
            session, provider, model, profile=profile, validate=False, **options
        )
        validate_payload(scratch.payload, provider, cached=False)
        scratch_context = model_context(scratch)
        scratch_entry = cold.add(scratch)
    assert request.json() == scratch.json()
    assert request.load_points == scratch.load_points and request.notes == scratch.notes
    assert context.segments == scratch_context.segments
    assert context.notes == scratch_context.notes
    assert entry.context.segments == scratch_entry.context.segments
    figures = ("total_tokens", "cached_tokens", "written_tokens", "uncached_tokens")
    assert [getattr(entry, f) for f in figures] == [getattr(scratch_entry, f) for f in figures]
    assert entry.cache_break == scratch_entry.cache_break


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ACTIONS)
def test_incremental_equals_from_scratch(actions: list[tuple[str, Any]]) -> None:
    session = Session(system="You help.", tools=[_tool(i) for i in range(12)])
    warm, cold = CacheAnalyzer(), CacheAnalyzer()
    last = 0
    for step, action in enumerate(actions):
        if action[0] == "request":
            last = action[1]
            mode, profile = MODES[last % len(MODES)], PROFILES[last // len(MODES)]
            _warm_and_cold(session, mode, profile, warm, cold)
        else:
            _apply(session, action, step)
    session.user("last turn")
    _warm_and_cold(session, MODES[last % len(MODES)], None, warm, cold)


def _session() -> Session:
    session = Session(system="You help.", tools=[_tool(i) for i in range(12)])
    for step, action in enumerate(
        [("user", "order"), ("search", "order"), ("call", 1), ("assistant", "ok"), ("user", "eta")]
    ):
        _apply(session, action, step)
    return session


def _first_user(session: Session) -> UserMessage:
    return next(m for m in session.messages if isinstance(m, UserMessage))


def _replace_first_user(session: Session, text: str) -> None:
    """The sanctioned edit of an old message: an edited copy put in its place."""
    old = _first_user(session)
    index = next(i for i, m in enumerate(session.messages) if m is old)
    session.messages[index] = old.model_copy(update={"content": [TextPart(text=text)]})


def _redefine_tool_search(session: Session) -> None:
    """The sanctioned edit of a tool's schema: a new definition under the same name."""
    tool = session.registry.get("tool_search")
    parameters = {**copy.deepcopy(tool.parameters), "title": "edited"}
    fields = {**tool.model_dump(), "parameters": parameters}
    session.registry.register(Tool(**fields, execute=tool.execute), replace=True)


def test_in_place_edits_are_seen() -> None:
    """Redefining a tool, editing a system section in place, or replacing an old message by an
    edited copy changes the next request, its model context and the cache prediction (a
    break), never a stale replay."""
    for provider, model, options in MODES:
        session = _session()
        analyzer = CacheAnalyzer()
        first = build_request(session, provider, model, **options)
        before = model_context(first)
        analyzer.add(first)
        edits = [
            _redefine_tool_search,
            lambda s: s.prompt.__setitem__("preamble", "You help a lot."),
            lambda s: _replace_first_user(s, "please edited 0"),
        ]
        for edit in edits:
            edit(session)
            request = build_request(session, provider, model, **options)
            with disabled():
                scratch = build_request(session, provider, model, validate=False, **options)
                scratch_context = model_context(scratch)
            context = model_context(request)
            assert request.json() == scratch.json()
            assert context.segments == scratch_context.segments
            assert analyzer.add(request).context.segments == scratch_context.segments
        assert [s.text for s in model_context(request).segments] != [s.text for s in before]


@shares
def test_messages_and_schemas_cannot_be_edited_in_place() -> None:
    """A message is frozen once built, and a tool's schema and the tool items a body shares
    with other bodies are read-only: an edit raises, and the next request equals the one
    before."""
    session = _session()
    before = build_request(session, "anthropic", "claude-opus-4-8").json()
    message = _first_user(session)
    with pytest.raises(ValidationError, match="frozen"):
        message.content[0].text = "please edited"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        message.content = [TextPart(text="please edited")]  # type: ignore[misc]
    with pytest.raises(TypeError, match="read-only"):
        session.registry.get("tool_search").parameters.setdefault("title", "edited")
    native = build_request(session, "anthropic", "claude-opus-4-8", search="native-bm25")
    deferred = [t for t in native.payload["tools"] if t.get("defer_loading")]
    with pytest.raises(TypeError, match="read-only"):
        deferred[0]["description"] = "edited"
    with pytest.raises(TypeError, match="read-only"):
        deferred[0]["input_schema"]["properties"].clear()
    edited = copy.deepcopy(native.payload)
    edited["tools"][-1]["description"] = "edited"  # a deep copy is plain, editable JSON
    again = build_request(session, "anthropic", "claude-opus-4-8", search="native-bm25")
    assert again.json() == native.json() != json.dumps(edited, ensure_ascii=False)
    assert build_request(session, "anthropic", "claude-opus-4-8").json() == before


def test_transcript_counts_every_change_but_an_append() -> None:
    """Appends keep `rewrites`; replacing, removing, inserting or assigning a list bumps it."""
    session = _session()
    transcript = session.messages
    start = transcript.rewrites
    session.assistant("ok")
    session.user("more")
    transcript.extend([])
    transcript += []
    assert session.messages.rewrites == start
    changes = [
        lambda s: s.messages.__setitem__(0, s.messages[0]),
        lambda s: s.messages.pop(),
        lambda s: s.messages.__delitem__(slice(len(s.messages) - 1, None)),
        lambda s: s.messages.insert(len(s.messages), UserMessage(content=[TextPart(text="x")])),
        lambda s: setattr(s, "messages", list(s.messages)),
    ]
    for n, change in enumerate(changes, 1):
        change(session)
        assert session.messages.rewrites == start + n
    assert type(session.messages).__name__ == "Transcript"


@shares
def test_native_and_hosted_bodies_share_each_definition_until_it_changes() -> None:
    """A registry-wide body reuses each tool's item (the same object) from one request to the
    next; a redefined or newly registered tool gets a new item equal to a from-scratch build."""
    for provider, model, options in [MODES[1], MODES[5]]:
        session = _session()
        first = build_request(session, provider, model, **options)
        second = build_request(session, provider, model, **options)
        pairs = list(zip(first.payload["tools"], second.payload["tools"], strict=True))
        assert any(a is b for a, b in pairs[1:])
        _apply(session, ("redefine", 3), 99)
        _apply(session, ("register", 13), 100)
        third = build_request(session, provider, model, **options)
        with disabled():
            scratch = build_request(session, provider, model, **options)
        assert third.json() == scratch.json() != second.json()
        kept = {id(t) for t in second.payload["tools"]}
        fresh = [t for t in third.payload["tools"] if id(t) not in kept]
        assert {t.get("name") for t in fresh} >= {_tool(3).name, _tool(13).name}
        scratch_ids = {id(t) for t in scratch.payload["tools"]}
        assert not scratch_ids & {id(t) for t in third.payload["tools"]}


def test_resumed_history_follows_replacements_and_provider_switches() -> None:
    """A build resumes the serialized history of the previous one for this transcript; a
    replaced message, appends after it, and a switch to another provider and back all give
    the bytes of a cold build."""
    session = Session(system="You help.", tools=[_tool(i) for i in range(3)])
    session.user("please order 0")
    session.assistant("noted")
    plan = [
        ("anthropic", {"cache": "explicit"}),
        ("replace", {}),
        ("anthropic", {"cache": "explicit"}),
        ("openai-chat", {}),
        ("anthropic", {"cache": "explicit"}),
        ("anthropic", {}),
    ]
    for step, (provider, options) in enumerate(plan):
        if provider == "replace":
            _replace_first_user(session, f"please edited {step}")
            continue
        model = "claude-opus-4-8" if provider == "anthropic" else "gpt-5.4"
        request = build_request(session, provider, model, **options)
        with disabled():
            scratch = build_request(session, provider, model, **options)
        assert request.json() == scratch.json() and request.notes == scratch.notes
        session.user(f"turn {step}")
        session.assistant(f"done {step}")


def test_the_analyzer_takes_only_a_context_of_the_request() -> None:
    session = _session()
    session.user("hi")
    request = build_request(session, "anthropic", "claude-opus-4-8")
    other = build_request(session, "openai-responses", "gpt-5.4")
    analyzer = CacheAnalyzer()
    with pytest.raises(ValueError, match=r"context is for openai-responses gpt-5\.4"):
        analyzer.add(request, context=model_context(other))
    with pytest.raises(TypeError, match="context must be a ModelContext"):
        analyzer.add(request, context=request.payload)  # type: ignore[arg-type]
    assert analyzer.entries == []  # nothing was analyzed
    entry = analyzer.add(request, context=model_context(request))
    assert entry.context.segments == model_context(request).segments
