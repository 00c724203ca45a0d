"""Run a coroutine to its end from a synchronous test, whatever loop the thread holds.

Playwright's sync API (the browser tests, session-scoped) leaves an event loop running in the
main thread for the rest of the session, where `asyncio.run` refuses to start another: each
coroutine runs on a fresh thread with a loop of its own instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coroutine)` on a thread of its own; its result or its exception."""
    with ThreadPoolExecutor(1, thread_name_prefix="test-async") as pool:
        return pool.submit(asyncio.run, coroutine).result()
