"""Invariants of the agent core, checked over random histories."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import (
    AssistantMessage,
    SystemUpdate,
    ToolResultMessage,
    diff_sections,
    replay_sections,
    split_deferred_tools,
)

NAMES = [f"t{i}" for i in range(8)]
section_names = st.sampled_from(["preamble", "tools", "rules", "docs", "tool_catalog", "x-1"])
section_maps = st.dictionaries(section_names, st.text(max_size=12), max_size=6)

# A step is ("call", index) — the model calls the index-th active tool — or ("load", names).
steps = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(0, 20)),
        st.tuples(st.just("load"), st.lists(st.sampled_from(NAMES), max_size=3)),
    ),
    max_size=25,
)


def play(history: list, initial: list[str]) -> Session:
    tools = [Tool(n, description=f"tool {n}", execute=lambda: "ok") for n in NAMES]

    s = Session(tools=tools, active=["tool_search", *initial], search="keyword")
    s.user("go")
    for i, (kind, arg) in enumerate(history):
        cid = f"c{i}"
        if kind == "call":
            name = s.active_tools[arg % len(s.active_tools)]
            if name == "tool_search":
                name = s.active_tools[-1]
            tc = ToolCall(id=cid, name=name)
            s.assistant(tool_calls=[tc])
            s.execute(tc)
        else:
            tc = ToolCall(id=cid, name="tool_search", arguments={"query": "x"})
            s.assistant(tool_calls=[tc])
            s.tool_result(cid, "loaded", added_tool_names=arg)
    return s


@settings(max_examples=150, deadline=None)
@given(steps, st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
def test_deferred_names_have_a_marker_before_first_use(history: list, initial: list[str]) -> None:
    s = play(history, initial)
    split = split_deferred_tools(s.tools(), s.messages)
    assert {t.name for t in split.immediate} | set(split.deferred) == set(s.active_tools)
    for name in split.deferred:
        marker = first_use = None
        for i, m in enumerate(s.messages):
            if isinstance(m, ToolResultMessage) and name in (m.added_tool_names or []):
                marker = i if marker is None else marker
            if isinstance(m, AssistantMessage) and any(c.name == name for c in m.tool_calls):
                first_use = i if first_use is None else first_use
        assert marker is not None
        assert first_use is None or marker < first_use
        # once deferred, more history never makes it immediate again
        for cut in range(marker + 1, len(s.messages) + 1):
            assert name in split_deferred_tools(s.tools(), s.messages[:cut]).deferred
    # tools in the initial set and never marked stay immediate
    marked = {
        n for m in s.messages if isinstance(m, ToolResultMessage) for n in m.added_tool_names or []
    }
    for name in set(initial) - marked:
        assert name in {t.name for t in split.immediate}


@settings(max_examples=60, deadline=None)
@given(steps, st.lists(st.sampled_from(NAMES), max_size=3, unique=True), section_maps)
def test_save_load_round_trip(history: list, initial: list[str], sections: dict) -> None:
    s = play(history, initial)
    for name, text in sections.items():
        s.prompt[name] = text
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.json"
        s.save(path)
        loaded = Session.load(path)
    assert loaded.to_dict() == s.to_dict()
    assert loaded.messages == s.messages


@given(st.lists(section_maps, min_size=1, max_size=6))
def test_replayed_patches_reproduce_desired_sections(states: list[dict]) -> None:
    transcript: list[SystemUpdate] = []
    for desired in states:
        patch = diff_sections(replay_sections(transcript), desired)
        if patch is not None:
            transcript.append(SystemUpdate(sections=patch))
        assert replay_sections(transcript) == desired
