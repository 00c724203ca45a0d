"""The proxy's line says what a reported input covers where the provider ran a tool loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dtl_notebook.proxy.store import StoredRow
from dtl_notebook.proxy.store_queue import Finished
from dtl_notebook.proxy.summary import Summary


def _finished(request: dict[str, Any], response: dict[str, Any]) -> Finished:
    values = {
        "number": 1,
        "conversation": "c1",
        "provider": "openai-responses",
        "status": 200,
        "path": "/v1/responses",
        "failure": None,
        "started": 0.0,
    }
    return Finished(StoredRow(values), request, response)


def test_a_hosted_search_loop_is_labelled_not_compared(real_recordings: Path) -> None:
    """vercel/ai openai-tool-search.1.json: hosted search, then a function call, in one
    request: the line names the loop and the first call's prediction."""
    response = json.loads((real_recordings / "vercel/openai-tool-search.1.json").read_text())
    request = {
        "model": "gpt-5.4",
        "input": [{"role": "user", "content": "What is the weather in San Francisco?"}],
        "tools": response["tools"],
    }
    summary = Summary(lambda _: None)
    try:
        line = summary.line(_finished(request, response))
    finally:
        summary.close()
    assert "input: loop of 2 calls: first call predicted " in line
    assert "reported 640 covers a server-side loop of 2 calls; not compared" in line


def test_a_single_call_adds_nothing() -> None:
    response = {"output": [{"type": "message"}], "usage": {"input_tokens": 9}}
    request = {"model": "gpt-5.4", "input": "hi"}
    summary = Summary(lambda _: None)
    try:
        line = summary.line(_finished(request, response))
    finally:
        summary.close()
    assert "input:" not in line and "reported" in line
