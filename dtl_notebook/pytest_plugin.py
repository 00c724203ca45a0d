"""pytest plugin: the `cache_recorder` fixture records what an SDK client sends in a test.

Enable with `-p dtl_notebook.pytest_plugin` (or `pytest_plugins = ["dtl_notebook.pytest_plugin"]`
in a conftest), then::

    def test_agent_keeps_the_cache(cache_recorder):
        client = anthropic.Anthropic(http_client=cache_recorder.http_client())
        run_my_agent(client)
        assert_cache_stable(cache_recorder)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dtl_notebook.testing import CacheRecorder


@pytest.fixture
def cache_recorder() -> Iterator[CacheRecorder]:
    """A fresh recorder for the test."""
    yield CacheRecorder()
