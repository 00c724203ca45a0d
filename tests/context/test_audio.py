"""Chat Completions `input_audio`: billed by its duration, never counted as its base64 text."""

from __future__ import annotations

import base64
import io
import wave

from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.context import model_context
from dtl_notebook.context.audio import audio_duration_ms, audio_tokens


def _wav(seconds: float, rate: int = 8000) -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\0\0" * int(seconds * rate))
    return base64.b64encode(buffer.getvalue()).decode()


def _mp3(kbytes: int) -> str:
    """An MPEG-1 Layer III stream at 128 kbit/s: a frame header, then its size in bytes."""
    return base64.b64encode(b"\xff\xfb\x90\x00" + b"\0" * (kbytes * 1000 - 4)).decode()


def _chat(clip: str, audio_format: str) -> dict[str, object]:
    part = {"type": "input_audio", "input_audio": {"data": clip, "format": audio_format}}
    text = {"type": "text", "text": "What is in this recording?"}
    return {
        "model": "gpt-4o-audio-preview",
        "messages": [{"role": "user", "content": [text, part]}],
    }


def test_a_wav_clip_costs_one_token_per_100_ms() -> None:
    assert audio_tokens(_wav(4.2), "wav") == 42


def test_an_mp3_clip_is_timed_by_its_bitrate() -> None:
    # 16,000 bytes at 128 kbit/s: one second
    assert audio_duration_ms(_mp3(16), "mp3") == 1000
    assert audio_tokens(_mp3(16), "mp3") == 10


def test_a_clip_is_not_counted_as_text() -> None:
    """Counted as text, the base64 of a 4-second clip is thousands of tokens; billed, 40."""
    clip = _wav(4.0)
    with_clip = model_context(_chat(clip, "wav"), provider="openai-chat").total_tokens
    text_only = _chat(clip, "wav")
    text_only["messages"][0]["content"].pop()  # type: ignore[index]
    without = model_context(text_only, provider="openai-chat").total_tokens
    assert with_clip - without == 40


def test_an_unreadable_clip_is_unknown_and_says_so() -> None:
    ctx = model_context(_chat("bm90IGF1ZGlv", "wav"), provider="openai-chat")
    assert any("unknown until the provider answers" in n for n in ctx.estimate.unpublished)


@given(st.floats(min_value=0.1, max_value=30.0))
def test_tokens_grow_with_duration(seconds: float) -> None:
    tokens = audio_tokens(_wav(seconds), "wav")
    assert tokens is not None and abs(tokens - seconds * 10) <= 1
