"""An Anthropic message thread through the proxy in front of the emulator: each continuation
joins its thread's conversation (the one conversation rule), and is predicted whole."""

from __future__ import annotations

import re
from collections.abc import Iterator

import anthropic
import pytest

from dtl_notebook.live.emulator.server import EmulatorServer
from dtl_notebook.proxy import Arrived, Finished, Proxy, Summary
from tests.support.recorder_listeners import Heard

SYSTEM = "You are a careful logistics assistant. Follow the house rules. " * 160
KEY = "sk-ant-api03-TESTKEY0123456789abcdef"
MODEL = "claude-sonnet-4-6"


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def test_thread_continuations_join_their_conversation_and_are_predicted_whole(
    emulator: EmulatorServer,
) -> None:
    heard, lines = Heard(), list[str]()
    summary = Summary(emit=lines.append)
    with Proxy(port=0, listeners=[heard, summary], upstream_anthropic=emulator.url) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
        thread = client.beta.messages.thread(
            model=MODEL, max_tokens=50, system=SYSTEM, cache_control={"type": "ephemeral"}
        )
        for question in ("where is order 7?", "and order 8?", "and order 9?"):
            thread.send({"role": "user", "content": question})
        other = client.beta.messages.thread(model=MODEL, max_tokens=50, system="Another agent.")
        other.send({"role": "user", "content": "hello"})
        events = heard.wait_for(8)
    summary.close()
    arrivals = [e for e in events if isinstance(e, Arrived)]
    assert [a.request["thread"]["type"] for a in arrivals] == [  # type: ignore[index]
        "create",
        "continue",
        "continue",
        "create",
    ]
    assert [a.conversation for a in arrivals] == ["c1", "c1", "c1", "c2"]
    assert [e.conversation for e in events if isinstance(e, Finished)] == ["c1", "c1", "c1", "c2"]
    # the continuations carry one message each, yet read the whole thread's prefix
    predicted = [re.search(r"predicted (\d+)/(\d+)/(\d+)", line) for line in lines]
    assert all(predicted), lines
    cached = [int(m.group(1)) for m in predicted if m]
    reported = [re.search(r"reported (\d+)/", line) for line in lines]
    assert cached[1] > 1000 and cached[2] > cached[1]
    assert [int(m.group(1)) for m in reported if m][:3] == cached[:3]  # as the emulator says
    assert [re.search(r"thread \w+ \d+/\d+", line)[0] for line in lines] == [  # type: ignore[index]
        "thread create 1/1",
        "thread continue 1/3",
        "thread continue 1/5",
        "thread create 1/1",
    ]
