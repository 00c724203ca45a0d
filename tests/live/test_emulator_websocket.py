"""The emulator serves the Responses WebSocket transport: each `response.create` is answered
with the events its SSE stream carries, one text message each; a refusal is an `error` event
with the HTTP status; `generate: false` (Codex's prefetch) caches the prefix, generates nothing.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from websockets.asyncio.client import connect

from dtl_notebook.live.emulator.server import EmulatorServer
from tests.support.async_run import run_async


def body(text: str = "list the files") -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "instructions": "You are Codex.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        ],
        "store": False,
        "stream": True,
        "prompt_cache_key": "session",
    }


async def over_socket(url: str, messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    answers = []
    async with connect(url.replace("http://", "ws://") + "/v1/responses") as socket:
        for message in messages:
            await socket.send(json.dumps(message))
            events = [json.loads(await socket.recv())]
            while events[-1]["type"] not in ("response.completed", "error"):
                events.append(json.loads(await socket.recv()))
            answers.append(events)
    return answers


def over_sse(url: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    reply = httpx2.post(f"{url}/v1/responses", json=payload, timeout=60)
    lines = reply.text.splitlines()
    return [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data:")]


def test_socket_events_are_the_sse_stream_events() -> None:
    with EmulatorServer() as http, EmulatorServer() as socket:  # each with a fresh state
        streamed = [over_sse(http.url, body()), over_sse(http.url, body("more"))]
        creates = [
            {"type": "response.create", **body()},
            {"type": "response.create", **body("more")},
        ]
        sent = run_async(over_socket(socket.url, creates))
    assert sent == streamed
    assert sent[1][-1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] >= 0


def test_a_prefetch_generates_nothing_and_refusals_are_error_events() -> None:
    prefetch = {"type": "response.create", **body(), "generate": False, "input": []}
    broken = {"type": "response.create", **body()}
    broken["input"][0]["role"] = "tool"
    unknown = {"type": "session.update"}
    with EmulatorServer() as server:
        answers = run_async(over_socket(server.url, [prefetch, broken, unknown]))
    completed = answers[0][-1]["response"]
    assert completed["output"] == [] and completed["usage"]["output_tokens"] == 0
    assert answers[1] == [answers[1][0]] and answers[1][0]["status"] == 400
    assert answers[1][0]["error"]["param"].startswith("input.0")
    assert "'session.update'" in answers[2][0]["error"]["message"]
