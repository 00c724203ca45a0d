from __future__ import annotations

import json
from pathlib import Path

import pytest

from dtl_notebook import Session, ToolCall
from dtl_notebook.agent import SessionFileError
from tests.support.tools import make_tools


def build() -> Session:
    s = Session(
        system="Sys",
        tools=make_tools(),
        active=["tool_search", "read_file"],
        sections={"tool_catalog": "- get_weather"},
    )
    s.user("weather in Paris")
    tc = ToolCall(id="c1", name="tool_search", arguments={"query": "weather"})
    s.assistant("Searching", tool_calls=[tc])
    s.execute(tc)
    tc2 = ToolCall(id="c2", name="get_weather", arguments={"location": "Paris"})
    s.assistant(tool_calls=[tc2])
    s.execute(tc2)
    s.assistant("It is sunny.")
    return s


def test_round_trip_is_lossless_and_rebinds(tmp_path: Path) -> None:
    s = build()
    path = tmp_path / "s.json"
    s.save(path)
    loaded = Session.load(path, make_tools())
    assert loaded.to_dict() == s.to_dict()
    assert loaded.messages == s.messages
    assert loaded.active_tools == s.active_tools
    assert dict(loaded.prompt) == dict(s.prompt)
    loaded.user("and Rome?")
    tc = ToolCall(id="c3", name="get_weather", arguments={"location": "Rome"})
    loaded.assistant(tool_calls=[tc])
    assert loaded.execute(tc).text == "Sunny, 21C in Rome"
    tc = ToolCall(id="c4", name="tool_search", arguments={"query": "shipping"})
    loaded.assistant(tool_calls=[tc])
    assert loaded.execute(tc).added_tool_names == ["get_shipping_eta"]
    assert loaded.active_tools == ["tool_search", "read_file", "get_weather", "get_shipping_eta"]


def test_missing_callable_errors_only_when_executed(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    build().save(path)
    loaded = Session.load(path)
    loaded.user("again")
    tc = ToolCall(id="c3", name="get_weather", arguments={"location": "Rome"})
    loaded.assistant(tool_calls=[tc])
    r = loaded.execute(tc)
    assert r.is_error and "no implementation bound" in r.text


def test_functions_mapping_rebinds(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    build().save(path)
    loaded = Session.load(path, {"get_weather": lambda location: f"Rain in {location}"})
    loaded.user("again")
    tc = ToolCall(id="c3", name="get_weather", arguments={"location": "Oslo"})
    loaded.assistant(tool_calls=[tc])
    assert loaded.execute(tc).text == "Rain in Oslo"


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: "{not json", "not valid JSON"),
        (lambda d: json.dumps({**d, "schema_version": 99}), "newer than this dtl_notebook"),
        (lambda d: json.dumps({**d, "format": "x"}), "not a saved session"),
        (lambda d: json.dumps({k: v for k, v in d.items() if k != "messages"}), "messages"),
        (lambda d: json.dumps({**d, "active": ["ghost"]}), "unknown tool 'ghost'"),
        (lambda d: json.dumps({**d, "messages": [{"role": "x"}]}), "messages[0]"),
        (lambda d: json.dumps({**d, "tools": [{"name": "bad name"}]}), "bad name"),
        (lambda d: "[" * 100_000 + "]" * 100_000, "nested too deep to read"),
    ],
)
def test_corrupt_files_raise_clear_errors(tmp_path: Path, mutate, needle: str) -> None:
    s = build()
    path = tmp_path / "s.json"
    s.save(path)
    path.write_text(mutate(json.loads(path.read_text())))
    before = path.read_text()
    with pytest.raises(SessionFileError) as err:
        Session.load(path)
    assert needle in str(err.value)
    assert str(path) in str(err.value)
    assert path.read_text() == before


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="cannot read"):
        Session.load(tmp_path / "nope.json")


def test_a_function_name_that_binds_no_tool_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    build().save(path)
    with pytest.raises(ValueError, match=r"functions\['get_wether'\]: no tool of that name"):
        Session.load(path, {"get_wether": lambda location: "Rain"})
    assert Session.load(path, make_tools())  # Tools given as a list bind what they name
