from __future__ import annotations

import pytest

from dtl_notebook.agent import (
    SectionNameError,
    Sections,
    SystemUpdate,
    Tool,
    apply_patch,
    diff_sections,
    render_sections,
    replay_sections,
    tool_catalog,
    tools_section,
)


def test_render_preamble_untagged_others_tagged_empty_skipped() -> None:
    s = Sections({"preamble": "Hi.", "rules": "Be kind.", "docs": ""})
    assert s.render() == "Hi.\n\n<rules>\nBe kind.\n</rules>"
    assert list(s) == ["preamble", "rules", "docs"]


@pytest.mark.parametrize("name", ["Tools", "1abc", "", "a b", "a.b"])
def test_bad_section_names(name: str) -> None:
    with pytest.raises(SectionNameError, match="invalid system prompt section name"):
        Sections({name: "x"})


def test_section_text_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="'rules' must be a string"):
        Sections()["rules"] = 3  # type: ignore[assignment]


def test_diff_changed_new_then_removed() -> None:
    prev = {"preamble": "a", "tools": "t1", "docs": "d"}
    cur = {"preamble": "a", "tools": "t2", "extra": "e"}
    assert diff_sections(prev, cur) == {"tools": "t2", "extra": "e", "docs": None}
    assert list(diff_sections(prev, cur) or {}) == ["tools", "extra", "docs"]
    assert diff_sections(cur, dict(cur)) is None


def test_apply_and_replay() -> None:
    prev = {"preamble": "a", "docs": "d"}
    cur = {"preamble": "b", "rules": "r"}
    patch = diff_sections(prev, cur)
    assert patch is not None
    assert apply_patch(prev, patch) == cur
    transcript = [SystemUpdate(sections=dict(prev)), SystemUpdate(sections=patch)]
    assert replay_sections(transcript) == cur
    assert render_sections(replay_sections(transcript)) == "b\n\n<rules>\nr\n</rules>"


def test_tools_section_from_snippets_and_guidelines() -> None:
    tools = [
        Tool("a", prompt_snippet="does A"),
        Tool("b"),
        Tool("c", prompt_guidelines="Always call c last."),
    ]
    assert tools_section(tools) == "- a: does A\nAlways call c last."


def test_catalog_is_stable_and_one_line_per_tool() -> None:
    tools = [Tool("zeta", description="Last one\nmore detail"), Tool("alpha", description="First")]
    text = tool_catalog(tools)
    assert text == "Deferred tools (search before use):\n- alpha: First\n- zeta: Last one"
    assert tool_catalog(reversed(tools)) == text
