"""The demo package: its schema-typed fake, the hand-written tools, and its place in the layers."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from dtl_notebook import Tool
from dtl_notebook.demo import DEMO_MODELS, DEMO_TURNS, CatalogDataError, demo_catalog, demo_session
from dtl_notebook.demo.catalog import parse_catalog
from dtl_notebook.demo.fake import fake_result, result_shape
from dtl_notebook.demo.tools import HAND_WRITTEN
from dtl_notebook.live import Agent
from tests.demo.test_catalog import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dtl_notebook"
FAKED = [t for t in demo_catalog() if t.name not in HAND_WRITTEN]


def _value(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for one argument schema of the demo catalog."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**6)), schema.get("maximum", 10**6))
    if kind == "number":
        low, high = schema.get("minimum", -1e6), schema.get("maximum", 1e6)
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "array":
        items = _value(schema.get("items") or {"type": "string"})
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=3)
    if kind == "object":
        return _arguments(schema)
    return st.text(min_size=schema.get("minLength", 0), max_size=20)


def _arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return st.fixed_dictionaries(
        {k: _value(v) for k, v in properties.items() if k in required},
        optional={k: _value(v) for k, v in properties.items() if k not in required},
    )


def _valid_call(tool: Tool) -> st.SearchStrategy[tuple[Tool, dict[str, Any]]]:
    validator = Draft202012Validator(tool.parameters)
    return st.tuples(st.just(tool), _arguments(tool.parameters).filter(validator.is_valid))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.sampled_from(FAKED).flatmap(_valid_call))
def test_the_fake_is_deterministic_and_its_results_fit_their_shape(
    call: tuple[Tool, dict[str, Any]],
) -> None:
    tool, arguments = call
    assert tool.execute is not None and tool.namespace is not None
    result = tool.execute(**arguments)
    shape = result_shape(tool.name, tool.namespace, tool.parameters)
    Draft202012Validator.check_schema(shape)
    errors = [e.message for e in Draft202012Validator(shape).iter_errors(result)]
    assert not errors, (tool.name, arguments, errors)
    again = next(t for t in demo_catalog() if t.name == tool.name)
    assert again.execute is not None
    assert json.dumps(again.execute(**arguments)) == json.dumps(result)


def test_every_faked_tool_answers_a_realistic_call_in_its_shape() -> None:
    for tool in FAKED:
        assert tool.execute is not None and tool.namespace is not None
        result = tool.execute(**EXAMPLES[tool.name])
        shape = result_shape(tool.name, tool.namespace, tool.parameters)
        assert Draft202012Validator(shape).is_valid(result), (tool.name, result)


def test_the_fake_answers_every_tool_without_a_hand_written_one() -> None:
    tools = demo_catalog()
    assert {t.name for t in tools} - set(HAND_WRITTEN) == {t.name for t in FAKED}
    assert 20 <= len(HAND_WRITTEN) <= 30 and len(FAKED) > 150
    shapes = {result_shape(t.name, t.namespace or "", t.parameters)["required"][-1] for t in FAKED}
    assert shapes == {"items", "value", "status", "record"}


def test_different_calls_get_different_answers() -> None:
    tool = next(t for t in FAKED if t.name == "get_air_quality")
    answers = {
        json.dumps(
            fake_result(tool.name, "weather", tool.description, tool.parameters, {"city": c})
        )
        for c in ("Paris", "Tokyo", "Lima")
    }
    assert len(answers) == 3


def _lesson_text() -> str:
    sources = [*sorted((ROOT / "notebooks").glob("*.ipynb")), ROOT / "README.md"]
    sources.append(ROOT / "benchmarks" / "workload_script.py")
    return "\n".join(p.read_text("utf-8") for p in sources)


def test_every_hand_written_tool_is_one_the_lessons_use() -> None:
    text = _lesson_text()
    unused = [name for name in HAND_WRITTEN if not re.search(rf"\b{name}\b", text)]
    assert not unused


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat"])
def test_the_demo_turns_call_only_hand_written_tools(provider: str) -> None:
    agent = Agent(demo_session(), provider, DEMO_MODELS[provider])
    for turn in DEMO_TURNS:
        agent.run(turn)
    called = {c.name for step in agent.steps for c in step.reply.message.tool_calls}
    assert called - {"tool_search"} and called - {"tool_search"} <= set(HAND_WRITTEN)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, relative imports resolved against its package."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("layer", ["agent", "wire", "context", "cache", "live"])
def test_the_layers_below_never_import_the_demo(layer: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in _imports(path) if "dtl_notebook.demo" in m)
        for path in sorted((PACKAGE / layer).rglob("*.py"))
    }
    assert not {k: v for k, v in offenders.items() if v}


def test_the_demo_never_imports_the_notebook_layer() -> None:
    for path in sorted((PACKAGE / "demo").rglob("*.py")):
        assert not [m for m in _imports(path) if m.startswith("dtl_notebook.notebook")], path


def test_live_stays_small() -> None:
    """The demo left live/; the emulator is a package of its own (live/emulator/), the MCP
    client moved in from the core (which does no I/O), speaking both MCP revisions (the
    2026-07-28 one with its listen stream): each is held to a budget of its own. The
    emulator's grew by its WebSocket transport, its kept responses (`previous_response_id`),
    its command and Anthropic message threads."""
    sizes = {
        str(p.relative_to(PACKAGE / "live")): len(p.read_text("utf-8").splitlines())
        for p in (PACKAGE / "live").rglob("*.py")
    }
    assert max(sizes.values()) <= 300, sizes
    emulator = sum(n for name, n in sizes.items() if name.startswith("emulator/"))
    mcp_client = sizes.pop("mcp_client.py") + sizes.pop("mcp_link.py")
    loop = sum(n for name, n in sizes.items() if "/" not in name)
    assert loop < 2000 and emulator < 1500 and mcp_client < 450, (sizes, emulator, mcp_client)


CATALOG = {
    "namespaces": {"weather": "Weather"},
    "tools": [
        {
            "name": "get_current_weather",
            "namespace": "weather",
            "description": "Weather now.",
            "parameters": {"type": "object", "properties": {}},
        }
    ],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"namespace": "space"}, "field 'namespace': unknown namespace 'space'"),
        ({"parameters": {"type": "string"}}, "field 'parameters': must be an object schema"),
        ({"description": 3}, "field 'tools.0.description'"),
        ({}, "properties [] != signature ['city', 'units']"),
    ],
)
def test_a_bad_catalog_file_names_the_field(change: dict[str, Any], message: str) -> None:
    data = json.loads(json.dumps(CATALOG))
    data["tools"][0].update(change)
    with pytest.raises(CatalogDataError) as info:
        parse_catalog(json.dumps(data))
    assert message in str(info.value)
