"""Peak memory: what one new turn allocates, and the process's peak resident size.

One new turn (build + strict validation + model context + cache analysis) on a 10,000-tool
registry at 500 and 5,000 messages, measured with `tracemalloc` (Python allocations only), in
every client-search mode and the two server-search modes.
"""

from __future__ import annotations

import resource
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from run import catalog, long_session

from dtl_notebook.cache import CacheAnalyzer
from dtl_notebook.context import model_context
from dtl_notebook.wire import build_request

MODES = (
    ("anthropic tool_reference", "anthropic", "claude-opus-4-8", {}),
    ("anthropic native-bm25", "anthropic", "claude-opus-4-8", {"search": "native-bm25"}),
    ("responses additional_tools", "openai-responses", "gpt-5.4", {}),
    ("responses hosted", "openai-responses", "gpt-5.4", {"search": "hosted"}),
)


def memory_rows() -> list[tuple[str, str, str]]:
    """(label, value, target) rows for the speed table."""
    tools = catalog(10_000)
    rows = []
    for messages in (500, 5_000):
        session = long_session(tools, messages // 4)
        for label, provider, model, options in MODES:
            analyzer = CacheAnalyzer(provider, model)
            analyzer.add(build_request(session, provider, model, **options))
            session.user("one more")
            tracemalloc.start()
            request = build_request(session, provider, model, **options)
            model_context(request)
            analyzer.add(request)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            session.messages.pop()
            rows.append(
                (
                    f"peak allocation of one new turn: {label}, {len(session.messages):,} msgs",
                    f"{peak / 1e6:.1f} MB",
                    "-",
                )
            )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    rows.append(("peak resident size of this benchmark process", f"{rss:,.0f} MB", "-"))
    return rows


if __name__ == "__main__":
    for label, value, _ in memory_rows():
        print(f"{label:<72} {value:>10}")
