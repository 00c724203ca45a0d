"""What the provider removed from a request before the model saw it, as its reply reports.

A reply can list changes the API made to the request's input (`input_transformations`):

- Anthropic (beta `thinking-binding-controls-2026-08-01`): `thinking_dropped` entries name a
  thinking, redacted-thinking or connector-text block by `path` (`messages.{i}.content.{j}`)
  that was removed from the prompt: it adds nothing to `usage.input_tokens`.
  `thinking_mismatch_allowed` entries name a block that failed the binding check and was shown
  all the same. In a stream the list is in `message_start`; a final `message_delta` carrying
  one replaces it (a server-side model fallback).
- OpenAI Responses: entries `{"type": "reasoning", "id", "action": "removed", "reason"}` name
  reasoning items of the input, by id, that were withheld from the model.

The model context is built from the request alone; `as_seen` applies a reply's list to it, so
each removed part becomes a `not_seen` segment of 0 tokens.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from dtl_notebook.context.segments import ModelContext, Segment

__all__ = ["Removal", "as_seen", "removals"]

Removal = tuple[str, str]  # (payload path of the removed part, why)


def _plain(response: Any) -> Any:
    dump = getattr(response, "model_dump", None)
    return dump(mode="json", exclude_none=True, warnings=False) if callable(dump) else response


def _events(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        line = line.removeprefix("data:").strip()
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def _listed(response: Any) -> list[Any] | None:
    """The reply's `input_transformations` (a body, an SDK object or a stream's text)."""
    data = _plain(response)
    if isinstance(data, dict):
        found = data.get("input_transformations")
        return found if isinstance(found, list) else None
    if not isinstance(data, str):
        return None
    listed: list[Any] | None = None
    for event in _events(data):
        kind = event.get("type")
        holder = (
            event.get("message")
            if kind == "message_start"
            else event.get("delta")
            if kind == "message_delta"
            else event.get("response")
            if kind in ("response.completed", "response.incomplete", "response.created")
            else None
        )
        found = holder.get("input_transformations") if isinstance(holder, dict) else None
        if isinstance(found, list):
            listed = found  # a later list replaces an earlier one
    return listed


def removals(payload: dict[str, Any], response: Any) -> tuple[list[Removal], list[str]]:
    """(parts the reply says were removed before the model saw them, notes on parts that were
    flagged but shown all the same). Entry types not known here are skipped."""
    removed: list[Removal] = []
    notes: list[str] = []
    items = payload.get("input")
    ids = {
        str(item["id"]): f"input.{i}"
        for i, item in enumerate(items if isinstance(items, list) else [])
        if isinstance(item, dict) and item.get("id") is not None
    }
    for entry in _listed(response) or []:
        if not isinstance(entry, dict):
            continue
        kind, reason = entry.get("type"), str(entry.get("reason") or "no reason given")
        if kind == "thinking_dropped" and isinstance(entry.get("path"), str):
            removed.append((entry["path"], reason))
        elif kind == "thinking_mismatch_allowed" and isinstance(entry.get("path"), str):
            notes.append(
                f"{entry['path']}: failed the thinking binding check ({reason}) and was "
                "shown to the model all the same"
            )
        elif kind == "reasoning" and entry.get("action") == "removed":
            path = ids.get(str(entry.get("id")))
            if path is not None:
                removed.append((path, reason))
            else:
                notes.append(f"reasoning item {entry.get('id')} was withheld ({reason})")
    return removed, notes


def _dropped(segment: Segment, reason: str) -> Segment:
    label = f"{segment.label or segment.kind} (removed by the API: {reason}; not seen by the model)"
    return replace(segment, kind="not_seen", tokens=0, label=label)


def as_seen(ctx: ModelContext, payload: dict[str, Any], response: Any) -> ModelContext:
    """`ctx` with the parts `response` reports as removed turned into `not_seen` segments of
    0 tokens, and a note per flagged part; `ctx` itself where the reply reports nothing."""
    removed, notes = removals(payload, response)
    if not removed and not notes:
        return ctx
    segments = list(ctx.segments)
    for path, reason in removed:
        hits = [
            i
            for i, s in enumerate(segments)
            if s.kind != "not_seen" and (s.source == path or s.source.startswith(path + "."))
        ]
        for i in hits:
            segments[i] = _dropped(segments[i], reason)
        if hits:
            notes.append(f"{path}: removed by the API before the model saw it ({reason})")
    if segments == ctx.segments and not notes:
        return ctx
    return replace(ctx, segments=segments, notes=[*ctx.notes, *notes], rendered=None)
