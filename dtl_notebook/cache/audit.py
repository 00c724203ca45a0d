"""Audit captured traffic: read a JSONL file of requests and find where the cache broke."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.cache.analyze import CacheReport, analyze


class CaptureError(DtlError, ValueError):
    """A capture file line that is not a request body or a {request, response} pair."""


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


def load_jsonl(path: str | Path) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(request, response or None) per line; blank lines are skipped."""
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaptureError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict):
            raise CaptureError(f"{path}:{number}: expected a JSON object")
        if "request" in item:
            request, response = item["request"], item.get("response")
            if not isinstance(request, dict) or not (
                response is None or isinstance(response, dict)
            ):
                raise CaptureError(f"{path}:{number}: request/response must be objects")
            pairs.append((request, response))
        elif "model" in item:
            pairs.append((item, None))
        else:
            raise CaptureError(
                f"{path}:{number}: neither a request body (no 'model') nor a "
                '{"request": …, "response": …} pair'
            )
    return pairs


def audit_jsonl(path: str | Path, provider: str | None = None, **overrides: Any) -> CacheReport:
    """Analyze every captured request in a JSONL file, in order."""
    pairs = load_jsonl(path)
    if not pairs:
        raise CaptureError(f"{path}: no requests")
    provider = provider or detect_provider(pairs[0][0])
    return analyze(
        [p for p, _ in pairs], provider=provider, responses=[r for _, r in pairs], **overrides
    )
