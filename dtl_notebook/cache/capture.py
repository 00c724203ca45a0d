"""Reading captured traffic: JSONL logs, HAR files and SDK-snapshot pair files.

Every entry becomes an Exchange: its provider (from the URL path when there is one, else from
the request body), the request body, and the response object (a streamed body is accumulated)
or the provider's error. A malformed entry raises CaptureError naming the file, the entry and
the field; entries of a HAR that are not provider calls (pages, scripts, token counts) are left out.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.wire.reply import (
    JSON,
    ProviderError,
    ResponseFormatError,
    body_preview,
    error_from_body,
)
from dtl_notebook.wire.stream import response_body


class CaptureError(DtlError, ValueError):
    """A capture entry that is not a request body or a {request, response} pair; names the
    file, the entry (line number or JSON path) and the field."""


@dataclass
class Exchange:
    """One captured request and what came back: a response object or a provider error."""

    source: str
    provider: str
    request: JSON
    response: JSON | None = None
    error: ProviderError | None = None
    status: int | None = None
    url: str | None = None


def detect_provider(payload: dict[str, Any]) -> str:
    """The provider a request body was written for, from its shape."""
    if "input" in payload or "instructions" in payload:
        return "openai-responses"
    messages = payload.get("messages") or []
    if "max_tokens" in payload and ("system" in payload or _has_blocks(messages)):
        return "anthropic"
    if any(m.get("role") == "system" and "tools" in m for m in messages if isinstance(m, dict)):
        return "kimi"
    if str(payload.get("model", "")).startswith("claude-"):
        return "anthropic"
    return "openai-chat"


def _has_blocks(messages: list[Any]) -> bool:
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in {"tool_use", "tool_result", "text", "image"}
            for b in content
        ):
            return True
    return False


def provider_from_url(url: str) -> str | None:
    """The provider whose generation endpoint `url` calls, or None for any other URL."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/chat/completions"):
        return "kimi" if "moonshot" in parts.netloc else "openai-chat"
    return None


def load_capture(path: str | Path) -> list[Exchange]:
    """Every provider call in a capture file, in order (JSONL, HAR, a JSON list of pairs, or
    the proxy's SQLite store)."""
    from dtl_notebook.cache.store_reader import is_store, load_store

    if is_store(path):
        exchanges: list[Exchange] = load_store(path)
        return exchanges
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None
    name = Path(path).name
    if isinstance(document, dict) and isinstance(document.get("log"), dict):
        return _har(document, name)
    if isinstance(document, list):
        return _pairs(document, name)
    return _jsonl(text, str(path))


def _jsonl(text: str, name: str) -> list[Exchange]:
    found: list[Exchange] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        item = _json_body(line, where)
        if "request" in item:
            exchange = _pair(item, where, "")
            if exchange is not None:
                found.append(exchange)
        elif "model" in item:
            found.append(_exchange(where, item, None))
        else:
            raise CaptureError(
                f"{where}: neither a request body (no 'model') nor a "
                '{"request": …, "response": …} pair'
            )
    return found


def _pairs(items: list[Any], name: str) -> list[Exchange]:
    found = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "request" not in item:
            raise CaptureError(f"{name}: [{i}]: expected a {{request, response}} object")
        exchange = _pair(item, name, f"[{i}].")
        if exchange is not None:
            found.append(exchange)
    return found


def _pair(item: JSON, name: str, at: str) -> Exchange | None:
    """A {request, response} pair: bodies as they are, or HTTP records with url/body/status."""
    request, response = item.get("request"), item.get("response")
    if not isinstance(request, dict):
        raise CaptureError(f"{name}: {at}request: expected an object")
    if response is not None and not isinstance(response, dict):
        raise CaptureError(f"{name}: {at}response: expected an object")
    url = request.get("url") if isinstance(request.get("url"), str) else None
    if "body" in request and (url or "method" in request):
        body = _json_body(request["body"], f"{name}: {at}request.body")
        if url and provider_from_url(url) is None:
            return None
    else:
        body, url = request, None
    status = None
    if isinstance(response, dict) and "body" in response and "status_code" in response:
        status = _status(response["status_code"], f"{name}: {at}response.status_code")
        response = response["body"]
    return _exchange(f"{name}: {at.rstrip('.')}" if at else name, body, response, status, url)


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
        if provider_from_url(url) is None or request.get("method", "POST") != "POST":
            continue
        post = request.get("postData")
        if not isinstance(post, dict) or not isinstance(post.get("text"), str):
            raise CaptureError(f"{at}.request.postData.text: missing (a POST to {url})")
        body = _json_body(post["text"], f"{at}.request.postData.text")
        response = entry.get("response")
        if not isinstance(response, dict):
            raise CaptureError(f"{at}.response: missing")
        content = response.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        if isinstance(text, str) and isinstance(content, dict) and content.get("encoding"):
            text = _base64(text, content["encoding"], f"{at}.response.content.text")
        status = _status(response.get("status"), f"{at}.response.status")
        found.append(_exchange(at, body, text, status or None, url))
    return found


def _base64(text: str, encoding: Any, where: str) -> str:
    if encoding != "base64":
        raise CaptureError(f"{where}: unknown encoding {encoding!r} (HAR allows 'base64')")
    try:
        return base64.b64decode(text, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        raise CaptureError(f"{where}: not base64 {body_preview(text)}") from None


def _json_body(value: Any, where: str) -> JSON:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise CaptureError(f"{where}: not JSON ({exc.msg}): {body_preview(value)}") from None
    if not isinstance(value, dict):
        raise CaptureError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _status(value: Any, where: str) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise CaptureError(f"{where}: expected an HTTP status number, got {value!r}")


def _exchange(
    where: str, body: JSON, raw: Any, status: int | None = None, url: str | None = None
) -> Exchange:
    """Check the request body and turn the response into an object or a ProviderError."""
    if not isinstance(body.get("model"), str):
        raise CaptureError(f"{where}: request model: missing (every request body names one)")
    provider = (provider_from_url(url) if url else None) or detect_provider(body)
    exchange = Exchange(where, provider, body, status=status, url=url)
    if raw is None or (raw == "" and status and status >= 400):
        if status and status >= 400:
            exchange.error = ProviderError(provider, "empty error body", status)
        return exchange
    try:
        data = response_body(raw, provider)
        error = error_from_body(data, provider, status)
        if error is None and status and status >= 400:
            error = ProviderError(provider, body_preview(json.dumps(data)), status)
        if error is not None:
            raise error
    except ProviderError as exc:
        exchange.error = ProviderError(provider, exc.message, exc.status or status, exc.type)
        return exchange
    except ResponseFormatError as exc:
        if status and status >= 400:  # an HTML error page from a proxy, say
            exchange.error = ProviderError(provider, str(exc), status)
            return exchange
        raise CaptureError(f"{where}: response {exc.field}: {exc.reason}") from None
    if not isinstance(data, dict):
        raise CaptureError(f"{where}: response: expected an object, got {type(data).__name__}")
    exchange.response = data
    return exchange
