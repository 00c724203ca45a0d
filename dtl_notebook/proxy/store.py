"""The proxy's store: one SQLite file (WAL), one row per exchange, one transaction each.

Rows hold what crossed the proxy, fit to keep: headers with credentials masked, bodies as text
(a compressed body decoded, a streamed one as its raw server-sent events), key-like values and
the values the client sent as credentials masked wherever they sit, the times, the upstream
and the status. `cache.store_reader` reads it back as a capture.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtl_notebook.agent.secrets import Secrets, masked_query, redact
from dtl_notebook.proxy.bodies import decode
from dtl_notebook.proxy.headers import stored_headers
from dtl_notebook.proxy.record import ExchangeRecord

SCHEMA_VERSION = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS exchanges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    number INTEGER NOT NULL,
    conversation TEXT,
    provider TEXT NOT NULL,
    upstream TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    request_headers TEXT NOT NULL,
    request_body TEXT NOT NULL,
    status INTEGER,
    response_headers TEXT NOT NULL,
    response_body TEXT NOT NULL,
    streamed INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    failure TEXT,
    started REAL NOT NULL,
    first_byte REAL,
    ended REAL
);
"""
_COLUMNS = (
    "number conversation provider upstream method path query request_headers request_body "
    "status response_headers response_body streamed truncated failure started first_byte ended"
).split()
_CREDENTIAL_FIELD = re.compile(r"api[_-]?key|authorization", re.IGNORECASE)  # may be a member


def masked_text(text: str, secrets: Secrets, cut: bool = False) -> str:
    """`text` with known and key-like values masked (`cut`: a key cut off at its end too);
    in a JSON body, the values of credential members too, which `secrets` learns first, so
    they are masked wherever else they sit (the body is rewritten only when such a member
    is there, else kept byte for byte)."""
    document = None
    if _CREDENTIAL_FIELD.search(text):
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        secrets.learn_members(document)
    if isinstance(document, dict | list) and redact(document) != document:
        text = json.dumps(redact(document), ensure_ascii=False)
    return secrets.mask(text, cut)


@dataclass
class StoredRow:
    """An exchange as stored: every field already masked."""

    values: dict[str, Any]

    @property
    def request(self) -> str:
        return str(self.values["request_body"])

    @property
    def response(self) -> str:
        return str(self.values["response_body"])


def request_text(record: ExchangeRecord, secrets: Secrets) -> tuple[str, str | None]:
    """The request body as text fit to keep or show (decoded, keys masked), and why it
    could not be decoded, if it could not."""
    body = decode(record.request_body, record.header("content-encoding", False), record.limit)
    return masked_text(body.data.decode("utf-8", "replace"), secrets), body.problem


def stored_row(
    record: ExchangeRecord,
    secrets: Secrets,
    conversation: str | None = None,
    request: tuple[str, str | None] | None = None,
) -> StoredRow:
    """`record` fit to store, every text masked with `secrets`; `request`: its
    `request_text`, where already worked out. A body that cannot be decoded is stored empty,
    with the reason as the exchange's failure (so a reader counts it, not skips it)."""
    request_body, request_problem = request or request_text(record, secrets)
    response = decode(record.response_body, record.header("content-encoding"), record.limit)
    truncated = record.truncated or response.cut
    failure = record.failure or _not_stored("request", request_problem)
    failure = failure or _not_stored("response", response.problem)
    kind = (record.header("content-type") or "").lower()
    values = {
        "number": record.number,
        "conversation": conversation,
        "provider": record.provider,
        "upstream": record.upstream,
        "method": record.method,
        "path": record.path,
        "query": secrets.mask(masked_query(record.query)),
        "request_headers": json.dumps(stored_headers(record.request_headers, secrets)),
        "request_body": request_body,
        "status": record.status,
        "response_headers": json.dumps(stored_headers(record.response_headers, secrets)),
        "response_body": masked_text(response.data.decode("utf-8", "replace"), secrets, truncated),
        "streamed": int("text/event-stream" in kind),
        "truncated": int(truncated),
        "failure": secrets.mask(failure) if failure else None,
        "started": record.started,
        "first_byte": record.first_byte,
        "ended": record.ended,
    }
    return StoredRow(values)


def _not_stored(which: str, problem: str | None) -> str | None:
    return f"{which} body not stored: {problem}" if problem else None


class StoreWriter:
    """The SQLite file, opened (and created) in WAL mode; used from one thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at each checkpoint
        self._db.execute("PRAGMA busy_timeout=5000")
        with self._db:
            self._db.executescript(SCHEMA)
            self._db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema', ?), ('kind', 'dtl_notebook proxy')",
                (SCHEMA_VERSION,),
            )
        status = os.stat(self.path)
        self._identity = (status.st_dev, status.st_ino)

    def gone(self) -> bool:
        """Whether the file was deleted or replaced since it was opened."""
        try:
            status = os.stat(self.path)
        except OSError:
            return True
        return (status.st_dev, status.st_ino) != self._identity

    def write(self, row: StoredRow) -> None:
        names = ", ".join(_COLUMNS)
        marks = ", ".join("?" for _ in _COLUMNS)
        self._db.execute("BEGIN")
        try:
            self._db.execute(
                f"INSERT INTO exchanges ({names}) VALUES ({marks})",
                [row.values[c] for c in _COLUMNS],
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
