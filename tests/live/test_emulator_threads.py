"""The emulator keeps Anthropic message threads: create, continue, expiry, and the 404 the
SDK reads as `ThreadNotFoundError`; the SDK's own thread helper runs against it."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest

from dtl_notebook.live.emulator import Emulator

MODEL = "claude-sonnet-4-6"
BETA = "message-threads-2026-08-12"
SYSTEM = "You answer questions about the weather. " * 80
TOOLS = [
    {"name": "get_weather", "description": "weather of a city", "input_schema": {"type": "object"}}
]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Seen(httpx2.BaseTransport):
    """Passes every request to the emulator and keeps each body sent."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator, self.bodies = emulator, list[dict[str, Any]]()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return self.emulator.transport.handle_request(request)


def _client(clock: _Clock) -> tuple[anthropic.Anthropic, Emulator, _Seen]:
    emulator = Emulator("anthropic", clock=clock)
    seen = _Seen(emulator)
    client = anthropic.Anthropic(
        api_key="emulator-no-key",
        base_url="http://emulator.invalid",
        http_client=httpx2.Client(transport=seen),
        max_retries=0,
    )
    return client, emulator, seen


def _create(client: anthropic.Anthropic) -> Any:
    return client.beta.messages.create(
        model=MODEL,
        max_tokens=200,
        system=SYSTEM,
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "Is it raining in Paris?"}],
        thread={"type": "create"},
        cache_control={"type": "ephemeral"},
        betas=[BETA],
    )


def _continue(client: anthropic.Anthropic, previous: str, text: str) -> Any:
    return client.beta.messages.create(
        model=MODEL,
        max_tokens=200,
        messages=[{"role": "user", "content": text}],
        thread={"type": "continue", "previous_message_id": previous},
        cache_control={"type": "ephemeral"},
        betas=[BETA],
    )


def test_a_continuation_is_answered_from_the_whole_thread() -> None:
    clock = _Clock()
    client, emulator, _ = _client(clock)
    first = _create(client)
    clock.now += 30
    second = _continue(client, first.id, "And tomorrow?")
    # the usage counts the whole thread, its system and tools read from the cache
    whole = second.usage.input_tokens + second.usage.cache_read_input_tokens
    whole += second.usage.cache_creation_input_tokens or 0
    assert second.usage.cache_read_input_tokens >= first.usage.cache_creation_input_tokens > 500
    assert whole > first.usage.cache_creation_input_tokens
    held = emulator.threads.book.get(second.id)
    assert held is not None and held.turns == 2 and held.created_at == 1000.0
    assert [m["role"] for m in held.messages] == ["user", "assistant", "user", "assistant"]
    assert emulator.threads.book.get(first.id) is None  # a response is continued once


def test_an_expired_or_unknown_thread_is_the_apis_thread_not_found() -> None:
    clock = _Clock()
    client, _, _ = _client(clock)
    first = _create(client)
    clock.now += 301  # 5 minutes after the last request
    with pytest.raises(anthropic.NotFoundError) as caught:
        _continue(client, first.id, "Still there?")
    assert caught.value.status_code == 404
    assert caught.value.error_code == "thread_not_found"
    assert caught.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    with pytest.raises(anthropic.NotFoundError, match="msg_nope"):
        _continue(client, "msg_nope", "Hello?")


def test_each_stored_response_starts_the_five_minutes_again() -> None:
    clock = _Clock()
    client, _, _ = _client(clock)
    reply = _create(client)
    for _ in range(3):  # 12 minutes in all, never 5 idle
        clock.now += 240
        reply = _continue(client, reply.id, "More?")
    assert reply.id


def test_a_continuation_that_repeats_system_is_refused() -> None:
    client, _, _ = _client(_Clock())
    first = _create(client)
    with pytest.raises(anthropic.BadRequestError, match="system"):
        client.beta.messages.create(
            model=MODEL,
            max_tokens=200,
            system=SYSTEM,
            messages=[{"role": "user", "content": "x"}],
            thread={"type": "continue", "previous_message_id": first.id},
            betas=[BETA],
        )


def test_the_sdk_thread_helper_sends_only_new_messages_and_replays_a_lost_thread() -> None:
    clock = _Clock()
    client, _, seen = _client(clock)
    thread = client.beta.messages.thread(model=MODEL, max_tokens=200, system=SYSTEM, tools=TOOLS)  # type: ignore[arg-type]
    thread.send({"role": "user", "content": "Is it raining in Paris?"})
    clock.now += 10
    thread.send({"role": "user", "content": "And in Rome?"})
    assert seen.bodies[0]["thread"] == {"type": "create"} and "system" in seen.bodies[0]
    assert seen.bodies[1]["thread"]["type"] == "continue"
    assert "system" not in seen.bodies[1] and len(seen.bodies[1]["messages"]) == 1
    clock.now += 600  # expired: the helper gets the 404 and replays the whole conversation
    thread.send({"role": "user", "content": "And in Oslo?"})
    assert seen.bodies[2]["thread"]["type"] == "continue"
    assert seen.bodies[3]["thread"] == {"type": "create"}
    assert len(seen.bodies[3]["messages"]) == 5


def test_a_response_is_continued_once() -> None:
    client, _, _ = _client(_Clock())
    first = _create(client)
    _continue(client, first.id, "And tomorrow?")
    with pytest.raises(anthropic.BadRequestError) as caught:
        _continue(client, first.id, "And the day after?")
    assert caught.value.error_code == "thread_already_continued"
