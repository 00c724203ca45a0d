"""A scripted session used by the context and cache tests: search, load, call, answer."""

from __future__ import annotations

from dtl_notebook import Session, ToolCall
from dtl_notebook.wire import WireRequest, build_request
from tests.support.tools import make_tools

LONG_SYSTEM = "You are a careful logistics assistant. Follow the house rules. " * 120


def session() -> Session:
    return Session(system=LONG_SYSTEM, tools=make_tools(), active=["tool_search", "read_file"])


def append_only_requests(provider: str, model: str, **options: object) -> list[WireRequest]:
    """Four requests of one append-only conversation."""
    s = session()
    out = []
    s.user("What is the weather in Paris?")
    out.append(build_request(s, provider, model, **options))
    call = ToolCall(id="call_1", name="tool_search", arguments={"query": "weather"})
    s.assistant("Searching.", tool_calls=[call])
    s.execute(call)
    out.append(build_request(s, provider, model, **options))
    call = ToolCall(id="call_2", name="get_weather", arguments={"location": "Paris"})
    s.assistant(tool_calls=[call])
    s.execute(call)
    out.append(build_request(s, provider, model, **options))
    s.assistant("It is sunny in Paris.")
    s.user("And the ETA of order_42?")
    out.append(build_request(s, provider, model, **options))
    return out
