"""Reading captured traffic: JSONL logs, HAR files, SDK-snapshot pair files, one request.

Every entry becomes an Exchange: its provider (from the URL path when there is one, else from
the request body), the request body, and the response object (a streamed body is accumulated)
or the provider's error (any status outside 2xx is a refusal). A malformed entry raises
CaptureError naming the file, the entry and the field; entries of a HAR that are not provider
calls (pages, scripts, token counts) are left out.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from dtl_notebook.cache.capture_request import detect_provider, request_problem
from dtl_notebook.cache.exchange import (
    CaptureError,
    Exchange,
    exchange_from,
    json_body,
    status_of,
)
from dtl_notebook.cache.store_reader import is_store, load_store
from dtl_notebook.wire.providers import SPECS
from dtl_notebook.wire.providers import provider_at as provider_from_url
from dtl_notebook.wire.reply import (
    JSON,
    ProviderError,
    ResponseFormatError,
    body_preview,
)
from dtl_notebook.wire.stream import response_bodies

__all__ = ["CaptureError", "Exchange", "detect_provider", "load_capture", "provider_from_url"]


def load_capture(path: str | Path) -> list[Exchange]:
    """Every provider call in a capture file, in order (JSONL, HAR, a JSON list of pairs, or
    one request or pair as a JSON document, pretty-printed or not; the proxy's SQLite store)."""
    if is_store(path):
        return load_store(path)
    name = Path(path).name
    text = _utf8(Path(path).read_bytes(), str(path))
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None
    except RecursionError:
        raise CaptureError(f"{path}: JSON nested too deep to read") from None
    if isinstance(document, dict) and isinstance(document.get("log"), dict):
        return _har(document, name)
    if isinstance(document, list):
        return _pairs(document, name)
    if isinstance(document, dict) and "\n" in text.strip():  # one JSON spread over lines
        return _entry(document, name)
    return _jsonl(text, str(path))


def request_file(path: str | Path) -> JSON:
    """One request body from a JSON file (what `lint` checks), or a CaptureError naming the
    file and what is wrong: empty, not UTF-8, not one JSON object, too deep, no model."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise CaptureError(f"{path}: empty file (expected one request body, a JSON object)")
    text = _utf8(data, str(path))
    try:
        body = json_body(text, str(path))
    except CaptureError as exc:
        if "Extra data" in str(exc):  # a JSONL capture: several bodies, one a line
            raise CaptureError(
                f"{exc} — one request body per file (a capture of several: `audit`)"
            ) from None
        raise
    model = body.get("model")
    if not isinstance(model, str):
        what = "missing" if model is None else f"expected a string, got {model!r}"
        raise CaptureError(f"{path}: model: {what} (every request body names its model)")
    problem = request_problem(body)
    if problem is not None:
        raise CaptureError(f"{path}: {problem}")
    return body


def _utf8(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise CaptureError(
            f"{name}:{line}: not UTF-8: byte {data[exc.start]:#04x} at offset {exc.start} "
            f"(column {column})"
        ) from None


def _jsonl(text: str, name: str) -> list[Exchange]:
    found: list[Exchange] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            found.extend(_entry(json_body(line, f"{name}:{number}"), f"{name}:{number}"))
    return found


def _entry(item: JSON, where: str) -> list[Exchange]:
    if "request" in item:
        return _pair(item, where, "")
    if "model" in item:
        return [exchange_from(where, item, None)]
    raise CaptureError(
        f'{where}: neither a request body (no \'model\') nor a {{"request": …, "response": …}} pair'
    )


def _pairs(items: list[Any], name: str) -> list[Exchange]:
    found = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "request" not in item:
            raise CaptureError(f"{name}: [{i}]: expected a {{request, response}} object")
        found.extend(_pair(item, name, f"[{i}]."))
    return found


def _pair(item: JSON, name: str, at: str) -> list[Exchange]:
    """A {request, response} pair: bodies as they are, or HTTP records with url (or path),
    body and status; the response may be an object, a streamed text or a list of events."""
    request, response = item.get("request"), item.get("response")
    where = f"{name}: {at.rstrip('.')}" if at else name
    if not isinstance(request, dict):
        raise CaptureError(f"{name}: {at}request: expected an object")
    if response is not None and not isinstance(response, (dict, str, list)):
        raise CaptureError(
            f"{name}: {at}response: expected an object, a streamed text or a list of events, "
            f"got {type(response).__name__}"
        )
    address = request.get("url") or request.get("path")
    url = address if isinstance(address, str) else None
    if "body" in request and (url or "method" in request):
        body = json_body(request["body"], f"{name}: {at}request.body")
        if url and provider_from_url(url) is None:
            return []
    else:
        body, url = request, None
    status = None
    if isinstance(response, dict) and "body" in response:
        code = response.get("status_code", response.get("status"))
        status = status_of(code, f"{name}: {at}response.status_code")
        events = response.get("ws_events")
        if isinstance(request.get("ws_events"), list) and isinstance(events, list):
            return _socket(request["ws_events"], events, where, status, url)
        response = events if response["body"] is None and events else response["body"]
    return [exchange_from(where, body, response, status, url)]


def _socket(
    sent: list[Any], received: list[Any], where: str, status: int | None, url: str | None
) -> list[Exchange]:
    """A Responses WebSocket session: each `response.create` event sent is a request (its body
    with the event's `type`), answered by one stream of the events received, in order."""
    bodies = [
        {k: v for k, v in e.items() if k != "type"}
        for e in sent
        if isinstance(e, dict) and e.get("type") == "response.create"
    ]
    # the provider whose streams are response events: the one a Responses socket speaks
    provider = next(r.name for r in SPECS.values() if r.stream_format == "response-events")
    try:
        replies = response_bodies(received, provider)
    except (ResponseFormatError, ProviderError) as exc:
        raise CaptureError(f"{where}: response.ws_events: {exc}") from None
    if len(replies) != len(bodies):
        raise CaptureError(
            f"{where}: {len(bodies)} response.create events sent but {len(replies)} "
            "responses streamed back"
        )
    return [
        exchange_from(f"{where} response {n}", body, reply, status, url)
        for n, (body, reply) in enumerate(zip(bodies, replies, strict=True))
    ]


def _har(document: JSON, name: str) -> list[Exchange]:
    entries = document["log"].get("entries")
    if not isinstance(entries, list):
        raise CaptureError(f"{name}: log.entries: expected a list")
    found = []
    for i, entry in enumerate(entries):
        at = f"{name}: log.entries[{i}]"
        request = entry.get("request") if isinstance(entry, dict) else None
        if not isinstance(request, dict) or not isinstance(request.get("url"), str):
            raise CaptureError(f"{at}.request.url: missing")
        url = request["url"]
        method = request.get("method", "POST")  # HTTP methods are case-sensitive, but a
        # hand-written or converted HAR says "post" for the same call
        if provider_from_url(url) is None or str(method).upper() != "POST":
            continue
        post = request.get("postData")
        if not isinstance(post, dict) or not isinstance(post.get("text"), str):
            raise CaptureError(f"{at}.request.postData.text: missing (a POST to {url})")
        body = json_body(post["text"], f"{at}.request.postData.text")
        response = entry.get("response")
        if not isinstance(response, dict):
            raise CaptureError(f"{at}.response: missing")
        content = response.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        if isinstance(text, str) and isinstance(content, dict) and content.get("encoding"):
            text = _base64(text, content["encoding"], f"{at}.response.content.text")
        status = status_of(response.get("status"), f"{at}.response.status")
        if not status and not text:  # status 0: no response came (aborted, blocked, cut)
            text = None
        found.append(exchange_from(at, body, text, status or None, url))
    return found


def _base64(text: str, encoding: Any, where: str) -> str:
    if encoding != "base64":
        raise CaptureError(f"{where}: unknown encoding {encoding!r} (HAR allows 'base64')")
    try:
        return _utf8(base64.b64decode(text, validate=True), where)
    except (binascii.Error, ValueError) as exc:
        if isinstance(exc, CaptureError):
            raise
        raise CaptureError(f"{where}: not base64 {body_preview(text)}") from None
