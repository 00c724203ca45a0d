"""Message threads on the wire: the same demo conversation sent by two agents on the emulator,
one with `threads=True`, one with full requests. Prints the bytes each sent, how many requests
were creates and continuations, and the tokens billed and read from the cache (the same on both
paths: the model sees the same context). Run with `PYTHONPATH=. python benchmarks/threads_wire.py`.
"""

from __future__ import annotations

from dtl_notebook import Session
from dtl_notebook.demo import demo_catalog
from dtl_notebook.live import Agent

QUESTIONS = [
    "What's the weather in Paris?",
    "And in Tokyo?",
    "Thanks, that is all.",
    "And in Oslo?",
]
GAP_SECONDS = 30.0


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _agent(threads: bool, clock: _Clock) -> Agent:
    session = Session(tools=demo_catalog(), active=["tool_search"])
    return Agent(session, "anthropic", "claude-sonnet-4-6", threads=threads, clock=clock)


def main() -> None:
    clock = _Clock()
    threaded, full = _agent(True, clock), _agent(False, clock)
    for question in QUESTIONS:
        threaded.run(question)
        full.run(question)
        clock.now += GAP_SECONDS
    kinds = [s.request.payload["thread"]["type"] for s in threaded.steps]
    print(
        f"{len(threaded.steps)} requests: {kinds.count('create')} creates, "
        f"{kinds.count('continue')} continuations"
    )
    for name, agent in (("threads", threaded), ("full requests", full)):
        sent = sum(len(s.request.json()) for s in agent.steps)
        billed = sum(s.cache.total_tokens for s in agent.steps)
        cached = sum(s.cache.cached_tokens for s in agent.steps)
        print(f"{name:>14}: {sent:>8,} bytes sent · {billed:,} tokens billed · {cached:,} cached")


if __name__ == "__main__":
    main()
