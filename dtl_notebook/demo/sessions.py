"""The demo session, and the recorded demo runs shipped with the package (one per provider).

Regenerate the recordings with `python -m dtl_notebook.demo.sessions` after a change to the
wire format; the recordings come from the emulator (no provider was called).
"""

from __future__ import annotations

from pathlib import Path

from dtl_notebook.agent.sections import tool_catalog
from dtl_notebook.agent.session import Session
from dtl_notebook.demo.catalog import core_tool_names, demo_catalog, demo_group_summaries
from dtl_notebook.live.agent import Agent
from dtl_notebook.live.recording import ReplayTransport
from dtl_notebook.wire.providers import SPECS

RECORDINGS = Path(__file__).parent / "recordings"
DEMO_TURNS = ("What is the shipping ETA of order_42?", "And the weather in Paris?")
DEMO_MODELS = {name: row.default_model for name, row in SPECS.items()}


def demo_session(search: str = "bm25", *, grouped_catalog: bool = True) -> Session:
    """~200 registered tools; only the search tool and a few file tools active.

    The `tool_catalog` section lists the deferred tools one line per namespace (about 600
    tokens, and byte-stable as tools join existing namespaces); `grouped_catalog=False`
    lists every tool (about 4,900 tokens, growing with the registry).
    """
    if not isinstance(grouped_catalog, bool):
        raise TypeError(f"grouped_catalog must be True or False, got {grouped_catalog!r}")
    tools = demo_catalog()
    core = core_tool_names()
    deferred = (t for t in tools if t.name not in core)
    return Session(
        system="You are an operations assistant. Search for a tool before you say you can't.",
        tools=tools,
        active=["tool_search", *core],
        search=search,
        sections={
            "tool_catalog": tool_catalog(
                deferred, grouped=grouped_catalog, summaries=demo_group_summaries()
            )
        },
    )


def recording_path(provider: str) -> Path:
    return RECORDINGS / f"{provider}.jsonl"


def replay_demo(provider: str) -> Agent:
    """The shipped demo run of a provider, replayed offline."""
    agent = Agent(
        demo_session(),
        provider,
        DEMO_MODELS[provider],
        transport=ReplayTransport(recording_path(provider)),
    )
    for turn in DEMO_TURNS:
        agent.run(turn)
    return agent


def record_demos(folder: Path = RECORDINGS) -> list[Path]:
    """Run the demo turns on the emulator for every provider and record them."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for provider, model in DEMO_MODELS.items():
        path = folder / f"{provider}.jsonl"
        path.unlink(missing_ok=True)
        agent = Agent(demo_session(), provider, model, record=str(path))
        for turn in DEMO_TURNS:
            agent.run(turn)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in record_demos():
        print("wrote", written)
