"""Reading the proxy's SQLite store as a capture: one Exchange per stored generation call.

A store is recognised by its first bytes (`SQLite format 3\\0`). Rows come back in the order
they were stored; count_tokens calls are left out (they write no cache). An exchange the proxy
recorded as failed on the way (upstream unreachable, a stream cut mid-body), or whose answer
cannot be read, becomes an Exchange with an error naming why, not a refusal of the whole file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dtl_notebook.cache.exchange import CaptureError, Exchange, exchange_from, json_body
from dtl_notebook.wire.reply import ProviderError

SQLITE_HEADER = b"SQLite format 3\x00"


def is_store(path: str | Path) -> bool:
    """Whether `path` is an SQLite file (by its header bytes)."""
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def store_rows(path: str | Path) -> list[dict[str, Any]]:
    """The stored exchanges of a proxy store, oldest first, as column -> value."""
    return list(iter_rows(path))


def iter_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """The stored exchanges of a proxy store, oldest first, one row at a time."""
    try:
        db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise CaptureError(f"{path}: cannot open the SQLite store: {exc}") from None
    try:
        db.row_factory = sqlite3.Row
        try:
            rows = db.execute("SELECT * FROM exchanges ORDER BY id")
        except sqlite3.Error as exc:
            raise CaptureError(f"{path}: not a dtl_notebook proxy store ({exc})") from None
        for row in rows:
            yield dict(row)
    finally:
        db.close()


def _started(row: dict[str, Any]) -> float | None:
    """When the proxy started the exchange (seconds), where the store says: the audit's
    clock, so a prefix expires across a long pause as it did at the provider."""
    started = row.get("started")
    return float(started) if isinstance(started, int | float) else None


def load_store(path: str | Path) -> list[Exchange]:
    """Every generation call in a proxy store, as capture Exchanges."""
    return list(iter_store(path))


def iter_store(path: str | Path) -> Iterator[Exchange]:
    """Every generation call in a proxy store, one at a time. A request the analysis cannot
    read (no model, a list that is not objects) is an Exchange with an error naming it: the
    client sent it and the provider refused or mis-took it, and the rest is still audited."""
    name = Path(path).name
    for row in iter_rows(path):
        if row["path"].endswith("/count_tokens"):
            continue
        where = f"{name}: exchange {row['number']} ({row['method']} {row['path']})"
        url = f"{row['upstream']}{row['path']}"
        try:
            body = json_body(row["request_body"], f"{where}: request body")
        except CaptureError:
            continue  # not a JSON request: nothing the provider could have answered
        status, failure = row["status"], row["failure"]
        try:
            if failure:
                raise CaptureError(failure)
            exchange = exchange_from(where, body, row["response_body"], status, url)
            exchange.at = _started(row)
            yield exchange
        except CaptureError as exc:
            exchange = Exchange(where, row["provider"], body, status=status, url=url)
            exchange.notes = []  # a body the analysis cannot read is not checked further
            reason = str(exc).removeprefix(f"{where}: ")
            if row["truncated"]:
                reason += " (the stored response was truncated at the size limit)"
            exchange.error = ProviderError(row["provider"], reason, status)
            yield exchange
