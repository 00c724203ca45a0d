"""Agents that share a cache scope (subagents, re-runs of one agent): one `PrefixStore` given
to each makes their predictions read each other's prefixes, and their emulators share one
emulated cache, as one organization's requests share the provider's."""

from __future__ import annotations

import pytest

from dtl_notebook import Session
from dtl_notebook.cache.prefix_store import PrefixStore
from dtl_notebook.live import Agent
from dtl_notebook.live.emulator import Emulator
from tests.support.scenario import LONG_SYSTEM
from tests.support.tools import make_tools


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _agent(clock: Clock, store: PrefixStore | None) -> Agent:
    session = Session(system=LONG_SYSTEM * 20, tools=make_tools(), active=["tool_search"])
    return Agent(session, "openai-responses", "gpt-5", clock=clock, prefix_store=store)


def test_a_rerun_sharing_the_scope_is_predicted_warm_as_the_emulator_reports() -> None:
    clock, store = Clock(), PrefixStore()
    _agent(clock, store).run("list the files")
    clock.now += 30
    rerun = _agent(clock, store)
    rerun.run("read the readme")
    first = rerun.steps[0].cache
    assert first.cached_tokens > 1024 and first.cache_break is None
    assert first.reported is not None and first.reported.cached == first.cached_tokens


def test_agents_in_separate_scopes_share_nothing() -> None:
    clock = Clock()
    _agent(clock, None).run("list the files")
    alone = _agent(clock, None)
    alone.run("read the readme")
    first = alone.steps[0].cache
    assert first.cached_tokens == 0
    assert first.reported is not None and first.reported.cached == 0


def test_a_prefix_store_of_another_type_is_named() -> None:
    with pytest.raises(TypeError, match="prefix_store"):
        _agent(Clock(), "shared")  # type: ignore[arg-type]


def _responses(user: str, key: str, model: str = "gpt-5") -> dict[str, object]:
    return {
        "model": model,
        "instructions": LONG_SYSTEM * 20,
        "input": [{"role": "user", "content": user}],
        "prompt_cache_key": key,
    }


def _cached(body: dict[str, object]) -> int:
    usage = body["usage"]
    assert isinstance(usage, dict)
    return int(usage["input_tokens_details"]["cached_tokens"])


def test_the_emulator_shares_its_cache_by_scope_as_the_provider_does() -> None:
    """A second conversation reads what the first wrote under the same model and
    prompt_cache_key; another key or another model reads nothing."""
    emulator = Emulator("openai-responses")
    assert _cached(emulator.respond(_responses("list the files", "agent"))) == 0
    assert _cached(emulator.respond(_responses("read the readme", "agent"))) > 1024
    assert _cached(emulator.respond(_responses("read the readme", "other"))) == 0
    assert _cached(emulator.respond(_responses("read the readme", "agent", "gpt-5-mini"))) == 0
