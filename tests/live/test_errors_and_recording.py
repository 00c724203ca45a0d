"""A failed turn's traceback holds no key; a recording follows the agent everywhere it sends."""

from __future__ import annotations

import json
import logging
import traceback
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from dtl_notebook import Session
from dtl_notebook.live import Agent, ProviderError, ReplayTransport, emulator_transport
from dtl_notebook.live.agent import TurnError
from dtl_notebook.live.recording import Recorder
from dtl_notebook.live.transport import SDKTransport
from dtl_notebook.wire import WireRequest
from tests.support.tools import make_tools

ANTHROPIC = "claude-sonnet-4-6"
KEY = "sk-ant-api03-EchoedBackByTheServer0123456789"


def session() -> Session:
    s = Session(tools=make_tools(), active=["tool_search", "read_file"])
    s.user("hi")
    s.assistant("hello")
    return s


def refusing_server(body: dict[str, Any], request_id: str) -> httpx2.Client:
    """An HTTP server in process that refuses every request with `body`, as a provider (or a
    proxy in front of it) does when it echoes the key it was given."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        headers = {"request-id": request_id, "x-request-id": request_id}
        return httpx2.Response(401, json=body, headers=headers)

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def anthropic_refusing() -> SDKTransport:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": f"invalid x-api-key: {KEY}"},
    }
    client = anthropic.Anthropic(
        api_key=KEY,
        base_url="http://refusing.invalid",
        http_client=refusing_server(body, "req_011CKeyEcho"),
        max_retries=0,
    )
    return SDKTransport("anthropic", client, "live")


def shown(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def test_a_provider_error_keeps_status_type_and_request_id_but_no_key() -> None:
    s = session()
    s.user("again")
    from dtl_notebook.wire import build_request

    request: WireRequest = build_request(s, "anthropic", ANTHROPIC)
    with pytest.raises(ProviderError) as info:
        anthropic_refusing().send(request)
    err = info.value
    assert (err.status, err.type, err.request_id) == (
        401,
        "authentication_error",
        "req_011CKeyEcho",
    )
    assert "req_011CKeyEcho" in str(err) and "HTTP 401" in str(err)
    assert KEY not in shown(err) and "sk-ant-api03" not in shown(err)


def test_openai_errors_echoing_a_key_are_masked_in_the_whole_traceback() -> None:
    secret = "sk-proj-EchoedByAProxy0123456789abcdef"
    body = {"error": {"message": f"Incorrect API key provided: {secret}", "code": "bad_key"}}
    client = openai.OpenAI(
        api_key=secret,
        base_url="http://refusing.invalid/v1",
        http_client=refusing_server(body, "req_openai_1"),
        max_retries=0,
    )
    agent = Agent(
        session(), "openai-chat", "gpt-5.4", transport=SDKTransport("openai-chat", client, "live")
    )
    with pytest.raises(TurnError) as info:
        agent.run("and now?")
    text = shown(info.value)
    assert secret not in text and "sk-proj-" not in text
    assert "bad_key" in text and "req_openai_1" in text


def test_a_failed_turn_logged_with_its_traceback_shows_no_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = Agent(session(), "anthropic", ANTHROPIC, transport=anthropic_refusing())
    with pytest.raises(TurnError) as info:
        agent.run("What's the weather in Paris?")
    assert isinstance(info.value.__cause__, ProviderError)  # the cause is kept, masked already
    text = shown(info.value)
    assert KEY not in text and "authentication_error" in text and "req_011CKeyEcho" in text
    with caplog.at_level(logging.ERROR):
        try:
            raise info.value
        except TurnError:
            logging.getLogger("a user's script").exception("the turn failed")
    assert "the turn failed" in caplog.text and KEY not in caplog.text


class LeakyTransport:
    """A user's own transport whose error (and the error it was raised from) holds the key."""

    name = "mine"

    def send(self, request: WireRequest) -> dict[str, Any]:
        try:
            raise ConnectionError(f"proxy refused Authorization: Bearer {KEY}")
        except ConnectionError as inner:
            raise RuntimeError(f"upstream failed for key {KEY}") from inner


def test_any_cause_holding_a_key_is_chained_masked_with_its_traceback() -> None:
    agent = Agent(session(), "anthropic", ANTHROPIC, transport=LeakyTransport())
    with pytest.raises(TurnError) as info:
        agent.run("What's the weather in Paris?")
    text = shown(info.value)
    assert KEY not in text and "Bearer sk-" not in text
    assert "builtins.RuntimeError: upstream failed for key [redacted]" in text
    assert "builtins.ConnectionError" in text and "in send" in text  # where it came from


def exchanges(path: Path) -> list[tuple[str, str]]:
    return [(e["provider"], e["model"]) for e in ReplayTransport(path).exchanges]


def test_the_recording_follows_a_switch_and_a_transport_change(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    agent = Agent(session(), "anthropic", ANTHROPIC, record=path)
    agent.run("What's the weather in Paris?")
    first = len(agent.steps)
    agent.switch("openai-responses", "gpt-5.4")
    agent.run("And in Oslo?")
    second = len(agent.steps)
    agent.use_transport(emulator_transport("openai-responses"))
    agent.run("And in Rome?")
    recorded = exchanges(path)
    assert len(recorded) == len(agent.steps)
    assert recorded[:first] == [("anthropic", ANTHROPIC)] * first
    assert recorded[first:] == [("openai-responses", "gpt-5.4")] * (len(agent.steps) - first)
    assert second > first
    lines = path.read_text().splitlines()
    assert [json.loads(line)["transport"] for line in lines] == ["emulator"] * len(lines)


def test_a_recorder_passed_in_records_beside_the_agents_own_file(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "agent.jsonl", tmp_path / "other.jsonl"
    agent = Agent(session(), "anthropic", ANTHROPIC, record=mine)
    agent.run("What's the weather in Paris?")
    before = len(agent.steps)
    agent.use_transport(Recorder(emulator_transport("anthropic"), theirs, "anthropic", ANTHROPIC))
    agent.run("And in Oslo?")
    assert len(exchanges(mine)) == len(agent.steps)  # the recording went on
    assert len(exchanges(theirs)) == len(agent.steps) - before
    agent.use_transport(Recorder(emulator_transport("anthropic"), mine, "anthropic", ANTHROPIC))
    agent.run("And in Rome?")
    assert len(exchanges(mine)) == len(agent.steps)  # its own file: each exchange once


def test_a_transport_of_another_provider_is_named() -> None:
    agent = Agent(session(), "anthropic", ANTHROPIC)
    with pytest.raises(ValueError, match=r"transport speaks 'openai-chat' but this agent sends"):
        agent.use_transport(emulator_transport("openai-chat"))
    assert agent.transport.name == "emulator" and agent.run("hi").text  # still its own


def chain(exc: BaseException | None) -> list[BaseException]:
    """Every exception reachable from `exc`: causes and contexts, displayed or hidden."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [item.__cause__, item.__context__]
    return seen


def holds_key(exc: BaseException, key: str) -> bool:
    """The key in the exception's text, its arguments, or an SDK error's body and request."""
    texts = [str(exc), repr(exc.args), repr(getattr(exc, "body", None))]
    response = getattr(exc, "response", None)
    if response is not None:
        texts.append(repr(dict(response.request.headers)))
    return any(key in text for text in texts)


def test_no_exception_reachable_from_a_failed_turn_holds_the_key() -> None:
    agent = Agent(session(), "anthropic", ANTHROPIC, transport=anthropic_refusing())
    with pytest.raises(TurnError) as info:
        agent.run("What's the weather in Paris?")
    reachable = chain(info.value)
    assert any(isinstance(e, ProviderError) for e in reachable)
    assert not any(holds_key(e, KEY) for e in reachable)
    assert not any(isinstance(e, anthropic.APIError) for e in reachable)  # nor the SDK's own

    class Failing:  # a user's transport whose error text holds the key
        name = "mine"

        def send(self, request: WireRequest) -> Any:
            raise RuntimeError(f"bad key {KEY}")

    agent = Agent(session(), "anthropic", ANTHROPIC, transport=Failing())
    with pytest.raises(TurnError) as info:
        agent.run("again")
    assert not any(holds_key(e, KEY) for e in chain(info.value))
