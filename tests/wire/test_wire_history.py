"""History on the wire: immutable load points, provider switching, byte-stable requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.wire import build_request, parse_response
from tests.support.wire_requests import (
    ALL_PROVIDERS,
    ANTHROPIC_MODEL,
    CHAT_MODEL,
    CRM_DESCRIPTION,
    HOSTED_OUTPUT_DOC,
    KIMI_MODEL,
    RESPONSES_MODEL,
    anthropic_search_response,
    blocks_of_type,
    build_all,
    doc_tools,
    responses_body,
    searched_session,
    tool_names,
)

ROOT = Path(__file__).resolve().parents[2]

# (provider, model, options) of every mode that expresses a load point in history
LOAD_MODES = [
    ("anthropic", ANTHROPIC_MODEL, {}),
    ("openai-responses", RESPONSES_MODEL, {}),
    ("openai-responses", RESPONSES_MODEL, {"load_mode": "tool_search"}),
    ("kimi", KIMI_MODEL, {}),
]


def _history_part(provider: str, payload: dict) -> list:
    return payload["input"] if provider == "openai-responses" else payload["messages"]


def _unmarked(value: object) -> object:
    """`value` without its cache_control marks (the last breakpoint moves as history grows)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _continued(s: Session) -> Session:
    s.assistant("It is sunny in Paris.")
    s.user("Thanks!")
    return s


# -- history is immutable -------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "model", "options"), LOAD_MODES)
def test_redefining_a_loaded_tool_never_changes_its_load_point(
    provider: str, model: str, options: dict
) -> None:
    s = _continued(searched_session())
    before = build_request(s, provider, model, **options)
    s.registry.register(
        Tool(
            "get_weather",
            description="Weather v2 with forecasts",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}},
        ),
        replace=True,
    )
    after = build_request(s, provider, model, **options)

    assert _history_part(provider, after.payload) == _history_part(provider, before.payload)
    assert after.load_points == before.load_points
    assert any("was redefined after its load point" in n for n in after.notes)
    if provider == "anthropic":
        # the tool_reference target is the definition the model was given at the load point
        assert after.payload["tools"] == before.payload["tools"]
        assert after.payload["tools"][-1]["description"] == "Get current weather for a location"
    else:
        assert after.payload.get("tools") == before.payload.get("tools")


def test_redefinition_before_the_load_point_is_what_gets_loaded() -> None:
    """The snapshot is taken at the marker: a definition changed before it is the one sent."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.registry.register(
        Tool("get_weather", description="Weather, early edit", execute=lambda: "sun"), replace=True
    )
    s.user("weather?")
    s.assistant(tool_calls=[ToolCall(id="c1", name="tool_search", arguments={"query": "weather"})])
    s.execute(s.pending_calls()[0])
    req = build_request(s, "openai-responses", RESPONSES_MODEL)
    assert req.payload["input"][-1]["tools"][0]["description"] == "Weather, early edit"


@pytest.mark.parametrize(("provider", "model", "options"), LOAD_MODES)
def test_removing_a_loaded_tool_keeps_its_load_point(
    provider: str, model: str, options: dict
) -> None:
    s = _continued(searched_session())
    before = build_request(s, provider, model, **options)
    s.set_active_tools(["tool_search", "read_file"])
    after = build_request(s, provider, model, **options)

    # the removal is an event of its own after the history, which stays as it was (but for
    # the moving breakpoint) with its load points
    old, new = (_history_part(provider, r.payload) for r in (before, after))
    assert len(new) == len(old) + 1
    assert _unmarked(new[: len(old)]) == _unmarked(old)
    assert after.load_points[:-1] == before.load_points
    removal = after.load_points[-1]
    assert (removal.kind, removal.tools) == ("removal", ["get_weather"])
    assert any("history keeps their load points" in n for n in after.notes)
    if provider == "anthropic":
        # the reference still resolves: the recorded definition stays, deferred
        assert after.payload["tools"] == before.payload["tools"]
        assert after.payload["tools"][-1]["defer_loading"] is True
    else:
        assert after.payload.get("tools") == before.payload.get("tools")


def test_removed_tool_stays_declared_on_chat_and_a_later_call_is_refused() -> None:
    s = _continued(searched_session())
    before = tool_names(build_request(s, "openai-chat", CHAT_MODEL).payload)
    s.set_active_tools(["tool_search", "read_file"])
    # soft removal: Chat Completions has no way to withdraw a tool without rewriting tools[]
    assert tool_names(build_request(s, "openai-chat", CHAT_MODEL).payload) == before
    # the model may still call it (its definition is in the prefix): refused locally
    s.assistant(tool_calls=[ToolCall(id="late", name="get_weather", arguments={"location": "X"})])
    result = s.execute(s.pending_calls()[0])
    assert result.is_error and "removed" in result.text
    for provider, request in build_all(s).items():
        assert request.payload, provider


def test_native_client_output_is_immutable_too() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("ETA?")
    body = responses_body(
        [
            {
                "type": "tool_search_call",
                "execution": "client",
                "call_id": "call_ts",
                "status": "completed",
                "arguments": {"query": "shipping ETA"},
            }
        ]
    )
    s.append(parse_response(body, provider="openai-responses").message)
    s.execute(s.pending_calls()[0])
    before = build_request(s, "openai-responses", RESPONSES_MODEL, search="native-client")
    s.registry.register(Tool("get_shipping_eta", description="changed"), replace=True)
    middle = build_request(s, "openai-responses", RESPONSES_MODEL, search="native-client")
    s.set_active_tools(["tool_search", "read_file"])
    after = build_request(s, "openai-responses", RESPONSES_MODEL, search="native-client")
    assert before.payload["input"] == middle.payload["input"]
    # the removal is told after the earlier items, which stay as they were
    assert after.payload["input"][:-1] == before.payload["input"]
    assert "no longer available" in after.payload["input"][-1]["content"]
    assert after.payload["tools"] == before.payload["tools"]
    assert before.payload["input"][-1]["tools"][0]["description"] == (
        "Look up shipping ETA details for an order."
    )


def test_unregistering_a_loaded_tool_keeps_history() -> None:
    s = _continued(searched_session())
    before = build_request(s, "openai-responses", RESPONSES_MODEL)
    s.registry.unregister("get_weather")
    after = build_request(s, "openai-responses", RESPONSES_MODEL)
    assert after.payload["input"] == before.payload["input"]


def test_a_marker_for_an_already_active_tool_leaves_it_in_the_prefix() -> None:
    """Only a pure append is a load point: tool_result(added_tool_names=...) naming a tool
    that is active already marks only the new names, as Session.execute does, so the tools
    array (and the cached prefix) stays as it was."""
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("x")
    before = build_request(s, "anthropic", ANTHROPIC_MODEL)
    s.assistant(tool_calls=[ToolCall(id="c1", name="tool_search", arguments={"query": "x"})])
    result = s.tool_result("c1", "found", added_tool_names=["read_file", "get_weather"])
    after = build_request(s, "anthropic", ANTHROPIC_MODEL)
    assert result.added_tool_names == ["get_weather"]
    assert "read_file" not in s.split().deferred and "get_weather" in s.split().deferred
    assert after.payload["tools"][: len(before.payload["tools"])] == before.payload["tools"]
    assert [p.tools for p in after.load_points] == [["get_weather"]]
    assert s.active_tools == ["tool_search", "read_file", "get_weather"]


# -- provider switching ----------------------------------------------------------------------


def _anthropic_native_transcript() -> Session:
    """A session driven by Anthropic's server search, then a client search with a marker."""
    s = Session(
        system="You are a helpful agent.", tools=doc_tools(), active=["tool_search", "read_file"]
    )
    s.user("What's the weather in San Francisco?")
    reply = parse_response(anthropic_search_response(), provider="anthropic")
    s.append(reply.message)
    s.activate(reply.loaded_tool_names)
    s.execute(s.pending_calls()[0])
    s.assistant(
        tool_calls=[ToolCall(id="toolu_2", name="tool_search", arguments={"query": "time"})]
    )
    s.execute(s.pending_calls()[0])
    s.assistant("It is 18 degrees; I can also tell the time now.")
    s.user("What time is it in Tokyo?")
    return s


def test_anthropic_native_transcript_serializes_for_every_provider() -> None:
    s = _anthropic_native_transcript()
    assert s.messages[-3].added_tool_names == ["get_time"]
    requests = build_all(s)  # each one strictly validated
    native = build_request(s, "anthropic", ANTHROPIC_MODEL, search="native-regex")
    assert blocks_of_type(native.payload, "server_tool_use")
    client = requests["anthropic"]  # search="client" declares no server tool: blocks dropped
    assert not blocks_of_type(client.payload, "server_tool_use")
    assert any("server search tool is not declared" in n for n in client.notes)

    for provider in ("openai-responses", "openai-chat", "kimi"):
        request = requests[provider]
        text = request.json()
        assert "server_tool_use" not in text and "srvtoolu_01ABC123" not in text
        assert "tool_search_tool_result" not in text
        dropped = [n for n in request.notes if n.startswith("dropped a anthropic")]
        assert len(dropped) == 2, request.notes
        assert "toolu_01XYZ789" in text  # the ordinary call survives in neutral form

    responses = requests["openai-responses"].payload["input"]
    assert {
        "type": "function_call",
        "call_id": "toolu_01XYZ789",
        "name": "get_weather",
        "arguments": '{"location":"San Francisco","unit":"fahrenheit"}',
    } in responses
    loads = [i for i in responses if i.get("type") == "additional_tools"]
    assert [[t["name"] for t in i["tools"]] for i in loads] == [["get_time"]]
    kimi = requests["kimi"].payload["messages"]
    carriers = [m for m in kimi if m["role"] == "system" and "tools" in m]
    assert [[t["function"]["name"] for t in m["tools"]] for m in carriers] == [["get_time"]]
    # the client marker becomes a tool_reference on Anthropic; the server's reference to
    # get_weather went with its dropped block, so get_weather is an ordinary active tool there
    refs = blocks_of_type(requests["anthropic"].payload, "tool_reference")
    assert [r["tool_name"] for r in refs if "tool_name" in r] == ["get_time"]
    native_refs = blocks_of_type(native.payload, "tool_reference")
    assert [r["tool_name"] for r in native_refs if "tool_name" in r] == ["get_weather", "get_time"]


def test_responses_hosted_transcript_serializes_for_every_provider() -> None:
    s = Session(tools=doc_tools(), active=["tool_search", "read_file"])
    s.user("Open orders of CUST-12345?")
    reply = parse_response(responses_body(HOSTED_OUTPUT_DOC), provider="openai-responses")
    s.append(reply.message)
    s.activate(reply.loaded_tool_names)
    s.execute(s.pending_calls()[0])
    hosted = build_request(
        s, "openai-responses", RESPONSES_MODEL, search="hosted", namespaces={"crm": CRM_DESCRIPTION}
    )
    assert len(blocks_of_type(hosted.payload, "tool_search_output")) == 1
    requests = build_all(s)
    for provider in ("anthropic", "openai-chat", "kimi"):
        text = requests[provider].json()
        assert "tool_search_output" not in text and "tool_search_call" not in text
        assert (
            sum(n.startswith("dropped a openai-responses") for n in requests[provider].notes) == 2
        )
    tool_use = blocks_of_type(requests["anthropic"].payload, "tool_use")
    assert tool_use == [
        {
            "type": "tool_use",
            "id": "call_abc123",
            "name": "list_open_orders",
            "input": {"customer_id": "CUST-12345"},
        }
    ]
    # same provider, hosted search not declared: the hosted items are dropped with a note
    client = requests["openai-responses"]
    assert "tool_search_output" not in client.json()
    assert any("hosted search is not declared" in n for n in client.notes)


def test_the_same_session_serializes_for_every_provider_at_every_point() -> None:
    s = Session(
        system="You are a helpful agent.", tools=doc_tools(), active=["tool_search", "read_file"]
    )
    steps = []

    def snapshot() -> None:
        steps.append(build_all(s))

    s.user("Weather in Paris, then the ETA of order_42.")
    snapshot()
    s.assistant(tool_calls=[ToolCall(id="a1", name="tool_search", arguments={"query": "weather"})])
    s.execute(s.pending_calls()[0])
    snapshot()
    s.assistant(
        text="Searching more.",
        tool_calls=[
            ToolCall(id="a2", name="get_weather", arguments={"location": "Paris"}),
            ToolCall(id="a3", name="tool_search", arguments={"query": "shipping ETA"}),
        ],
    )
    for call in s.pending_calls():
        s.execute(call)
    snapshot()
    s.assistant(
        tool_calls=[ToolCall(id="a4", name="get_shipping_eta", arguments={"order_id": "o42"})]
    )
    s.execute(s.pending_calls()[0])
    snapshot()
    s.assistant("Sunny; it arrives tomorrow.")
    s.prompt["rules"] = "Be concise."
    s.user("Thanks.")
    snapshot()
    assert [sorted(r) for r in steps] == [sorted(p for p, _, _ in ALL_PROVIDERS)] * 5
    last = steps[-1]
    assert last["anthropic"].mode == "tool_reference"
    assert last["openai-responses"].mode == "additional_tools"
    assert [lp.tools for lp in last["anthropic"].load_points] == [
        ["get_weather"],
        ["get_shipping_eta"],
    ]
    assert [lp.tools for lp in last["kimi"].load_points] == [["get_weather"], ["get_shipping_eta"]]


# -- deterministic bytes -------------------------------------------------------------------

_SCRIPT = textwrap.dedent(
    """
    import json
    from dtl_notebook import Session, ToolCall
    from dtl_notebook.wire import build_request
    from tests.support.wire_requests import doc_tools

    def session():
        s = Session(system="You are a helpful agent.", tools=doc_tools(),
                    active=["tool_search", "read_file"])
        s.user("weather and ETA?")
        s.assistant(tool_calls=[
            ToolCall(id="c1", name="tool_search", arguments={"query": "weather"}),
            ToolCall(id="c2", name="tool_search", arguments={"query": "shipping ETA"}),
        ])
        for call in s.pending_calls():
            s.execute(call)
        s.assistant("done")
        s.prompt["rules"] = "Be brief."
        s.user("thanks")
        return s

    MODES = [
        ("anthropic", "claude-opus-4-8", {}),
        ("anthropic", "claude-opus-4-8", {"search": "native-bm25", "cache": "explicit"}),
        ("openai-responses", "gpt-5.4", {}),
        ("openai-responses", "gpt-5.4", {"load_mode": "tool_search"}),
        ("openai-chat", "gpt-5.4", {}),
        ("kimi", "kimi-k2", {}),
    ]
    print(json.dumps([build_request(session(), p, m, **o).json() for p, m, o in MODES]))
    """
)


def _run_script(seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_request_bytes_are_stable_across_builds_and_processes() -> None:
    first = _run_script("4242")  # a fresh process with its own hash seed
    namespace: dict = {}
    exec(_SCRIPT.replace("print(", "RESULT = ("), namespace)  # the same in this process
    assert namespace["RESULT"] == json.dumps(first)
    tool_search = json.loads(first[3])
    ids = [i["call_id"] for i in tool_search["input"] if i.get("type") == "tool_search_call"]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(i.startswith("dtl_tool_load_") for i in ids)
