from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from dtl_notebook.agent.catalog_groups import (
    GROUPED_TITLE,
    grouped_tool_catalog,
    rounded_count,
    tool_group,
)
from dtl_notebook.demo import core_tool_names, demo_catalog, demo_group_summaries, demo_session


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


# -- the grouped catalog ----------------------------------------------------------------------

GROUPS = ("billing", "crm", "weather", "maths")


def _grouped_tool(index: int, group: str) -> Tool:
    return Tool(f"{group}_tool_{index}", description=f"Does {group} thing {index}", namespace=group)


def test_grouped_catalog_one_line_per_group_with_rounded_counts() -> None:
    tools = [_grouped_tool(i, "weather") for i in range(12)]
    tools += [Tool("get_invoice"), Tool("create_invoice"), Tool("add")]
    text = tool_catalog(tools, grouped=True, summaries={"weather": "Forecasts\nand more"})
    assert text.splitlines() == [
        GROUPED_TITLE,
        "- invoice (a few tools): e.g. get_invoice",
        "- other (a few tools): e.g. add",
        "- weather (10+ tools): Forecasts; e.g. weather_tool_0",
    ]


@pytest.mark.parametrize(
    ("count", "label"),
    [
        (0, "a few tools"),
        (4, "a few tools"),
        (5, "5+ tools"),
        (24, "10+ tools"),
        (2000, "1,000+ tools"),
    ],
)
def test_rounded_count_ladder(count: int, label: str) -> None:
    assert rounded_count(count) == label


def test_tool_group_skips_verbs_and_numbers() -> None:
    assert tool_group(Tool("get_current_weather")) == "current"
    assert tool_group(Tool("list_7_get")) == "other"
    assert tool_group(Tool("get_x", namespace="crm")) == "crm"


def test_grouped_catalog_rejects_bad_summaries() -> None:
    with pytest.raises(TypeError, match="summaries must be a mapping"):
        grouped_tool_catalog([Tool("a")], summaries=["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"summaries\['crm'\] must be a string"):
        grouped_tool_catalog([Tool("a")], summaries={"crm": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="count must be >= 0"):
        rounded_count(-1)


@settings(max_examples=60, deadline=None)
@given(
    initial=st.lists(st.sampled_from(GROUPS), min_size=1, max_size=40),
    added=st.lists(st.integers(min_value=0, max_value=len(GROUPS) - 1), max_size=40),
)
def test_adding_tools_to_existing_groups_changes_only_crossed_counts(
    initial: list[str], added: list[int]
) -> None:
    """Stability: appending tools to groups that exist leaves every line byte-identical,
    except the count of a group whose size crossed a ladder step."""
    before_tools = [_grouped_tool(i, g) for i, g in enumerate(initial)]
    present = sorted(set(initial))
    extra = [_grouped_tool(1000 + i, present[k % len(present)]) for i, k in enumerate(added)]
    before = grouped_tool_catalog(before_tools)
    after = grouped_tool_catalog(before_tools + extra)
    before_lines, after_lines = before.splitlines(), after.splitlines()
    assert len(before_lines) == len(after_lines) == len(present) + 1
    for group, old, new in zip(present, before_lines[1:], after_lines[1:], strict=True):
        old_size = initial.count(group)
        new_size = old_size + sum(1 for t in extra if t.namespace == group)
        if rounded_count(old_size) == rounded_count(new_size):
            assert new == old
        else:
            assert new.replace(rounded_count(new_size), rounded_count(old_size)) == old


def test_grouped_catalog_on_the_demo_is_small_and_order_free() -> None:
    tools = [t for t in demo_catalog() if t.name not in core_tool_names()]
    grouped = tool_catalog(tools, grouped=True, summaries=demo_group_summaries())
    flat = tool_catalog(tools)
    assert len(grouped.splitlines()) == len({t.namespace for t in tools}) + 1
    assert len(grouped) * 5 < len(flat)
    assert demo_session().prompt["tool_catalog"] == grouped
    assert demo_session(grouped_catalog=False).prompt["tool_catalog"] == flat
    # an engine finds tools by group summary words too: every demo namespace has a summary
    assert set(demo_group_summaries()) == {t.namespace for t in tools}


def test_grouped_catalog_stays_flat_in_size_as_the_registry_grows() -> None:
    def tools(per_group: int) -> list[Tool]:
        return [_grouped_tool(i, group) for i in range(per_group) for group in GROUPS]

    small, large = grouped_tool_catalog(tools(30)), grouped_tool_catalog(tools(500))
    assert len(large) - len(small) <= len(GROUPS) * len("1,000+") and len(large) < 1_000
    assert len(tool_catalog(tools(500))) > 10 * len(tool_catalog(tools(30)))  # the flat list
