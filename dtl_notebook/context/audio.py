"""What OpenAI bills for an `input_audio` clip: its duration at the published rate
(`data/billing.json` "openai" "audio"), read from the clip's own header, never its text.

A WAV states its byte rate and its data size; an MP3 frame header states its bitrate, over
which the clip's size gives the duration of a constant-bitrate file. A clip whose header
cannot be read is unknown until the provider answers (None).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

from dtl_notebook.context.media import billing

__all__ = ["audio_duration_ms", "audio_tokens"]

# kbit/s by bitrate index: MPEG-1 Layer III, and MPEG-2 / 2.5 Layer III
_MP3_KBPS = {
    3: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}


def _wav_ms(raw: bytes) -> float | None:
    if raw[:4] != b"RIFF" or raw[8:12] != b"WAVE":
        return None
    at, byte_rate = 12, 0
    while at + 8 <= len(raw):
        name, size = raw[at : at + 4], struct.unpack_from("<I", raw, at + 4)[0]
        if name == b"fmt " and at + 16 <= len(raw):
            byte_rate = struct.unpack_from("<I", raw, at + 16)[0]
        if name == b"data":
            size = min(size, len(raw) - at - 8)  # a streamed WAV states 0 or too much
            return 1000 * size / byte_rate if byte_rate else None
        at += 8 + size + (size & 1)
    return None


def _mp3_ms(raw: bytes) -> float | None:
    start = 0
    if raw[:3] == b"ID3" and len(raw) >= 10:  # skip the tag: its size in 7-bit bytes
        size = raw[6:10]
        start = 10 + (size[0] << 21 | size[1] << 14 | size[2] << 7 | size[3])
    for at in range(start, min(len(raw) - 4, start + 4096)):
        if raw[at] == 0xFF and raw[at + 1] & 0xE0 == 0xE0:
            version, layer = (raw[at + 1] >> 3) & 3, (raw[at + 1] >> 1) & 3
            index = raw[at + 2] >> 4
            if layer != 1 or index in (0, 15) or version == 1:  # Layer III only
                continue
            kbps = _MP3_KBPS[3 if version == 3 else 2][index]
            return 8 * (len(raw) - at) / kbps
    return None


def audio_duration_ms(data: str, audio_format: str) -> float | None:
    """The duration of a base64 clip in milliseconds, or None where its header is unreadable."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None
    reader = _wav_ms if audio_format == "wav" else _mp3_ms if audio_format == "mp3" else None
    return reader(raw) if reader else None


def audio_tokens(data: str, audio_format: str) -> int | None:
    """Tokens OpenAI bills for an input_audio clip, or None where its duration is unknown."""
    duration = audio_duration_ms(data, audio_format)
    if duration is None:
        return None
    return math.ceil(duration / int(billing()["openai"]["audio"]["ms_per_token"]))
