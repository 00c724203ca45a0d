"""The benchmark's "several sessions sharing a prefix" rows (benchmarks/shared_sessions.py):
a main session, two subagents and a re-run on one emulator and one prediction store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from cache_workload import Strategy
from shared_sessions import STRATEGIES, run_shared

from dtl_notebook.demo import demo_catalog


@pytest.mark.parametrize("strategy", STRATEGIES, ids=[s.provider for s in STRATEGIES])
def test_the_sessions_read_each_others_prefix_as_the_emulator_accounts(
    strategy: Strategy,
) -> None:
    outcome = run_shared(demo_catalog(), strategy)
    entries = outcome.entries
    assert len(outcome.starts) == 4
    for entry in entries:  # every prediction is the emulator's own figure
        assert entry.reported is not None and entry.reported.cached == entry.cached_tokens
    assert sum(e.cached_tokens for e in entries[outcome.starts[3] :]) > sum(
        e.cached_tokens for e in entries[: outcome.starts[1]]
    )  # the re-run reads more than the first run did: the main session wrote it
    assert all(e.cache_break is None for e in entries)
