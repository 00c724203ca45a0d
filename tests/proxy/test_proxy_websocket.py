"""The Responses WebSocket transport through the proxy, offline, in front of the emulator: each
`response.create` and its events is one stored exchange, grouped into conversations like HTTP
ones; an upstream that refuses the upgrade gives the client its refusal and stores nothing;
no key is stored."""

from __future__ import annotations

import asyncio
import contextlib
import json
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
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from dtl_notebook.cache.store_reader import load_store
from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.live.http_server import ThreadedServer
from dtl_notebook.proxy import Proxy
from dtl_notebook.proxy.websocket_relay import CLOSED_EARLY

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
            await socket.send(json.dumps(body))
            events = []
            while not events or events[-1]["type"] not in LAST:
                events.append(json.loads(await socket.recv()))
            answers.append(events)
            done = events[-1].get("response", {}).get("id")
            await socket.send(json.dumps({"type": "response.processed", "response_id": done}))
    return answers


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
        answers = asyncio.run(converse(socket_url(proxy), first))
        answers += asyncio.run(converse(socket_url(proxy), other))
        # the next turn of session a over HTTP joins its conversation
        body = create("session-a", ["list files", "more", "and"])
        del body["type"]
        reply = httpx2.post(f"{proxy.url}/v1/responses", json=body, timeout=60)
        assert reply.status_code == 200
        assert proxy.store_queue is not None and proxy.store_queue.wait(4)
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
        answers = asyncio.run(converse(socket_url(proxy), [broken]))
        assert proxy.store_queue is not None and proxy.store_queue.wait(1)
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
            asyncio.run(converse(socket_url(proxy), [create("session-d", ["hi"])]))
        assert proxy.store_queue is not None
        proxy.store_queue.flush()
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
        asyncio.run(converse(socket_url(proxy), [create("session-e", ["hi"])]))
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
        header, event, data = asyncio.run(leave_early(socket_url(proxy)))
        assert proxy.store_queue is not None and proxy.store_queue.wait(1)
    assert header == "true" and event["response"]["id"] == "resp_half" and data == b"\x00binary"
    ((status, failure, body),) = sqlite3.connect(store).execute(
        "SELECT status, failure, response_body FROM exchanges"
    )
    assert status == 200 and failure == CLOSED_EARLY
    assert body.startswith("event: response.created\ndata: ")
