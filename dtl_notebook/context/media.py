"""What providers bill for images and PDFs, by the rules they publish (`data/billing.json`).

Image sizes are read from the file header alone (PNG, JPEG, GIF, WebP), so no image library
is needed and nothing is decoded. An image whose size cannot be read (a URL, a file id, an
unknown format) is unknown until the provider answers: counted as 0, with the rule that will
apply, which the caller names.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import math
import re
import struct
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dtl_notebook.wire.providers import ANTHROPIC

__all__ = [
    "ImageTokens",
    "anthropic_image_tokens",
    "anthropic_pdf_tokens",
    "billing",
    "claude_billing",
    "claude_image_tokens",
    "image_size",
    "media_key",
    "openai_image_tokens",
    "pdf_pages",
]

_HEAD_BYTES = 64 * 1024  # enough header for any JPEG whose SOF marker follows its EXIF block


@functools.cache
def billing() -> dict[str, Any]:
    """The parsed billing rules (package data `context/data/billing.json`)."""
    text = resources.files("dtl_notebook.context").joinpath("data/billing.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def claude_billing() -> dict[str, Any]:
    """The billing rules' Claude section (images, PDFs, thinking, server tools)."""
    section: dict[str, Any] = billing()[ANTHROPIC]
    return section


@dataclass(frozen=True)
class ImageTokens:
    """Tokens billed for one image, the size they were computed from, and whether it was read."""

    tokens: int
    width: int
    height: int
    assumed: bool  # the size was not in the request: the tokens are unknown (0 counted)
    rule: str = ""  # where the size is unknown, the rule its tokens will follow

    def describe(self) -> str:
        if self.assumed and not self.tokens:
            return "[image by URL or file id: size unknown until the provider answers]"
        size = f"{self.width}\u00d7{self.height}" if self.width else "of unknown size"
        return f"[image {size}]"

    def unknown(self, where: str) -> str | None:
        """What to say of an image whose tokens are unknown, or None where they are known."""
        if not self.assumed or self.tokens:
            return None
        return f"the image at {where}: unknown until the provider answers ({self.rule})"


def _decoded_head(data: str, limit: int = _HEAD_BYTES) -> bytes:
    chunk = data[: (limit // 3) * 4]
    try:
        return base64.b64decode(chunk + "=" * (-len(chunk) % 4), validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from the first bytes of a PNG, JPEG, GIF or WebP file, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return int(width), int(height)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(head[i + 2 : i + 4], "big")
        # start-of-frame markers (not DHT C4, JPG C8, DAC CC) carry height then width
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return int(width), int(height)
        i += 2 + length
    return None


def media_key(source: Any) -> str:
    """A short digest of what identifies a medium: the data, the URL or the file id, so a
    changed image or document changes its segment's text (and so the cache chain)."""
    if isinstance(source, dict):
        for field in ("data", "url", "file_id", "image_url", "file_data", "file_url"):
            value = source.get(field)
            if isinstance(value, dict):
                value = value.get("url")
            if isinstance(value, str) and value:
                break
        else:
            value = json.dumps(source, sort_keys=True, default=str)
    else:
        value = str(source)
    return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]


def _source_size(source: Any) -> tuple[int, int] | None:
    """The size of an image given as base64 data or a data: URL, or None."""
    if isinstance(source, dict) and source.get("type") == "base64":
        return image_size(_decoded_head(str(source.get("data", ""))))
    if isinstance(source, str) and source.startswith("data:") and "," in source:
        return image_size(_decoded_head(source.split(",", 1)[1]))
    return None


def claude_image_tokens(width: int, height: int) -> int:
    """Tokens Claude bills for a `width` x `height` image: (w * h) / 750 after the downscale."""
    rule = claude_billing()["image"]
    per_token = float(rule["pixels_per_token"])
    scale = min(
        1.0,
        float(rule["long_edge"]) / max(width, height, 1),
        math.sqrt(float(rule["max_tokens"]) * per_token / max(width * height, 1)),
    )
    w, h = max(1, int(width * scale)), max(1, int(height * scale))
    return math.ceil(w * h / per_token)


def anthropic_image_tokens(source: Any) -> ImageTokens:
    """Tokens Claude bills for an image block's `source` (base64 data; else size unknown)."""
    rule = claude_billing()["image"]
    size = _source_size(source)
    if size is None:  # unknown until the provider answers: counted as 0, the rule named
        return ImageTokens(0, 0, 0, True, str(rule["unknown_size_rule"]))
    return ImageTokens(claude_image_tokens(*size), size[0], size[1], False)


def _by_prefix(rows: list[dict[str, Any]], model: str) -> dict[str, Any] | None:
    name = model.strip().lower().rsplit("/", 1)[-1]
    return next((r for r in rows if any(name.startswith(p) for p in r["prefixes"])), None)


def openai_image_tokens(source: Any, detail: str, model: str) -> ImageTokens:
    """Tokens an OpenAI model bills for an image (`source`: a data: URL, else size unknown):
    the patch rule for the models it names, else the 512-px tile rule."""
    rule = billing()["openai"]["image"]
    size = _source_size(source)
    patched = _by_prefix(rule["patches"]["models"], model)
    tiled = _by_prefix(rule["tiles"]["models"], model) or rule["tiles"]["models"][-1]
    if size is None:  # unknown until the provider answers, but for detail low (the base alone)
        if patched is None and detail == "low":
            return ImageTokens(int(tiled["base"]), 0, 0, True)
        if patched is not None:
            said = f"{rule['patches']['rule']}; this model's multiplier {patched['multiplier']}"
        else:
            said = (
                f"{rule['tiles']['rule']}; this model: base {tiled['base']}, tile {tiled['tile']}"
            )
        return ImageTokens(0, 0, 0, True, said)
    width, height = size
    if patched is not None:
        cap = int(rule["patches"]["cap"])
        patches = math.ceil(width / 32) * math.ceil(height / 32)
        if patches > cap:
            shrink = math.sqrt(cap * 32 * 32 / (width * height))
            w, h = width * shrink, height * shrink
            # shrink again so whole patches across the width fit the cap
            w_patches = math.floor(w / 32)
            shrink2 = w_patches / (w / 32) if w_patches else 1.0
            w2, h2 = int(w * shrink2), int(h * shrink2)
            patches = min(cap, math.ceil(w2 / 32) * math.ceil(h2 / 32))
        tokens = math.ceil(patches * float(patched["multiplier"]))
        return ImageTokens(tokens, width, height, False)
    base, tile = int(tiled["base"]), int(tiled["tile"])
    if detail == "low":
        return ImageTokens(base, width, height, False)
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return ImageTokens(base + tile * tiles, width, height, False)


_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_MEDIABOX = re.compile(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]")
_SHOWN_TEXT = re.compile(rb"\(((?:[^()\\]|\\.)*)\)\s*Tj|\[((?:[^\]])*)\]\s*TJ")


def pdf_pages(data: bytes) -> tuple[int, tuple[float, float], str]:
    """(page count, first page size in points, text the uncompressed streams show)."""
    pages = len(_PAGE.findall(data)) or 1
    box = _MEDIABOX.search(data)
    size = (612.0, 792.0)  # US Letter, where no MediaBox can be read
    if box:
        x0, y0, x1, y1 = (float(v) for v in box.groups())
        size = (abs(x1 - x0) or 612.0, abs(y1 - y0) or 792.0)
    shown = b" ".join(m.group(1) or m.group(2) for m in _SHOWN_TEXT.finditer(data))
    return pages, size, shown.decode("latin-1")


def anthropic_pdf_tokens(data: str, count_text: Any) -> tuple[int, int, bool]:
    """(tokens, pages, text read) for a base64 PDF: per page, the image of the page (rendered at
    the long-edge limit, so billed like a full-size image of its shape) plus its text."""
    try:
        raw = base64.b64decode(data + "=" * (-len(data) % 4), validate=False)
    except (binascii.Error, ValueError):
        raw = b""
    pages, (width, height), text = pdf_pages(raw)
    rule = claude_billing()
    long_edge = float(rule["image"]["long_edge"])
    scale = long_edge / max(width, height)
    page_image = claude_image_tokens(int(width * scale), int(height * scale))
    if text.strip():
        return pages * page_image + int(count_text(text)), pages, True
    per_page_text = int(rule["pdf"]["page_text_tokens_when_unreadable"])
    return pages * (page_image + per_page_text), pages, False
