"""A cell's snapshot: its own turn, static, and the same size in the 32nd cell as in the 2nd."""

from __future__ import annotations

from dtl_notebook.notebook.sessions import Settings, new_agent
from dtl_notebook.notebook.widget import AgentView

QUESTIONS = (
    "What is the shipping ETA of order_{i}?",
    "And the weather in Paris?",
    "Show the invoice inv_{i}",
    "List the files in the docs folder",
)


def test_snapshots_keep_their_turn_and_stay_flat_in_size() -> None:
    agent = new_agent(Settings(), "anthropic")
    starts = []
    for i in range(24):
        starts.append(len(agent.steps))
        agent.run(QUESTIONS[i % len(QUESTIONS)].format(i=i))
    view = AgentView(agent)
    sizes = {}
    for turn in (1, 5, 21):
        end = starts[turn + 1]
        view.records, records = view.records[:end], view.records
        html, text = view.snapshot(starts[turn])
        view.records = records
        sizes[turn] = len(html)
        assert f"turn {turn + 1}" in html and f"turn {turn + 2}" not in html
        assert f"requests {starts[turn] + 1} to {end}" in html
        assert "<script" not in html and "dtl-pending" not in html
        assert f"requests={end - starts[turn]}" in text
    # the same windowed panes, summary lines only: no item grows with the history
    assert sizes[21] <= 1.15 * sizes[5], sizes
    assert sizes[21] < 80_000, sizes


def test_the_live_cells_fallback_is_its_own_turn() -> None:
    agent = new_agent(Settings(), "anthropic")
    agent.run("What is the shipping ETA of order_1?")
    view = AgentView(agent)
    view.cell_start = len(agent.steps)
    agent.run("And the weather in Paris?")
    html = view._repr_mimebundle_()[0]["text/html"]
    assert "turn 2" in html and "this cell: turn 2" in html
    view.selected = 0  # a request picked in Python: the whole session's fallback
    assert "turn 1" in view._repr_mimebundle_()[0]["text/html"]
    view.close()
