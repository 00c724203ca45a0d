"""The emulator answers in the shapes real providers record."""

from __future__ import annotations

import json
from pathlib import Path

from dtl_notebook.demo import demo_session
from dtl_notebook.live import Agent


def test_hosted_tool_search_items_have_the_recorded_shape(real_recordings: Path) -> None:
    # vercel/ai packages/openai/src/responses/__fixtures__/openai-tool-search.1.json
    path = real_recordings / "vercel" / "openai-tool-search.1.json"
    recorded = [
        item
        for item in json.loads(path.read_text())["output"]
        if item["type"].startswith("tool_search")
    ]
    agent = Agent(demo_session(), "openai-responses", "gpt-5.4", search="hosted")
    agent.run("What is the shipping ETA of order_42?")
    emulated = [
        item
        for step in agent.steps
        for item in step.response["output"]
        if item["type"].startswith("tool_search")
    ]
    assert [i["type"] for i in emulated[:2]] == [i["type"] for i in recorded]
    for mine, real in zip(emulated, recorded, strict=False):
        # responses come back through the SDK's models, dumped without null fields
        assert sorted(mine) == sorted(key for key, value in real.items() if value is not None)
    call, output = emulated[:2]
    assert list(call["arguments"]) == list(recorded[0]["arguments"]) == ["paths"]
    assert call["arguments"]["paths"] == [tool["name"] for tool in output["tools"]]
