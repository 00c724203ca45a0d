"""Shared fixtures (small tool catalogs built from real definitions, the real recordings) and
the Hypothesis profiles: "dev" by default, "ci" where $CI is set (derandomized: the same examples
every run), "fuzz" with HYPOTHESIS_PROFILE=fuzz (`make fuzz`: ten times the examples)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, is_hypothesis_test, settings

from dtl_notebook import Session, Tool
from tests.support.real_recordings import need_real

from .support.tools import make_tools

FUZZ_FACTOR = 10
_SLOW_IS_FINE = [HealthCheck.too_slow]  # a loaded machine is not a failing property
settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci",
    derandomize=True,
    print_blob=True,
    deadline=None,
    database=None,
    suppress_health_check=_SLOW_IS_FINE,
)
settings.register_profile(
    "fuzz",
    max_examples=FUZZ_FACTOR * settings.get_profile("default").max_examples,
    deadline=None,
    suppress_health_check=_SLOW_IS_FINE,
)


def _profile() -> str:
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return os.environ["HYPOTHESIS_PROFILE"]
    return "ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev"


settings.load_profile(_profile())


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under "fuzz", a test that sets its own `max_examples` runs ten times as many too (the
    others already take the profile's). Hypothesis keeps a test's settings on the test function
    (a private attribute, read when the test runs); fuzz runs stop if that ever changes."""
    if settings.get_current_profile_name() != "fuzz":
        return
    done: set[int] = set()
    for item in items:
        test = getattr(item, "obj", None)
        if not is_hypothesis_test(test) or id(test) in done:
            continue
        done.add(id(test))
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if not isinstance(own, settings):
            raise pytest.UsageError(f"{item.nodeid}: its Hypothesis settings are not readable")
        if own.max_examples != settings.default.max_examples:
            budget = FUZZ_FACTOR * own.max_examples
            test._hypothesis_internal_use_settings = settings(own, max_examples=budget)


@pytest.fixture
def tools() -> list[Tool]:
    return make_tools()


@pytest.fixture
def session(tools: list[Tool]) -> Session:
    return Session(
        system="You are a helpful agent.", tools=tools, active=["tool_search", "read_file"]
    )


@pytest.fixture
def ip() -> Iterator[Any]:
    """The shared IPython testing shell with the extension loaded, reset around each test."""
    from tests.support.notebook_shell import interactive_shell, reset_shell

    shell = interactive_shell()
    reset_shell(shell)
    yield shell
    reset_shell(shell)


@pytest.fixture(scope="session")
def real_recordings() -> Path:
    """The real recorded provider traffic (tests/support/real_recordings.py); a test that takes
    it skips with one reason where the recordings are not here."""
    return need_real()
