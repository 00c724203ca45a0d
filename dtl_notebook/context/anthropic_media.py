"""Anthropic image and document blocks (in a message or a tool result), counted as Anthropic
bills them (`media`); what it does not publish is named in the notes."""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.collector import Collector
from dtl_notebook.context.content_rules import UNPUBLISHED
from dtl_notebook.context.media import (
    anthropic_image_tokens,
    anthropic_pdf_tokens,
    claude_billing,
    media_key,
)
from dtl_notebook.context.segments import block_text


def media_block(
    block: dict[str, Any], path: str, role: str, out: Collector, kind: str = "message"
) -> None:
    """An image or document block, counted as Anthropic bills it."""
    source = block.get("source") or {}
    if block.get("type") == "image":
        image = anthropic_image_tokens(source)
        unknown = image.unknown(path)
        if unknown:
            out.notes.append(f"{UNPUBLISHED}{unknown}")
        out.add(
            kind,
            f"{image.describe()[:-1]} {media_key(source)}]",
            path,
            label=role,
            role=role,
            tokens=image.tokens,
            new_block=kind == "message",
        )
        return
    title = " ".join(str(block.get(k, "")) for k in ("title", "context") if block.get(k))
    given = source.get("type") if isinstance(source, dict) else None
    if given == "text":
        out.add(
            kind,
            f"{title}\n{source.get('data', '')}".strip(),
            path,
            label=role,
            role=role,
            new_block=kind == "message",
        )
    elif given == "content":
        parts = source.get("content")
        text = parts if isinstance(parts, str) else "".join(block_text(p) for p in parts or [])
        out.add(
            kind,
            f"{title}\n{text}".strip(),
            path,
            label=role,
            role=role,
            new_block=kind == "message",
        )
    elif given == "base64" and "pdf" in str(source.get("media_type", "")):
        tokens, pages, read = anthropic_pdf_tokens(str(source.get("data", "")), out.counter.count)
        if not read:
            out.notes.append(f"{UNPUBLISHED}the text of the PDF at {path} (compressed)")
        pdf = f"[PDF, {pages} page{'s' if pages != 1 else ''}, {media_key(source)}]"
        text = f"{pdf} {title}".strip()
        out.add(
            kind,
            text,
            path,
            label=role,
            role=role,
            tokens=tokens + (out.counter.count(title) if title else 0),
            new_block=kind == "message",
        )
    else:  # by URL or file id: its pages are not in the request
        rule = claude_billing()["pdf"]["unknown_rule"]
        out.notes.append(
            f"{UNPUBLISHED}the document at {path} ({given}): unknown until the provider "
            f"answers ({rule})"
        )
        out.add(
            kind,
            f"[document by {given}: unknown until the provider answers, {media_key(source)}]"
            f" {title}".strip(),
            path,
            label=role,
            role=role,
            tokens=out.counter.count(title) if title else 0,
            new_block=kind == "message",
        )
