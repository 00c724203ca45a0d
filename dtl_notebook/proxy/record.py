"""One exchange as it crosses the proxy: the raw request, the response bytes as they arrive
(kept up to a limit), and the times. Built on the forwarding path, so it only appends and
timestamps; masking, decompression and parsing happen later, on the store's thread."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from dtl_notebook.proxy.headers import RawHeaders


@dataclass
class ExchangeRecord:
    number: int
    method: str
    path: str
    query: str
    family: str  # the upstream family (ProviderSpec.family): anthropic or openai
    provider: str  # the provider the body is written for (from the path)
    upstream: str
    request_headers: RawHeaders
    request_body: bytes
    limit: int  # response bytes kept for the store
    started: float = field(default_factory=time.time)
    status: int | None = None
    response_headers: RawHeaders = field(default_factory=list)
    first_byte: float | None = None
    ended: float | None = None
    failure: str | None = None  # what went wrong on the way (unreachable, cut mid-stream)
    truncated: bool = False
    conversation: str | None = None  # assigned in arrival order
    edited: str | None = None  # what the proxy added to the request, when asked to
    received: int = 0  # response bytes relayed, kept or not
    _chunks: list[bytes] = field(default_factory=list)
    _kept: int = 0

    def response(self, status: int, headers: RawHeaders) -> None:
        self.status, self.response_headers = status, headers

    def chunk(self, data: bytes) -> None:
        if self.first_byte is None:
            self.first_byte = time.time()
        self.received += len(data)
        room = self.limit - self._kept
        if len(data) > room:
            self.truncated = True
            data = data[: max(room, 0)]
        if data:
            self._chunks.append(data)
            self._kept += len(data)

    def finish(self, failure: str | None = None) -> None:
        self.ended = time.time()
        if failure is not None and self.failure is None:
            self.failure = failure

    @property
    def response_body(self) -> bytes:
        """The response bytes as they came from the upstream (still compressed, if they were)."""
        return b"".join(self._chunks)

    def header(self, name: str, response: bool = True) -> str | None:
        wanted = name.lower().encode()
        for key, value in self.response_headers if response else self.request_headers:
            if key.lower() == wanted:
                return value.decode("latin-1")
        return None


class Recorder(Protocol):
    """What the forwarding side tells of each exchange; neither call may block."""

    def arrive(self, record: ExchangeRecord) -> None:
        """A request has arrived, before it is forwarded (it may edit `record.request_body`)."""

    def put(self, record: ExchangeRecord) -> None:
        """Its exchange has ended, whatever happened."""
