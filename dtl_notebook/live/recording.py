"""Record exchanges as JSONL (keys redacted) and replay them without network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.live.transport import Transport, redact
from dtl_notebook.wire.common import WireRequest

JSON = dict[str, Any]


class ReplayError(DtlError, RuntimeError):
    """A replayed run asked for something the recording does not hold."""


class Recorder:
    """Wraps a transport and appends each exchange to a JSONL file."""

    def __init__(self, inner: Transport, path: str | Path, provider: str, model: str) -> None:
        self.inner, self.path = inner, Path(path)
        self.provider, self.model = provider, model
        self.name = inner.name

    def send(self, request: WireRequest) -> JSON:
        response = self.inner.send(request)
        line = {
            "provider": self.provider,
            "model": self.model,
            "transport": self.inner.name,
            "request": redact(request.payload),
            "response": redact(response),
        }
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        return response


class ReplayTransport:
    """Answers requests from a recording, in order; a request that differs is an error."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.exchanges = [
            json.loads(line)
            for line in self.path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        self.position = 0

    @property
    def provider(self) -> str:
        return str(self.exchanges[0]["provider"]) if self.exchanges else ""

    def send(self, request: WireRequest) -> JSON:
        if self.position >= len(self.exchanges):
            raise ReplayError(
                f"{self.path}: the recording has only {len(self.exchanges)} exchanges"
            )
        exchange = self.exchanges[self.position]
        if redact(request.payload) != exchange["request"]:
            raise ReplayError(
                f"{self.path}: request {self.position + 1} differs from the recording "
                "(the session diverged from the recorded run)"
            )
        self.position += 1
        return dict(exchange["response"])
