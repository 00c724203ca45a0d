"""Which parts of a request the model sees, and the hidden prompts some parts bring along.

Rules and their sources are in `data/billing.json`: thinking and reasoning from earlier turns
(stripped by the API before the model sees them), server and hosted tools (a prompt of
published size, or one whose size the provider does not publish), structured output (a hidden
prompt that must carry the schema). A part of unpublished size is named in the context's notes
with the `UNPUBLISHED` prefix, and the estimate lists it instead of hiding it in its band.
"""

from __future__ import annotations

import re
from typing import Any

from dtl_notebook.context.media import billing, claude_billing

__all__ = [
    "UNPUBLISHED",
    "current_turn_start",
    "keeps_prior_thinking",
    "openai_hosted_unpublished",
    "output_schema",
    "server_tool_prompt",
]

UNPUBLISHED = "unpublished: "
_CLAUDE = re.compile(
    r"claude-(?:(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)|(\d+)-(\d+)-(opus|sonnet|haiku))"
)


def keeps_prior_thinking(model: str) -> bool:
    """Whether `model` keeps thinking blocks of earlier assistant turns (Opus >= 4.5,
    Sonnet >= 4.6 by default, per Anthropic's extended-thinking docs)."""
    match = _CLAUDE.search(model.strip().lower())
    if match is None:
        return False
    if match.group(1):
        family, version = match.group(1), (int(match.group(2)), int(match.group(3) or 0))
    else:
        family, version = match.group(6), (int(match.group(4)), int(match.group(5)))
    floor = claude_billing()["thinking"]["keeps_all"].get(family)
    return floor is not None and version >= tuple(floor)


def _is_user_turn(item: Any, results: tuple[str, ...]) -> bool:
    """A user message that starts a turn: it holds something other than tool results."""
    if not isinstance(item, dict) or item.get("role") != "user":
        return False
    content = item.get("content")
    if not isinstance(content, list):
        return True
    return any(not isinstance(b, dict) or b.get("type") not in results for b in content)


def current_turn_start(items: list[Any], results: tuple[str, ...] = ("tool_result",)) -> int:
    """Index of the user message that opened the current turn (0 when there is none):
    thinking or reasoning before it belongs to earlier turns."""
    for i in range(len(items) - 1, -1, -1):
        if _is_user_turn(items[i], results):
            return i
    return 0


def server_tool_prompt(tool_type: str) -> tuple[int | None, bool]:
    """(published prompt size or None, whether the tool is a server/client tool with a prompt
    of its own) for an Anthropic tool `type` such as "bash_20250124" or "web_search_20250305"."""
    rules = claude_billing()["server_tools"]
    for prefix, tokens in rules["published"].items():
        if tool_type.startswith(prefix):
            return int(tokens), True
    if any(tool_type.startswith(prefix) for prefix in rules["unpublished"]):
        return None, True
    return None, False


def openai_hosted_unpublished(tool_type: str) -> bool:
    """Whether an OpenAI Responses tool of `tool_type` is hosted with a prompt of unpublished
    size."""
    return tool_type in billing()["openai"]["hosted_tools"]["unpublished"]


def output_schema(payload: dict[str, Any]) -> Any:
    """The JSON schema a structured-output request constrains the reply to, or None:
    Anthropic `output_config.format` / `output_format`, OpenAI Responses `text.format`,
    Chat Completions `response_format`."""
    candidates = [
        (payload.get("output_config") or {}).get("format")
        if isinstance(payload.get("output_config"), dict)
        else None,
        payload.get("output_format"),
        (payload.get("text") or {}).get("format")
        if isinstance(payload.get("text"), dict)
        else None,
        payload.get("response_format"),
    ]
    for fmt in candidates:
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            nested = fmt.get("json_schema")
            inner: dict[str, Any] = nested if isinstance(nested, dict) else fmt
            return inner.get("schema")
    return None
