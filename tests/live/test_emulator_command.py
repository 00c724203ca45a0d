"""`python -m dtl_notebook emulator`: a separate process, awaited by its first line (its URL),
serving Messages, Responses over HTTP and WebSocket, and Chat Completions offline; it prints
the agents' settings and stops on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from websockets.asyncio.client import connect

from tests.support.async_run import run_async

ROOT = Path(__file__).resolve().parents[2]
READY = re.compile(r"^dtl_notebook emulator on (http://127\.0\.0\.1:\d+) ")


@pytest.fixture
def command() -> Iterator[tuple[str, list[str]]]:
    """The running command's URL and the lines it printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "dtl_notebook", "emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # blocks until it serves (or ends)
    found = READY.match(first)
    if found is None:
        process.kill()
        pytest.fail(f"no URL line: {first!r} {process.stderr.read() if process.stderr else ''}")
    lines = [first]
    while not lines[-1].startswith("Ctrl-C"):
        lines.append(process.stdout.readline())
    try:
        yield found.group(1), lines
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0


def test_it_serves_every_endpoint_offline(command: tuple[str, list[str]]) -> None:
    url, lines = command
    user = {"role": "user", "content": "hello"}
    messages = httpx2.post(
        f"{url}/v1/messages",
        json={"model": "claude-sonnet-4-6", "max_tokens": 50, "messages": [user]},
        timeout=60,
    )
    assert messages.status_code == 200 and messages.json()["type"] == "message"
    responses = httpx2.post(
        f"{url}/v1/responses", json={"model": "gpt-5.4", "input": "hello"}, timeout=60
    )
    assert responses.json()["object"] == "response"
    chat = httpx2.post(
        f"{url}/v1/chat/completions", json={"model": "gpt-5.4", "messages": [user]}, timeout=60
    )
    assert chat.json()["object"] == "chat.completion"

    async def over_socket() -> str:
        async with connect(url.replace("http", "ws") + "/v1/responses") as socket:
            await socket.send(
                json.dumps({"type": "response.create", "model": "gpt-5.4", "input": "hi"})
            )
            while (event := json.loads(await socket.recv()))["type"] != "response.completed":
                pass
            return str(event["response"]["object"])

    assert run_async(over_socket()) == "response"
    shown = "".join(lines)
    assert f"ANTHROPIC_BASE_URL={url} claude" in shown
    assert f'base_url="{url}/v1",env_key="OPENAI_API_KEY",wire_api="responses"' in shown
    assert "supports_websockets=true" in shown


def test_a_port_in_use_is_a_clear_error(command: tuple[str, list[str]]) -> None:
    url, _ = command
    port = url.rsplit(":", 1)[1]
    done = subprocess.run(
        [sys.executable, "-m", "dtl_notebook", "emulator", "--port", port],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 1
    assert f"emulator: cannot listen on 127.0.0.1:{port}" in done.stderr
