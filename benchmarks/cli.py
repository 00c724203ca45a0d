"""The command line's start time per command, and the audit of large proxy stores.

Per command (`codes`, `lint` of one request, `audit` of a small store): the wall time of
`python -m dtl_notebook ...` in a fresh process, best of a few. Then `audit` of proxy stores
of 1,000 and 10,000 exchanges (100,000 with `--large`): wall time and peak memory (the
process's peak RSS, read by the parent). The stores hold the demo agent's traffic on the
offline emulator: each conversation is the demo's turns, on Anthropic, one after the other,
written as the proxy writes them.

`python benchmarks/cli.py [--large]`
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dtl_notebook.demo import DEMO_MODELS, DEMO_TURNS, demo_session
from dtl_notebook.live.loop import Agent
from dtl_notebook.proxy.store import _COLUMNS, StoredRow, StoreWriter

ROOT = Path(__file__).resolve().parents[1]
PROVIDER = "anthropic"


def demo_exchanges() -> list[tuple[str, str]]:
    """(request body, response body) of one demo conversation on the emulator, as JSON text."""
    agent = Agent(demo_session(), PROVIDER, DEMO_MODELS[PROVIDER])
    pairs = []
    for turn in DEMO_TURNS:
        for step in agent.run(turn).steps:
            pairs.append((json.dumps(step.request.payload), json.dumps(step.response)))
    return pairs


def make_store(path: Path, exchanges: int) -> None:
    """A proxy store of `exchanges` rows: demo conversations one after the other."""
    pairs = demo_exchanges()
    writer = StoreWriter(path)
    for n in range(exchanges):
        request, response = pairs[n % len(pairs)]
        values = dict.fromkeys(_COLUMNS, "")
        values.update(
            number=n + 1,
            conversation=f"c{n // len(pairs)}",
            provider=PROVIDER,
            upstream="https://api.anthropic.com",
            method="POST",
            path="/v1/messages",
            request_headers="{}",
            request_body=request,
            status=200,
            response_headers="{}",
            response_body=response,
            streamed=0,
            truncated=0,
            failure=None,
            started=float(n),
            first_byte=float(n),
            ended=float(n),
        )
        writer.write(StoredRow(values))
    writer.close()


def command(*argv: str) -> tuple[float, int, int]:
    """Wall seconds, exit status and peak RSS (KiB) of `python -m dtl_notebook argv`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dtl_notebook", *argv], env=env, capture_output=True, check=False
    )
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, done.returncode, peak if peak > before else before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="add the 100,000-exchange store")
    parser.add_argument("--runs", type=int, default=3, help="start-time runs per command")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        request = tmp / "request.json"
        request.write_text(demo_exchanges()[-1][0])
        small = tmp / "small.sqlite"
        make_store(small, 10)
        print("command                      start (s, best of", args.runs, "runs)")
        for argv in (["codes", "--json"], ["lint", str(request)], ["audit", str(small)]):
            best = min(command(*argv)[0] for _ in range(args.runs))
            print(f"{' '.join(argv[:1]):<28} {best:.2f}")
        print("\nexchanges   audit (s)   peak memory (MiB)")
        for size in (1_000, 10_000, *([100_000] if args.large else [])):
            store = tmp / f"store{size}.sqlite"
            make_store(store, size)
            seconds, status, peak = command("audit", str(store), "--json")
            assert status == 0, f"audit of {size} exchanges exited with {status}"
            print(f"{size:>9,}   {seconds:>9.1f}   {peak / 1024:>17.0f}")


if __name__ == "__main__":
    main()
