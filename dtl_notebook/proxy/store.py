"""The proxy's store: one SQLite file (WAL), one row per exchange, one transaction each.

Rows hold what crossed the proxy, fit to keep: headers with credentials masked, bodies as text
(a compressed body decoded, a streamed one as its raw server-sent events), key-like values
masked wherever they sit, the times, the upstream and the status. `cache.store_reader` reads it
back as a capture.
"""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtl_notebook.agent.secrets import redact
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
# a key cut off by truncation: its start is masked too
_CUT_KEY = re.compile(r"(sk-|AIza|gh[pousr]_|xai-|Bearer\s)[A-Za-z0-9._~+/=-]*\Z")
_CREDENTIAL_FIELD = re.compile(r"api[_-]key|authorization", re.IGNORECASE)


def masked_text(text: str, cut: bool = False) -> str:
    """`text` with key-like values masked; in a JSON body, the values of credential fields
    too (the body is rewritten only when one is there, else kept byte for byte)."""
    masked = redact(text)
    if _CREDENTIAL_FIELD.search(masked):
        try:
            document = json.loads(masked)
        except ValueError:
            document = None
        if isinstance(document, dict | list) and redact(document) != document:
            masked = json.dumps(redact(document), ensure_ascii=False)
    return _CUT_KEY.sub("[redacted]", masked) if cut else masked


def decoded(body: bytes, encoding: str | None, limit: int) -> tuple[str, bool]:
    """The body as text, decompressed from gzip/deflate (at most `limit` bytes); (text, cut)."""
    cut = False
    if encoding and encoding.strip().lower() in ("gzip", "x-gzip", "deflate"):
        for wbits in (47, -15):  # gzip or zlib (auto), then raw deflate
            try:
                inflater = zlib.decompressobj(wbits)
                plain = inflater.decompress(body, limit)
                cut = bool(inflater.unconsumed_tail)
                body = plain
                break
            except zlib.error:
                continue
    elif encoding and encoding.strip().lower() not in ("identity", ""):
        return f"[body not stored: content-encoding {encoding!r} is not decoded here]", False
    return body.decode("utf-8", "replace"), cut


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


def request_text(record: ExchangeRecord) -> str:
    """The request body as text fit to keep or show (decoded, keys masked)."""
    encoding = record.header("content-encoding", False)
    return masked_text(decoded(record.request_body, encoding, record.limit)[0])


def stored_row(
    record: ExchangeRecord, conversation: str | None = None, request: str | None = None
) -> StoredRow:
    """`record` fit to store; `request`: its `request_text`, where already worked out."""
    limit = record.limit
    response, cut = decoded(record.response_body, record.header("content-encoding"), limit)
    truncated = record.truncated or cut
    kind = (record.header("content-type") or "").lower()
    values = {
        "number": record.number,
        "conversation": conversation,
        "provider": record.provider,
        "upstream": record.upstream,
        "method": record.method,
        "path": record.path,
        "query": masked_text(record.query),
        "request_headers": json.dumps(stored_headers(record.request_headers)),
        "request_body": request_text(record) if request is None else request,
        "status": record.status,
        "response_headers": json.dumps(stored_headers(record.response_headers)),
        "response_body": masked_text(response, cut=truncated),
        "streamed": int("text/event-stream" in kind),
        "truncated": int(truncated),
        "failure": masked_text(record.failure) if record.failure else None,
        "started": record.started,
        "first_byte": record.first_byte,
        "ended": record.ended,
    }
    return StoredRow(values)


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
