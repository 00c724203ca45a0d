"""Server-side search writes load points too: where the provider loaded tools, on the wire."""

from __future__ import annotations

import pytest

from dtl_notebook.demo import demo_session
from dtl_notebook.live import Agent

CASES = [
    ("anthropic", "claude-sonnet-4-6", "native-bm25", "native_search", "messages."),
    ("anthropic", "claude-sonnet-4-6", "native-regex", "native_search", "messages."),
    ("openai-responses", "gpt-5.4", "hosted", "native_hosted", "input."),
]


@pytest.mark.parametrize(("provider", "model", "search", "mode", "prefix"), CASES)
def test_server_search_load_points_match_the_model_context(
    provider: str, model: str, search: str, mode: str, prefix: str
) -> None:
    agent = Agent(demo_session(), provider, model, search=search)
    agent.run("What is the shipping ETA of order_42?")
    agent.run("And the weather in Paris?")
    request = agent.steps[-1].request
    assert request.mode == mode
    points = request.load_points
    assert len(points) == 2
    assert all(lp.path.startswith(prefix) for lp in points)
    assert "get_shipping_eta" in points[0].tools
    assert "get_current_weather" in points[1].tools
    # each tool is loaded once, at its first reference
    names = [n for lp in points for n in lp.tools]
    assert len(names) == len(set(names))
    # the model context expands definitions at exactly these paths (hosted search loads whole
    # namespaces, which the context labels by namespace)
    context = agent.steps[-1].context
    loaded = [s for s in context.segments if s.kind == "loaded_schema"]
    assert {s.load_point for s in loaded} == {lp.path for lp in points}
    if provider == "anthropic":
        assert {(s.load_point, s.label) for s in loaded} == {
            (lp.path, n) for lp in points for n in lp.tools
        }
