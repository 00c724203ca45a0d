"""Parts of OpenAI message content billed by rules of their own, never as their JSON text:
`input_audio` by its duration (`audio`), and a file given by id or URL (Responses
`input_file`, Chat Completions `file`), whose pages are not in the request, as unknown until the
provider answers, with the rule that will apply (`data/billing.json` "openai")."""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.audio import audio_tokens
from dtl_notebook.context.collector import Collector
from dtl_notebook.context.content_rules import UNPUBLISHED
from dtl_notebook.context.media import billing

__all__ = ["own_rule", "own_rule_tokens"]


def _file_by_reference(part: dict[str, Any]) -> bool:
    given = part.get("file") if part.get("type") == "file" else part
    if part.get("type") not in ("input_file", "file") or not isinstance(given, dict):
        return False
    return not given.get("file_data") and bool(given.get("file_id") or given.get("file_url"))


def own_rule(part: Any) -> bool:
    """Whether a content part is billed by a rule of its own (audio, a file by reference)."""
    if not isinstance(part, dict):
        return False
    return part.get("type") == "input_audio" or _file_by_reference(part)


def own_rule_tokens(parts: list[dict[str, Any]], out: Collector) -> int:
    """Tokens of such parts; each unknown one is named with its rule and counted as 0."""
    rules = billing()["openai"]
    tokens = 0
    for part in parts:
        if part.get("type") != "input_audio":
            out.notes.append(
                f"{UNPUBLISHED}a file given by id or URL: unknown until the provider answers "
                f"({rules['file']['unknown_rule']})"
            )
            continue
        given = part.get("input_audio")
        given = given if isinstance(given, dict) else {}
        counted = audio_tokens(str(given.get("data", "")), str(given.get("format", "")))
        if counted is None:
            out.notes.append(
                f"{UNPUBLISHED}an audio clip whose length cannot be read: unknown until the "
                f"provider answers (1 token per {rules['audio']['ms_per_token']} ms of audio)"
            )
        tokens += counted or 0
    return tokens
