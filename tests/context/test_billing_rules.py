"""What providers bill per content kind: images by size and detail, PDFs, thinking and
reasoning of earlier turns, server-tool and structured-output prompts, server-side loops."""

from __future__ import annotations

import base64
import math
import struct
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.context import ModelContext, model_context
from dtl_notebook.context.calibration import calibration
from dtl_notebook.context.content_rules import keeps_prior_thinking
from dtl_notebook.context.media import (
    anthropic_image_tokens,
    claude_image_tokens,
    image_size,
    openai_image_tokens,
)
from dtl_notebook.context.openai_functions import per_message
from dtl_notebook.context.segments import dump
from dtl_notebook.context.server_loop import model_calls
from dtl_notebook.context.tokens import count_tokens


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00"


def webp(width: int, height: int) -> bytes:
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 22) + b"WEBP" + vp8x + size


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("make", [png, jpeg, gif, webp])
@given(st.integers(1, 5000), st.integers(1, 5000))
def test_image_size_is_read_from_the_header(
    make: Callable[[int, int], bytes], width: int, height: int
) -> None:
    assert image_size(make(width, height)) == (width, height)


def test_claude_image_tokens_follow_the_published_rule() -> None:
    # Anthropic's vision page: 200x200 ≈ 54 tokens, 1000x1000 ≈ 1334, 1092x1092 ≈ 1590
    assert claude_image_tokens(200, 200) == 54
    assert claude_image_tokens(1000, 1000) == 1334
    assert claude_image_tokens(1092, 1092) == 1590
    # larger images are scaled down first: the long edge to 1568 px, about 1,600 tokens at most
    assert claude_image_tokens(4000, 3000) <= 1600
    assert claude_image_tokens(4000, 3000) == claude_image_tokens(8000, 6000)
    wide = claude_image_tokens(3136, 200)  # long edge halved to 1568 -> 1568 x 100
    assert wide == math.ceil(1568 * 100 / 750)


def test_claude_image_block_counts_its_pixels_not_its_base64() -> None:
    data = b64(png(1000, 1000)) + "A" * 40_000  # the size lives in the header
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": data},
                    },
                    {"type": "text", "text": "What is this?"},
                ],
            }
        ],
    }
    ctx = model_context(body, provider="anthropic")
    image = ctx.segments[0]
    per_block = calibration()["anthropic"]["per_block"]
    assert image.text.startswith("[image 1000\u00d71000 sha256:")
    assert image.tokens == 1334 + per_block
    url = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    unknown = anthropic_image_tokens(url["source"])
    assert unknown.assumed and unknown.tokens == 0  # not ~1,600: unknown until answered
    body["messages"][0]["content"][0] = url
    by_url = model_context(body, provider="anthropic")
    said = [n for n in by_url.estimate.unpublished if "unknown until the provider answers" in n]
    assert said and "/ 750 tokens" in said[0]  # with the rule that will apply
    assert by_url.segments[0].tokens == per_block


def test_openai_tiles_by_detail() -> None:
    data = "data:image/png;base64," + b64(png(1024, 1024))
    # 1024 -> shortest side 768 -> 768 x 768 -> 4 tiles: 85 + 4 * 170
    assert openai_image_tokens(data, "high", "gpt-4o").tokens == 765
    assert openai_image_tokens(data, "low", "gpt-4o").tokens == 85
    tall = "data:image/png;base64," + b64(png(2048, 4096))  # OpenAI's example: 1105 tokens
    assert openai_image_tokens(tall, "high", "gpt-4o").tokens == 1105
    assert openai_image_tokens(data, "high", "gpt-5").tokens == 70 + 4 * 140
    by_url = openai_image_tokens("https://x/y.png", "high", "gpt-4o")
    assert by_url.assumed and by_url.tokens == 0 and "base 85, tile 170" in by_url.rule
    # detail low bills the base alone, whatever the size: known without it
    assert openai_image_tokens("https://x/y.png", "low", "gpt-4o").tokens == 85


def test_openai_patches_for_the_models_that_use_them() -> None:
    small = "data:image/png;base64," + b64(png(1024, 1024))
    assert openai_image_tokens(small, "high", "gpt-4.1-mini").tokens == math.ceil(1024 * 1.62)
    # OpenAI's example: 1800 x 2400 -> 1056 x 1408 -> 33 x 44 = 1452 patches
    big = "data:image/png;base64," + b64(jpeg(1800, 2400))
    assert openai_image_tokens(big, "high", "o4-mini").tokens == math.ceil(1452 * 1.72)


def test_openai_message_with_image_counts_the_image() -> None:
    data = "data:image/png;base64," + b64(png(1024, 1024)) + "A" * 20_000
    part = {"type": "input_image", "image_url": data, "detail": "low"}
    text = {"type": "input_text", "text": "hi"}
    body: dict[str, Any] = {"model": "gpt-4o", "input": [{"role": "user", "content": [text, part]}]}
    with_image = model_context(body, provider="openai-responses")
    body["input"][0]["content"] = [text]
    without = model_context(body, provider="openai-responses")
    assert with_image.total_tokens - without.total_tokens == 85


def _pdf(pages: int, text: str) -> str:
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Count %d >>" % pages]
    for _ in range(pages):
        objects.append(b"<< /Type /Page /MediaBox [0 0 612 792] >>")
    objects.append(b"BT /F1 12 Tf (" + text.encode() + b") Tj ET")
    return b64(b"%PDF-1.4\n" + b"\n".join(objects) + b"\n%%EOF")


def test_pdf_counts_an_image_and_the_text_of_each_page() -> None:
    words = "Quarterly revenue rose by four percent"
    source = {"type": "base64", "media_type": "application/pdf", "data": _pdf(2, words)}
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "document", "source": source}]}],
    }
    ctx = model_context(body, provider="anthropic")
    (segment,) = ctx.segments
    page = claude_image_tokens(int(612 * 1568 / 792), 1568)
    per_block = calibration()["anthropic"]["per_block"]
    text = count_tokens(words, "anthropic", "claude-sonnet-4-5")
    assert segment.text.startswith("[PDF, 2 pages, sha256:")
    assert segment.tokens == 2 * page + text + per_block


def _thinking_turns(model: str, tool_loop: bool) -> dict[str, object]:
    thought = {
        "type": "thinking",
        "thinking": "The user wants the weather.",
        "signature": "c2ln" * 50,
    }
    call = {"type": "tool_use", "id": "t1", "name": "weather", "input": {}}
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [thought, call]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sun"}],
        },
    ]
    if not tool_loop:
        messages += [
            {"role": "assistant", "content": "Sunny."},
            {"role": "user", "content": "And tomorrow?"},
        ]
    return {
        "model": model,
        "max_tokens": 2000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
        "messages": messages,
    }


def test_thinking_of_earlier_turns_is_not_seen_by_the_model() -> None:
    loop = model_context(_thinking_turns("claude-sonnet-4-5", tool_loop=True), provider="anthropic")
    kept = [s for s in loop if s.label == "thinking"]
    assert len(kept) == 1 and kept[0].tokens > 0 and kept[0].text == "The user wants the weather."
    # the same messages, once a new user turn starts: the API strips the thinking
    later = model_context(
        _thinking_turns("claude-sonnet-4-5", tool_loop=False), provider="anthropic"
    )
    (stripped,) = later.of_kind("not_seen")
    assert stripped.tokens == 0 and stripped.source == "messages.1.content.0"
    assert "not seen by the model" in stripped.label
    assert not [s for s in later if s.label == "thinking"]


def test_models_that_keep_prior_thinking_count_it() -> None:
    assert keeps_prior_thinking("claude-opus-4-5-20251101") and keeps_prior_thinking(
        "claude-sonnet-4-6"
    )
    assert not keeps_prior_thinking("claude-sonnet-4-5") and not keeps_prior_thinking(
        "claude-3-7-sonnet-latest"
    )
    assert not keeps_prior_thinking("claude-haiku-4-5") and not keeps_prior_thinking(
        "claude-sonnet-4-20250514"
    )
    ctx = model_context(_thinking_turns("claude-opus-4-5", tool_loop=False), provider="anthropic")
    assert not ctx.of_kind("not_seen") and [s for s in ctx if s.label == "thinking"]


def test_openai_reasoning_of_earlier_turns_is_dropped() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "A" * 4000}
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    result = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    items = [{"role": "user", "content": "go"}, reasoning, call, result]
    current = model_context({"model": "o4-mini", "input": items}, provider="openai-responses")
    (seen,) = [s for s in current if s.label == "reasoning"]
    assert seen.tokens == 4000 * 3 // 4 // 4 + per_message()
    assert any("reasoning" in part for part in current.estimate.unpublished)
    items = [*items, {"role": "assistant", "content": "done"}, {"role": "user", "content": "again"}]
    later = model_context({"model": "o4-mini", "input": items}, provider="openai-responses")
    (dropped,) = later.of_kind("not_seen")
    assert dropped.tokens == 0 and dropped.source == "input.1"


def test_server_tool_prompt_by_type_and_version() -> None:
    def claude(tool: dict[str, object]) -> ModelContext:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
        }
        return model_context({**body, "tools": [tool]}, provider="anthropic")

    bash = claude({"type": "bash_20250124", "name": "bash"})
    hidden = {s.label: s.tokens for s in bash.of_kind("hidden")}
    assert hidden["bash_20250124 prompt"] == 245  # published on Anthropic's bash tool page
    assert bash.of_kind("tool_schema")[0].tokens == 0  # the published size covers it
    editor = claude({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"})
    assert {s.label: s.tokens for s in editor.of_kind("hidden")}[
        "text_editor_20250728 prompt"
    ] == 700
    # a type and version fitted on real usage carries its fitted size; the band covers it
    # where it was measured held out, and names it where one recording alone fitted it
    search = claude({"type": "web_search_20250305", "name": "web_search"})
    server = calibration()["anthropic"]
    assert {s.label: s.tokens for s in search.of_kind("hidden")}[
        "web_search_20250305 prompt"
    ] == server["server_tool_prompt"]["web_search_20250305"]
    assert "web_search_20250305" in server["server_tool_prompt_held_out"]
    assert search.estimate.unpublished == ()
    fetch = claude({"type": "web_fetch_20250910", "name": "web_fetch"})
    assert "web_fetch_20250910" not in server["server_tool_prompt_held_out"]
    assert fetch.estimate.unpublished == (
        "the web_fetch_20250910 server-tool prompt (fitted on one recording)",
    )
    # a version nothing was fitted on is counted as 0 and named
    newer = claude({"type": "web_search_20991231", "name": "web_search"})
    assert newer.estimate.unpublished == (
        "the web_search_20991231 server-tool prompt (counted as 0)",
    )
    assert "not covered: the web_search_20991231" in newer.estimate.describe(newer.total_tokens)


def test_structured_output_prompt_carries_the_schema() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "Extract"}],
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }
    (prompt,) = model_context(body, provider="anthropic").of_kind("hidden")
    fit = calibration()["anthropic"]["structured_output"]
    schema_tokens = count_tokens(dump(schema), "anthropic", "claude-sonnet-4-5")
    assert prompt.tokens == math.ceil(fit["schema_copies"] * schema_tokens) + fit["instruction"]
    properties: dict[str, Any] = {"name": {"type": "string"}, "age": {"type": "integer"}}
    bigger = {**schema, "properties": properties}
    body["output_config"] = {"format": {"type": "json_schema", "schema": bigger}}
    assert model_context(body, provider="anthropic").of_kind("hidden")[0].tokens > prompt.tokens


def test_server_loop_compares_the_first_call() -> None:
    usage = {"input_tokens": 3000, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    itemised = {
        "content": [{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}],
        "usage": {
            **usage,
            "iterations": [
                {"type": "message", "input_tokens": 600},
                {"type": "message", "input_tokens": 2400},
            ],
        },
    }
    calls = model_calls(itemised)
    assert (calls.calls, calls.first_input, calls.server_added) == (2, 600, 2400)
    summed = model_calls({"content": itemised["content"], "usage": usage})
    assert summed.calls == 2 and summed.first_input is None and summed.server_added is None
    single = model_calls({"content": [{"type": "text", "text": "hi"}], "usage": usage})
    assert (single.calls, single.first_input) == (1, 3000)
    stream = "\n".join(
        [
            'data: {"type":"message_start","message":{"usage":{"input_tokens":12}}}',
            'data: {"type":"content_block_start","index":0,'
            '"content_block":{"type":"server_tool_use"}}',
        ]
    )
    calls = model_calls(stream)
    assert (calls.calls, calls.first_input, calls.server_added) == (2, 12, None)
    delta = 'data: {"type":"message_delta","usage":{"input_tokens":40,"output_tokens":5}}'
    calls = model_calls(stream + "\n" + delta)  # the delta's usage is cumulative
    assert (calls.first_input, calls.total_input, calls.server_added) == (12, 40, 28)


def _thinking_run(budget: int) -> dict[str, Any]:
    system = [{"type": "text", "text": "Plan carefully before answering. " * 400}]
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": budget},
        "system": [{**system[0], "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Outline the migration. " * 200,
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        ],
    }


def test_changed_thinking_settings_keep_system_cached_not_messages() -> None:
    """Anthropic's prompt-caching docs ('What invalidates the cache'): a change of thinking
    parameters invalidates cached messages; tools and system stay cached."""
    from dtl_notebook.cache import analyze

    same = analyze([_thinking_run(2048), _thinking_run(2048)], provider="anthropic")[1]
    changed = analyze([_thinking_run(2048), _thinking_run(4096)], provider="anthropic")[1]
    ctx = changed.context
    (settings,) = [s for s in ctx if s.source == "thinking"]
    system_end = max(i for i, s in enumerate(ctx.segments) if s.kind == "system")
    fitted = calibration()["anthropic"]["thinking_instruction"]
    assert settings.tokens == fitted > 0 and ctx.segments.index(settings) > system_end
    system_tokens = sum(s.tokens for s in ctx.segments[: system_end + 1])
    assert same.cached_tokens == same.total_tokens
    assert changed.cached_tokens == system_tokens < changed.total_tokens


def test_a_file_by_id_is_unknown_until_the_provider_answers() -> None:
    """A PDF given by file id: its pages are not in the request. Not its JSON's tokens, not a
    guess: 0 counted and the rule that will apply named (OpenAI's 'File inputs')."""
    by_id = {"type": "input_file", "file_id": "file-abc123"}
    ask = {"type": "input_text", "text": "Summarise this."}
    body = {"model": "gpt-4.1", "input": [{"role": "user", "content": [ask, by_id]}]}
    alone = {"model": "gpt-4.1", "input": [{"role": "user", "content": [ask]}]}
    ctx = model_context(body, provider="openai-responses")
    assert ctx.total_tokens == model_context(alone, provider="openai-responses").total_tokens
    said = [n for n in ctx.estimate.unpublished if "unknown until the provider answers" in n]
    assert said and "an image of each page" in said[0]
    chat = {"type": "file", "file": {"file_id": "file-abc123"}}
    chat_body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": [chat]}]}
    notes = model_context(chat_body, provider="openai-chat").estimate.unpublished
    assert any("a file given by id or URL" in n for n in notes)
