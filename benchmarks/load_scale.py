"""Loading a saved session: time against the length of a run of consecutive user messages.

A transcript imported from elsewhere can hold long runs of user messages with no assistant
message between them; every append checks that no tool call is pending, which must not walk
the run again each time (it once made 40,000 messages take minutes).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from dtl_notebook import Session
from dtl_notebook.agent import UserMessage

SIZES = (10_000, 20_000, 40_000, 200_000)


def saved_run(folder: Path, n: int) -> Path:
    """A saved session of `n` consecutive user messages."""
    session = Session()
    session.messages.extend(
        UserMessage(content=[{"type": "text", "text": f"note {i}"}]) for i in range(n)
    )
    path = folder / f"run_{n}.json"
    session.save(path)
    return path


def load_rows() -> list[tuple[str, str, str]]:
    """(label, value, target) rows for the speed table."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in SIZES:
            path = saved_run(Path(folder), n)
            start = time.perf_counter()
            Session.load(path)
            seconds = time.perf_counter() - start
            target = "< 1 s" if n <= 20_000 else "-"
            rows.append(
                (f"Session.load, {n:,} consecutive user messages", f"{seconds:.2f} s", target)
            )
    return rows


if __name__ == "__main__":
    for label, value, target in load_rows():
        print(f"{label:<60} {value:>10}  {target}")
