"""The Responses WebSocket transport through the proxy, offline, in front of the emulator: each
`response.create` and its events is one stored exchange, grouped into conversations like HTTP
ones; an upstream that refuses the upgrade gives the client its refusal and stores nothing;
no key is stored."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from dtl_notebook.cache.analyze import analyze_conversations
from dtl_notebook.cache.fail_on import failing_codes
from dtl_notebook.cache.store_reader import load_store
from dtl_notebook.cache.stream_audit import audit_stream
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.live.http_server import ThreadedServer
from dtl_notebook.proxy import Proxy, Summary
from dtl_notebook.proxy.websocket_relay import CLOSED_EARLY
from tests.support.async_run import run_async
from tests.support.recorder_listeners import Heard

KEY = "sk-proj-websocketkey0123456789"
LAST = {"response.completed", "response.failed", "response.incomplete", "error"}


def create(session: str, turns: list[str]) -> dict[str, Any]:
    """A Codex-shaped `response.create`: the whole history, kept by the client."""
    items: list[dict[str, Any]] = []
    for i, turn in enumerate(turns):
        if i:
            text = [{"type": "output_text", "text": f"answer {i}"}]
            items.append(
                {"type": "message", "id": f"msg_{i}", "role": "assistant", "content": text}
            )
        items.append(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": turn}]}
        )
    return {
        "type": "response.create",
        "model": "gpt-5.5",
        "instructions": "You are Codex.",
        "input": items,
        "tools": [{"type": "function", "name": "exec_command", "description": "Runs a command."}],
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": session,
    }


async def converse(url: str, bodies: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Send each body on one socket, reading its events up to the last; acknowledge each."""
    answers = []
    async with connect(url, additional_headers={"Authorization": f"Bearer {KEY}"}) as socket:
        for body in bodies:
            answers.append(await exchange(socket, body))
    return answers


async def exchange(socket: ClientConnection, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Send one body, read its events up to the last, and acknowledge it."""
    await socket.send(json.dumps(body))
    events: list[dict[str, Any]] = []
    while not events or events[-1]["type"] not in LAST:
        events.append(json.loads(await socket.recv()))
    done = events[-1].get("response", {}).get("id")
    await socket.send(json.dumps({"type": "response.processed", "response_id": done}))
    return events


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def socket_url(proxy: Proxy) -> str:
    return proxy.url.replace("http://", "ws://") + "/v1/responses"


def test_each_response_create_is_one_exchange_grouped_like_http(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    store = tmp_path / "ws.sqlite"
    first = [create("session-a", ["list files"]), create("session-a", ["list files", "more"])]
    other = [create("session-b", ["what time is it"])]
    with Proxy(store=store, port=0, upstream_openai=emulator.url) as proxy:
        answers = run_async(converse(socket_url(proxy), first))
        answers += run_async(converse(socket_url(proxy), other))
        # the next turn of session a over HTTP joins its conversation
        body = create("session-a", ["list files", "more", "and"])
        del body["type"]
        reply = httpx2.post(f"{proxy.url}/v1/responses", json=body, timeout=60)
        assert reply.status_code == 200
        assert proxy.recorder is not None and proxy.recorder.wait(4)
    assert [a[-1]["type"] for a in answers] == ["response.completed"] * 3
    assert len(emulator.received) == 4  # the acknowledgements were relayed, not answered
    rows = sqlite3.connect(store).execute(
        "SELECT method, conversation, status, streamed, failure FROM exchanges ORDER BY number"
    )
    rows = list(rows)
    assert [r[0] for r in rows] == ["WEBSOCKET"] * 3 + ["POST"]
    conversations = [r[1] for r in rows]
    assert conversations[0] == conversations[1] == conversations[3] != conversations[2]
    assert all(r[2] == 200 and r[4] is None for r in rows)
    assert all(r[3] == 1 for r in rows)  # stored as event streams, HTTP's and the socket's
    exchanges = load_store(store)
    ids = [e.response["id"] for e in exchanges if e.response is not None]
    assert ids[:3] == [a[-1]["response"]["id"] for a in answers]
    assert exchanges[1].request["input"][-1]["content"][0]["text"] == "more"
    # read as the API takes Codex's bodies: notes, never "invalid" (the view shows these)
    assert not [n for e in exchanges for n in e.notes if "invalid" in n]
    assert all(KEY.encode() not in p.read_bytes() for p in tmp_path.iterdir())


def test_a_refusal_inside_the_socket_is_stored_with_its_status(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    store = tmp_path / "ws.sqlite"
    broken = create("session-c", ["hello"])
    broken["input"][0]["role"] = "tool"
    with Proxy(store=store, port=0, upstream_openai=emulator.url) as proxy:
        answers = run_async(converse(socket_url(proxy), [broken]))
        assert proxy.recorder is not None and proxy.recorder.wait(1)
    assert answers[0][-1]["type"] == "error" and answers[0][-1]["status"] == 400
    ((status, failure),) = sqlite3.connect(store).execute("SELECT status, failure FROM exchanges")
    assert status == 400 and failure is None


async def _refuse(websocket: WebSocket) -> None:
    body = {"error": {"message": "WebSockets are not served here", "type": "invalid_request_error"}}
    await websocket.send_denial_response(JSONResponse(body, 426, headers={"x-refused": "yes"}))


def test_an_upgrade_the_upstream_refuses_reaches_the_client_and_stores_nothing(
    tmp_path: Path,
) -> None:
    store = tmp_path / "ws.sqlite"
    refusing = ThreadedServer(Starlette(routes=[WebSocketRoute("/v1/responses", _refuse)]))
    with refusing, Proxy(store=store, port=0, upstream_openai=refusing.url) as proxy:
        with pytest.raises(InvalidStatus) as refused:
            run_async(converse(socket_url(proxy), [create("session-d", ["hi"])]))
        assert proxy.recorder is not None
        proxy.recorder.flush()
    response = refused.value.response
    assert response.status_code == 426
    assert response.headers["x-refused"] == "yes"
    assert json.loads(response.body)["error"]["message"] == "WebSockets are not served here"
    assert sqlite3.connect(store).execute("SELECT count(*) FROM exchanges").fetchone() == (0,)


def test_an_unreachable_upstream_is_a_502_refusal(tmp_path: Path) -> None:
    with ThreadedServer(Starlette()) as closed:
        gone = closed.url  # a port nothing listens on once this server has stopped
    proxy = Proxy(store=tmp_path / "ws.sqlite", port=0, upstream_openai=gone)
    with proxy, pytest.raises(InvalidStatus) as refused:
        run_async(converse(socket_url(proxy), [create("session-e", ["hi"])]))
    assert refused.value.response.status_code == 502
    assert "unreachable" in json.loads(refused.value.response.body)["error"]["message"]


async def _half_answer(websocket: WebSocket) -> None:
    """Accepts with the headers Codex reads, starts one response and never ends it."""
    await websocket.accept(headers=[(b"x-reasoning-included", b"true"), (b"openai-model", b"m")])
    await websocket.receive_text()
    created = {"type": "response.created", "response": {"id": "resp_half", "status": "queued"}}
    await websocket.send_text(json.dumps(created))
    await websocket.send_bytes(b"\x00binary")
    with contextlib.suppress(WebSocketDisconnect):
        await websocket.receive_text()  # until the client leaves


def test_handshake_headers_and_a_response_cut_by_the_client(tmp_path: Path) -> None:
    store = tmp_path / "ws.sqlite"
    upstream = ThreadedServer(Starlette(routes=[WebSocketRoute("/v1/responses", _half_answer)]))

    async def leave_early(url: str) -> tuple[str, dict[str, Any], bytes]:
        async with connect(url) as socket:
            await socket.send(json.dumps(create("session-f", ["hi"])))
            first, second = await socket.recv(), await socket.recv()
            assert isinstance(first, str) and isinstance(second, bytes)
            return socket.response.headers["x-reasoning-included"], json.loads(first), second

    with upstream, Proxy(store=store, port=0, upstream_openai=upstream.url) as proxy:
        header, event, data = run_async(leave_early(socket_url(proxy)))
        assert proxy.recorder is not None and proxy.recorder.wait(1)
    assert header == "true" and event["response"]["id"] == "resp_half" and data == b"\x00binary"
    ((status, failure, body),) = sqlite3.connect(store).execute(
        "SELECT status, failure, response_body FROM exchanges"
    )
    assert status == 200 and failure == CLOSED_EARLY
    assert body.startswith("event: response.created\ndata: ")


def test_a_codex_session_of_continuations_is_audited_without_a_break(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    """Codex over its socket sends each turn as a `previous_response_id` continuation with
    only its new items: the audit reads it after what it continues, as the server does, so
    the predictions are the emulator's reported figures and nothing is an error."""
    store = tmp_path / "codex.sqlite"
    first = create("session-c", ["list files"])
    first["instructions"] = "You are Codex, a coding agent. " * 300
    turns = ["more", "and the tests", "thanks"]
    heard, lines = Heard(), list[str]()
    summary = Summary(emit=lines.append)
    listeners: list[Any] = [heard, summary]
    with Proxy(store=store, port=0, upstream_openai=emulator.url, listeners=listeners) as proxy:
        answers = run_async(continue_on_one_socket(socket_url(proxy), first, turns))
        assert proxy.recorder is not None and proxy.recorder.wait(4)
        heard.wait_for(8)  # each request arrived and finished
    summary.close()
    # the proxy's line: one item sent of those the model sees, predicted as reported
    assert [re.search(r"continues \d+/\d+", line) is not None for line in lines] == [
        False,
        True,
        True,
        True,
    ]
    predicted = [re.search(r"predicted (\d+)/", line) for line in lines]
    reported = [re.search(r"reported (\d+)/", line) for line in lines]
    assert [m.group(1) for m in predicted[1:] if m] == [m.group(1) for m in reported[1:] if m]
    assert [a[-1]["type"] for a in answers] == ["response.completed"] * 4
    exchanges = load_store(store)
    assert [e.request.get("previous_response_id") for e in exchanges] == [
        None,
        *(a[-1]["response"]["id"] for a in answers[:-1]),
    ]
    rows = sqlite3.connect(store).execute("SELECT conversation FROM exchanges ORDER BY number")
    assert len({r[0] for r in rows}) == 1  # linked by the response ids, one conversation
    report = analyze_conversations(
        [e.request for e in exchanges], "openai-responses", [e.response for e in exchanges]
    )
    later = report.entries[1:]
    assert all(e.reported is not None for e in later)
    assert [e.cached_tokens for e in later] == [e.reported.cached for e in later if e.reported]
    assert all(e.cached_tokens >= 1024 for e in later)
    assert [e.continued.sent for e in later if e.continued] == [1, 1, 1]
    failing = failing_codes("error", "--fail-on")
    findings = [f.code for group in audit_stream(store) for f in group.findings]
    assert not [code for code in findings if code in failing], findings


async def continue_on_one_socket(
    url: str, first: dict[str, Any], turns: list[str]
) -> list[list[dict[str, Any]]]:
    """`first`, then each turn as a continuation of the latest response: its new item only."""
    async with connect(url, additional_headers={"Authorization": f"Bearer {KEY}"}) as socket:
        answers = [await exchange(socket, first)]
        for turn in turns:
            text = [{"type": "input_text", "text": turn}]
            body = {
                **first,
                "previous_response_id": answers[-1][-1]["response"]["id"],
                "input": [{"type": "message", "role": "user", "content": text}],
            }
            answers.append(await exchange(socket, body))
    return answers
