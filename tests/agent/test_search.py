from __future__ import annotations

import json

import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import SearchQueryError, make_engine
from dtl_notebook.agent.search import document, tokenize
from tests.support.tools import make_tools


def test_tokenize_splits_snake_and_camel() -> None:
    assert tokenize("get_shippingETA now") == ["get", "shipping", "eta", "now"]


def test_document_indexes_argument_names_and_descriptions() -> None:
    tool = make_tools()[1]
    doc = document(tool)
    assert "order_id" in doc and "Order identifier" in doc and "shipping ETA" in doc


@pytest.mark.parametrize("engine", ["bm25", "regex", "keyword"])
def test_engines_find_by_description_and_argument(engine: str) -> None:
    e = make_engine(engine)
    e.index(make_tools())
    assert e.search("weather", 5)[0] == "get_weather"
    assert e.search("order" if engine != "regex" else "order_id", 5)[0] == "get_shipping_eta"
    assert e.search("nothing-like-this-zzz", 5) == []


def test_bm25_ranks_and_limits() -> None:
    e = make_engine("bm25")
    e.index(make_tools())
    assert e.search("shipping eta order", 1) == ["get_shipping_eta"]
    assert len(e.search("get file weather numbers", 2)) == 2


def test_regex_is_case_insensitive_and_limited() -> None:
    e = make_engine("regex")
    e.index(make_tools())
    assert e.search("WEATHER", 5) == ["get_weather"]
    with pytest.raises(SearchQueryError, match="limit is 200 characters"):
        e.search("a" * 201, 5)
    with pytest.raises(SearchQueryError, match="invalid regular expression"):
        e.search("(unclosed", 5)


@pytest.mark.parametrize("engine", ["bm25", "keyword"])
def test_empty_and_long_queries(engine: str) -> None:
    e = make_engine(engine)
    e.index(make_tools())
    with pytest.raises(SearchQueryError, match="non-empty"):
        e.search("   ", 5)
    with pytest.raises(SearchQueryError, match="limit is 500"):
        e.search("x" * 501, 5)
    with pytest.raises(SearchQueryError, match="no searchable words"):
        e.search("!!!", 5)


def test_unknown_engine() -> None:
    with pytest.raises(ValueError, match="bm25, regex, keyword"):
        make_engine("embedding")
    with pytest.raises(ValueError, match="unknown search engine"):
        Session(search="embedding")


def run_search(s: Session, cid: str, **args: object):
    call = ToolCall(id=cid, name="tool_search", arguments=dict(args))
    s.assistant(tool_calls=[call])
    return s.execute(call)


def test_tool_search_activates_by_append_and_marks() -> None:
    s = Session(tools=make_tools(), active=["tool_search", "read_file"])
    s.user("weather and shipping")
    r = run_search(s, "c1", query="weather")
    hits = json.loads(r.text)["tools"]
    assert hits[0] == {"name": "get_weather", "description": "Get current weather for a location"}
    assert s.active_tools[:2] == ["tool_search", "read_file"]
    assert "get_weather" in s.active_tools
    assert r.added_tool_names == [n for n in s.active_tools[2:]]
    assert r.added_tools[0].name == r.added_tool_names[0]


def test_tool_search_already_active_hits_write_no_marker() -> None:
    s = Session(tools=make_tools(), active=["tool_search", "read_file"])
    s.user("read")
    r = run_search(s, "c1", query="read text file", limit=1)
    assert json.loads(r.text)["tools"][0]["name"] == "read_file"
    assert r.added_tool_names is None
    assert s.active_tools == ["tool_search", "read_file"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"query": ""}, "non-empty"),
        ({"query": "x" * 600}, "limit is 500"),
        ({"query": "weather", "limit": 51}, "maximum of 50"),
        ({"query": "weather", "limit": 0}, "minimum of 1"),
        ({}, "'query' is a required property"),
    ],
)
def test_tool_search_bad_queries_are_error_results(args: dict, needle: str) -> None:
    s = Session(tools=make_tools(), active=["tool_search"])
    s.user("x")
    r = run_search(s, "c1", **args)
    assert r.is_error
    assert needle in r.text
    assert s.active_tools == ["tool_search"]


def test_regex_session_search() -> None:
    s = Session(tools=make_tools(), active=["tool_search"], search="regex")
    s.user("x")
    r = run_search(s, "c1", query="ship.*eta")
    assert json.loads(r.text)["tools"][0]["name"] == "get_shipping_eta"
    assert r.added_tool_names == ["get_shipping_eta"]


def test_index_follows_registry_changes() -> None:
    s = Session(tools=make_tools(), active=["tool_search"])
    s.user("x")
    run_search(s, "c1", query="weather")
    s.registry.register(Tool("get_tides", description="Ocean tide tables for a harbour"))
    r = run_search(s, "c2", query="tide harbour")
    assert json.loads(r.text)["tools"][0]["name"] == "get_tides"
