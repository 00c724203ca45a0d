from __future__ import annotations

import pytest

from dtl_notebook import Tool
from dtl_notebook.agent import ToolDefinitionError, ToolRegistry, UnknownToolError


def test_valid_tool_defaults_to_empty_object_schema() -> None:
    tool = Tool("ping")
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.execute is None
    assert "execute" not in tool.model_dump()


@pytest.mark.parametrize("name", ["", "has space", "dotted.name", "x" * 65, "ünïcode"])
def test_bad_names_name_the_tool_and_field(name: str) -> None:
    with pytest.raises(ToolDefinitionError) as err:
        Tool(name)
    assert err.value.field == "name"
    assert repr(name) in str(err.value)
    assert "^[a-zA-Z0-9_-]{1,64}$" in str(err.value)


def test_schema_must_be_an_object_schema() -> None:
    with pytest.raises(ToolDefinitionError) as err:
        Tool("t", parameters={"type": "string"})
    assert err.value.field == "parameters"
    assert "object schema" in str(err.value)


def test_schema_must_be_valid_draft_2020_12() -> None:
    with pytest.raises(ToolDefinitionError) as err:
        Tool("t", parameters={"type": "object", "properties": {"a": {"type": "strin"}}})
    assert err.value.tool == "t"
    assert err.value.field == "parameters"
    assert "properties/a/type" in str(err.value)


def test_schema_must_be_json() -> None:
    with pytest.raises(ToolDefinitionError, match="not JSON-serializable"):
        Tool("t", parameters={"type": "object", "default": object()})


def test_unknown_field_is_named() -> None:
    with pytest.raises(ToolDefinitionError) as err:
        Tool("t", descripton="typo")
    assert err.value.field == "descripton"


def test_spec_drops_the_callable_and_equality_ignores_it() -> None:
    a = Tool("t", description="d", execute=lambda: 1)
    b = Tool("t", description="d")
    assert a == b
    assert a.spec() == b.spec()
    assert a != Tool("t", description="other")


def test_registry_order_lookup_and_duplicates() -> None:
    reg = ToolRegistry([Tool("b"), Tool("a")])
    assert reg.names() == ["b", "a"]
    assert [t.name for t in reg] == ["b", "a"]
    assert "a" in reg and "zzz" not in reg
    with pytest.raises(ToolDefinitionError, match="already registered"):
        reg.register(Tool("a"))
    reg.register(Tool("a", description="new"), replace=True)
    assert reg["a"].description == "new"
    assert reg.names() == ["b", "a"]
    reg.unregister("b")
    assert reg.names() == ["a"]
    with pytest.raises(UnknownToolError, match="unknown tool 'b'"):
        reg.get("b")
    with pytest.raises(TypeError):
        reg.register({"name": "x"})  # type: ignore[arg-type]


def test_ten_thousand_tools_register() -> None:
    tools = [
        Tool(f"tool_{i}", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
        for i in range(10_000)
    ]
    reg = ToolRegistry(tools)
    assert len(reg) == 10_000
    assert reg.names()[-1] == "tool_9999"
