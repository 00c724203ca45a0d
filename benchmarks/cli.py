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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dtl_notebook.demo import DEMO_MODELS, DEMO_TURNS, demo_session
from dtl_notebook.live.agent import Agent
from dtl_notebook.proxy.store import StoredRow, StoreWriter

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
        values = dict(
            number=n + 1,
            conversation=f"c{n // len(pairs)}",
            provider=PROVIDER,
            upstream="https://api.anthropic.com",
            method="POST",
            path="/v1/messages",
            query="",
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


# `python -m dtl_notebook ARGV` that reports its CPU seconds and peak memory (KiB) last
_MEASURED = """import resource, runpy, sys
sys.argv, status = ["dtl_notebook", *sys.argv[1:]], 0
try:
    runpy.run_module("dtl_notebook", run_name="__main__")
except SystemExit as done:
    status = done.code or 0
used = resource.getrusage(resource.RUSAGE_SELF)
print(used.ru_utime + used.ru_stime, used.ru_maxrss, file=sys.stderr)
sys.exit(status)
"""


def command(*argv: str) -> tuple[float, float, int, int]:
    """Wall and CPU seconds, exit status and peak RSS (KiB) of `python -m dtl_notebook argv`
    (CPU time too: on a shared machine the wall time measures the neighbours)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *argv], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    cpu, peak = done.stderr.split()[-2:]
    return seconds, float(cpu), done.returncode, int(peak)


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
        print(f"command          wall (s)   CPU (s)   best of {args.runs} runs, small input")
        for argv in (["codes", "--json"], ["lint", str(request)], ["audit", str(small)]):
            runs = [command(*argv) for _ in range(args.runs)]
            assert all(r[2] == 0 for r in runs), f"{argv[0]} exited with {runs[0][2]}"
            wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
            print(f"{argv[0]:<16} {wall:>8.2f}   {cpu:>7.2f}")
        print("\nexchanges   audit wall (s)   CPU (s)   peak memory (MiB)")
        for size in (1_000, 10_000, *([100_000] if args.large else [])):
            store = tmp / f"store{size}.sqlite"
            make_store(store, size)
            wall, cpu, status, peak = command("audit", str(store), "--json")
            assert status == 0, f"audit of {size} exchanges exited with {status}"
            print(f"{size:>9,}   {wall:>14.1f}   {cpu:>7.1f}   {peak / 1024:>17.0f}")


if __name__ == "__main__":
    main()
