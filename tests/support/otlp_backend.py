"""A real OTLP/HTTP backend on loopback for the telemetry tests: Arize Phoenix, in an
environment of its own (its dependencies pin provider SDKs older than this package's, so it
cannot share ours; `make otlp-backend` installs it and the Makefile's tests point
`DTL_PHOENIX` at it). Started fully offline on free ports with a fresh working folder,
awaited by its health check; its REST API lists the spans it stored.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

NO_BACKEND = (
    "no OTLP backend: set DTL_PHOENIX to Arize Phoenix's `phoenix` command "
    "(`make otlp-backend` installs it in an environment of its own)"
)
START_LIMIT_S = 300.0  # a hung start fails the test instead of waiting forever


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def phoenix_command() -> str | None:
    found = os.environ.get("DTL_PHOENIX") or shutil.which("phoenix")
    return found if found and Path(found).exists() else None


class Phoenix:
    """A running Phoenix: `url` takes OTLP/HTTP at `/v1/traces`; `spans(project)` reads back."""

    def __init__(self, url: str) -> None:
        self.url = url

    def spans(self, project: str, count: int, limit_s: float = 60.0) -> list[dict[str, Any]]:
        """The project's spans once at least `count` are stored (Phoenix inserts in batches)."""
        deadline = time.monotonic() + limit_s
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            reply = httpx2.get(f"{self.url}/v1/projects/{project}/spans", params={"limit": 100})
            if reply.status_code == 200:
                found = reply.json()["data"]
                if len(found) >= count:
                    return found
            time.sleep(0.2)
        raise AssertionError(f"{len(found)} of {count} spans reached Phoenix in {limit_s} s")


def _await_health(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Phoenix exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx2.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"Phoenix not healthy after {START_LIMIT_S} s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    command = phoenix_command()
    if command is None:
        pytest.skip(NO_BACKEND)
    folder = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))},
        "PHOENIX_WORKING_DIR": str(folder),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",  # offline: no usage reports of its own
    }
    log = folder / "phoenix.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [command, "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _await_health(process, url, log)
        yield Phoenix(url)
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
