"""Where the real recorded provider traffic is, for the tests that read it.

The recordings were made against the real APIs by other open-source projects
(anthropics/anthropic-sdk-python test snapshots in `anth_sdk/`, vercel/ai fixtures in `vercel/`);
they are read at run time from `../shared/fixtures/real` beside the repository, or from the folder
named by `$DTL_REAL_FIXTURES`, and never copied into the project. Without them every test that
needs them skips with the one reason `ABSENT`; the rest of the suite holds on its own.
Tests take the `real_recordings` fixture (tests/conftest.py); code that runs outside a test
(benchmarks, parametrize lists) asks `real_root()`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "DTL_REAL_FIXTURES"
BESIDE = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "real"
ABSENT = f"real recordings not present: ../shared/fixtures/real (or ${ENV}); see docs/testing.md"


def real_root() -> Path | None:
    """The recordings folder, or None where it is absent. A `$DTL_REAL_FIXTURES` that names no
    folder is an error, not a skip: it was asked for."""
    override = os.environ.get(ENV)
    if override:
        root = Path(override).expanduser()
        if not root.is_dir():
            raise FileNotFoundError(f"{ENV}={override!r} is not a folder")
        return root
    return BESIDE if BESIDE.is_dir() else None


def need_real() -> Path:
    """The recordings folder; skips the calling test with `ABSENT` where it is not here."""
    root = real_root()
    if root is None:
        pytest.skip(ABSENT)
    return root
