"""Record exchanges as JSONL (keys redacted) and replay them without network."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.files import write_atomic
from dtl_notebook.live.transport import Transport, redact
from dtl_notebook.wire.request import WireRequest

JSON = dict[str, Any]


class ReplayError(DtlError, RuntimeError):
    """A replayed run asked for something the recording does not hold."""


class Recorder:
    """Wraps a transport and appends each exchange to a JSONL file.

    Each exchange rewrites the whole file atomically (write_atomic: temporary file, fsync,
    rename) rather than appending: an append killed mid-write leaves a torn last line that
    breaks every later replay, while a rename leaves either the old file or the new one.
    Recordings are a few dozen exchanges, so rewriting costs little.
    """

    def __init__(self, inner: Transport, path: str | Path, provider: str, model: str) -> None:
        self.inner, self.path = inner, checks.file_path(path, "path")
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
        previous = self.path.read_bytes() if self.path.exists() else b""
        if previous and not previous.endswith(b"\n"):
            previous += b"\n"
        text = json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"
        write_atomic(self.path, previous + text.encode("utf-8"))
        return response

    def mark(self) -> int | None:
        """Where the recording ends now (None: no file yet), for `restore`."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return None

    def restore(self, mark: int | None) -> None:
        """Drop what was recorded since `mark` (a failed turn's exchanges, which the session
        no longer holds). Each exchange only appends, so cutting the file back restores it
        byte for byte, in place: it needs no free disk space."""
        if mark is None:
            self.path.unlink(missing_ok=True)
        elif self.path.exists() and self.path.stat().st_size > mark:
            os.truncate(self.path, mark)


class ReplayTransport:
    """Answers requests from a recording, in order; a request that differs is an error."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = checks.file_path(path, "path")
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ReplayError(f"cannot read recording {str(self.path)!r}: {exc}") from None
        self.exchanges = [
            _exchange(self.path, n, line) for n, line in enumerate(lines, 1) if line.strip()
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


def _exchange(path: Path, number: int, line: str) -> JSON:
    """One recorded exchange; a line that is not one names its number."""
    try:
        exchange = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"{path}: line {number} is not JSON ({exc.msg})") from None
    except RecursionError:
        raise ReplayError(f"{path}: line {number} is nested too deep to read") from None
    missing = [
        k
        for k in ("provider", "request", "response")
        if not isinstance(exchange, dict) or k not in exchange
    ]
    if missing:
        raise ReplayError(f"{path}: line {number} is not an exchange (missing {missing})")
    return exchange  # type: ignore[no-any-return]
