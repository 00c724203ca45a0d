"""Real coding agents (Claude Code, Codex, Pi, OpenCode) run through the proxy, offline.

The agents are npm packages pinned in `tests/agents/package.json` / `package-lock.json` and
installed with `npm ci --prefix tests/agents` into the ignored `tests/agents/node_modules`
(`.ci/run` does it). Where they are not installed, or Node is missing, every test that needs
them skips with the one reason `ABSENT`.

Each run gets its own proxy (`python -m dtl_notebook proxy`, the command a user runs) in front
of the emulator, its own store, its own HOME and config folders, a dummy key, and the agent's
documented switches for telemetry and updates off; HTTP(S)_PROXY points at a closed port with
loopback exempt, so nothing an agent sends can leave the machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "tests" / "agents"
BIN = AGENTS / "node_modules" / ".bin"
ABSENT = (
    "real agents not installed: `npm ci --prefix tests/agents` (needs node and the npm "
    "registry); see docs/testing.md"
)
# a closed port: whatever an agent sends past NO_PROXY fails at once instead of leaving
NOWHERE = "http://127.0.0.1:9"
AGENT_TIMEOUT_S = 180
PROXY_STOP_TIMEOUT_S = 60


def need_agent(command: str) -> Path:
    """The installed agent `command` (claude, codex, pi, opencode); skips with `ABSENT` where
    it or Node is not here."""
    path = BIN / command
    if not path.exists() or shutil.which("node", path=_path()) is None:
        pytest.skip(ABSENT)
    return path


def _path() -> str:
    """The agents' bin folder first: the Node installed beside them (Pi needs Node 22.19+),
    else the system's."""
    return os.pathsep.join([str(BIN), os.environ.get("PATH", os.defpath)])


def offline_env(home: Path, **settings: str) -> dict[str, str]:
    """A clean environment for one agent run: a fresh HOME and XDG folders under `home`,
    every other request sent to a closed port; nothing inherited but PATH and the locale
    (no key or proxy of the machine's own)."""
    env = {
        "PATH": _path(),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(home / "tmp"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "true",
        "HTTPS_PROXY": NOWHERE,
        "HTTP_PROXY": NOWHERE,
        "https_proxy": NOWHERE,
        "http_proxy": NOWHERE,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(settings)
    return env


def run_agent(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """One non-interactive agent turn; fails the test, with what the agent printed, unless it
    exits 0."""
    done = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=AGENT_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (
        f"{argv[0]} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n"
        f"--- stderr\n{done.stderr[-3000:]}"
    )
    return done


@dataclass
class ProxyRun:
    """A `python -m dtl_notebook proxy` process: its URL, its store, what it printed."""

    url: str
    store: Path
    lines: list[str] = field(default_factory=list)


@contextmanager
def proxy_process(upstream: str, store: Path) -> Iterator[ProxyRun]:
    """The proxy command on a free port in front of `upstream` for both provider families;
    stopped with SIGTERM (as a service manager stops it) on leaving, its store then complete."""
    argv = [sys.executable, "-m", "dtl_notebook", "proxy", "--port", "0", "--store", str(store)]
    argv += ["--upstream-anthropic", upstream, "--upstream-openai", upstream]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    banner = process.stdout.readline()  # printed once the proxy listens
    if not banner.startswith("dtl_notebook proxy on "):
        process.kill()
        raise RuntimeError(f"the proxy did not start: {banner}{process.stdout.read()}")
    run = ProxyRun(banner.split()[3], store, [banner.rstrip("\n")])
    drain = threading.Thread(target=_keep, args=(run.lines, process.stdout))
    drain.start()
    try:
        yield run
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(PROXY_STOP_TIMEOUT_S)
        drain.join()


def _keep(lines: list[str], stream: IO[str]) -> None:
    """Read the proxy's lines as it prints them (a full pipe would stall it)."""
    for line in stream:
        lines.append(line.rstrip("\n"))
