"""Offline token counting: known counts, hash checks, no network, provider labels."""

from __future__ import annotations

import hashlib
import importlib
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dtl_notebook.context import model_context, offline_encodings
from dtl_notebook.context.calibration import calibration
from dtl_notebook.context.offline_encodings import (
    PINNED_SHA256,
    BpeFileError,
    bpe_dir,
    get_encoding,
    harmony_encodings_dir,
    load_encoding,
)
from dtl_notebook.context.tokens import (
    ANTHROPIC_FACTOR,
    ANTHROPIC_JSON_FACTOR,
    TokenCounter,
    count_tokens,
    encoding_for,
)

# Code run in a fresh interpreter with every socket entry point blocked.
NO_NETWORK_PRELUDE = textwrap.dedent(
    """
    import socket

    def _blocked(*args, **kwargs):
        raise OSError("network access attempted during an offline test")

    socket.socket.connect = _blocked
    socket.socket.connect_ex = _blocked
    socket.create_connection = _blocked
    socket.getaddrinfo = _blocked
    """
)


def run_offline(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "offline_script.py"
    script.write_text(NO_NETWORK_PRELUDE + textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIKTOKEN_", "DATA_GYM_"))}
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )


# ---------------------------------------------------------------------------------------------
# Known counts
# ---------------------------------------------------------------------------------------------


def test_hello_world_is_two_tokens_in_both_encodings() -> None:
    # Token ids as in tiktoken's own tests and docs.
    assert get_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]
    assert get_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    assert count_tokens("hello world", "openai-responses", "gpt-4o") == 2
    assert count_tokens("hello world", "openai-chat", "gpt-4") == 2


def test_cookbook_example_ids_and_round_trip() -> None:
    # OpenAI cookbook "How to count tokens with tiktoken": cl100k_base ids of this string.
    cl100k = get_encoding("cl100k_base")
    assert cl100k.encode_ordinary("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    o200k = get_encoding("o200k_base")
    assert len(o200k.encode_ordinary("tiktoken is great!")) == 6
    text = "Grüße, 世界! def f(x): return x ** 2\n\n\tüñíçødé 🙂"
    for enc in (o200k, cl100k):
        assert enc.decode(enc.encode_ordinary(text)) == text


def test_empty_text_is_zero_tokens_for_every_provider() -> None:
    for provider, model in [
        ("openai-responses", "gpt-5"),
        ("openai-chat", "gpt-3.5-turbo"),
        ("anthropic", "claude-sonnet-4-5"),
        ("kimi", "kimi-k2"),
    ]:
        assert count_tokens("", provider, model) == 0


def test_vocabulary_sizes_and_special_tokens() -> None:
    o200k = get_encoding("o200k_base")
    cl100k = get_encoding("cl100k_base")
    assert (o200k.name, o200k.n_vocab) == ("o200k_base", 200019)
    assert (cl100k.name, cl100k.n_vocab) == ("cl100k_base", 100277)
    assert o200k.eot_token == 199999
    assert cl100k.eot_token == 100257
    assert o200k.special_tokens_set == {"<|endoftext|>", "<|endofprompt|>"}
    assert "<|fim_prefix|>" in cl100k.special_tokens_set


def test_special_token_text_counts_as_ordinary_text() -> None:
    text = "before <|endoftext|> after <|endofprompt|>"
    for provider, model in [
        ("openai-responses", "gpt-4o"),
        ("openai-chat", "gpt-4"),
        ("anthropic", "claude-opus-4"),
        ("kimi", "kimi-k2"),
    ]:
        counter = encoding_for(provider, model)
        ids = counter.encoding.encode_ordinary(text)
        assert counter.encoding.eot_token not in ids
        assert counter.count(text) >= len(ids) > 2
    assert count_tokens("<|endoftext|>", "openai-chat", "gpt-4o") == 7


def test_encodings_are_cached_per_process() -> None:
    assert get_encoding("o200k_base") is get_encoding("o200k_base")
    assert encoding_for("anthropic", "x").encoding is get_encoding("o200k_base")


def test_unknown_encoding_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown encoding 'p50k_base'"):
        get_encoding("p50k_base")


# ---------------------------------------------------------------------------------------------
# Provider and model mapping
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("GPT-4.1-mini", "o200k_base"),
        ("gpt-4.5-preview", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5.1-codex", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("o4-pro", "o200k_base"),
        ("gpt-oss-120b", "o200k_base"),
        ("openai/gpt-oss-20b", "o200k_base"),
        ("ft:gpt-4o-mini:org::abc", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-0125", "cl100k_base"),
    ],
)
@pytest.mark.parametrize("provider", ["openai-responses", "openai-chat"])
def test_known_openai_models_are_exact(provider: str, model: str, name: str) -> None:
    counter = encoding_for(provider, model)
    assert counter.name == name
    assert counter.exact is True
    assert counter.factor == 1.0
    assert counter.method == f"{name} (tiktoken, offline)"
    assert counter.encoding.name == name


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("my-finetune", "is not a known OpenAI model"),
        ("llama-3.1-70b", "is not a known OpenAI model"),
        ("davinci", "uses r50k_base, which is not bundled offline"),
    ],
)
def test_unknown_openai_model_is_a_labelled_guess(model: str, reason: str) -> None:
    counter = encoding_for("openai-chat", model)
    assert counter.name == "o200k_base"
    assert counter.exact is False
    assert counter.method.startswith("guess: o200k_base")
    assert repr(model) in counter.method
    assert reason in counter.method
    assert counter.count("hello world") == 2


def test_claude_is_an_estimate_scaled_and_rounded_to_nearest() -> None:
    counter = encoding_for("anthropic", "claude-sonnet-4-5")
    assert counter.exact is False
    # The factor is the fitted one shipped in the calibration data, not a constant in code.
    data = calibration()["anthropic"]
    factor, json_factor = data["factor"], data["json_factor"]
    assert (counter.factor, counter.json_factor) == (ANTHROPIC_FACTOR, ANTHROPIC_JSON_FACTOR)
    assert (factor, json_factor) == (ANTHROPIC_FACTOR, ANTHROPIC_JSON_FACTOR)
    assert 1 <= factor < json_factor < 1.5  # JSON splits more finely in Claude's vocabulary
    assert counter.method.startswith("estimate:")
    assert "no public Claude tokenizer" in counter.method
    assert f"{factor:g} (prose)" in counter.method and f"{json_factor:g} (JSON)" in counter.method
    prose = "The quick brown fox jumps over the lazy dog. " * 100
    raw = len(get_encoding("o200k_base").encode_ordinary(prose))
    assert counter.count(prose) == (raw * round(100 * factor) + 50) // 100
    schema = '{"type": "object", "properties": {"city": {"type": "string"}}}' * 20
    raw = len(get_encoding("o200k_base").encode_ordinary(schema))
    assert counter.count(schema) == (raw * round(100 * json_factor) + 50) // 100 > raw


def test_a_short_claude_prompt_is_not_rounded_up_per_segment() -> None:
    """pydantic/pydantic-ai test_anthropic_count_tokens_with_native_tools (messages/count_tokens,
    claude-sonnet-4-5): 'What is 2 + 2?' alone counted 16. Eight o200k tokens scaled by 1.02
    are 8, not 9: rounding each segment up added a token per segment to every short prompt."""
    counter = encoding_for("anthropic", "claude-sonnet-4-5")
    assert counter.count("What is 2 + 2?") == 8
    body = {
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": "What is 2 + 2?"}],
    }
    assert model_context(body, provider="anthropic").total_tokens == 16


def test_kimi_is_a_labelled_o200k_estimate() -> None:
    counter = encoding_for("kimi", "kimi-k2-0905-preview")
    assert counter.name == "o200k_base"
    assert counter.exact is False
    assert counter.method.startswith("estimate:")
    assert "Kimi" in counter.method
    text = "Kimi counts are estimated with o200k_base."
    assert counter.count(text) == len(get_encoding("o200k_base").encode_ordinary(text))


def test_unknown_provider_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown provider 'gemini'"):
        encoding_for("gemini", "gemini-2.5-pro")


def test_token_counter_is_frozen_and_compares_by_label() -> None:
    counter = encoding_for("openai-chat", "gpt-4o")
    with pytest.raises(AttributeError):
        counter.exact = False  # type: ignore[misc]
    assert counter == TokenCounter("o200k_base", True, "o200k_base (tiktoken, offline)")
    assert counter == encoding_for("openai-responses", "gpt-5")


# ---------------------------------------------------------------------------------------------
# Files and hashes
# ---------------------------------------------------------------------------------------------


def test_pinned_hashes_match_tiktoken_and_the_files(monkeypatch: pytest.MonkeyPatch) -> None:
    openai_public = importlib.import_module("tiktoken_ext.openai_public")
    seen: dict[str, str | None] = {}

    def capture(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen[url.rsplit("/", 1)[-1].removesuffix(".tiktoken")] = expected_hash
        return {b"x": 0}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", capture)
    openai_public.o200k_base()
    openai_public.cl100k_base()
    assert seen == dict(PINNED_SHA256)
    for name, digest in PINNED_SHA256.items():
        data = (bpe_dir() / f"{name}.tiktoken").read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest


def test_corrupt_file_is_rejected_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\nd29ybGQ= 1\n")
    with pytest.raises(BpeFileError) as info:
        load_encoding("o200k_base", tmp_path)
    message = str(info.value)
    assert str(bad) in message
    assert "does not match the pinned" in message
    assert PINNED_SHA256["o200k_base"] in message


def test_truncated_real_file_is_rejected(tmp_path: Path) -> None:
    good = (bpe_dir() / "cl100k_base.tiktoken").read_bytes()
    (tmp_path / "cl100k_base.tiktoken").write_bytes(good[:-100])
    with pytest.raises(BpeFileError, match=r"cl100k_base\.tiktoken: sha256"):
        load_encoding("cl100k_base", tmp_path)


def test_missing_file_is_reported_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(BpeFileError) as info:
        load_encoding("o200k_base", tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'o200k_base.tiktoken'}: cannot read")


def test_bpe_dir_restores_a_corrupt_file_from_the_wheel(tmp_path: Path) -> None:
    target = tmp_path / "cache"
    target.mkdir()
    (target / "o200k_base.tiktoken").write_bytes(b"corrupt")
    assert bpe_dir(target) == target
    assert sorted(p.name for p in target.iterdir()) == [
        "cl100k_base.tiktoken",
        "o200k_base.tiktoken",
    ]
    enc = load_encoding("o200k_base", target)
    assert enc.n_vocab == 200019
    assert enc.encode_ordinary("hello world") == [24912, 2375]


def test_harmony_dir_holds_verified_o200k() -> None:
    folder = harmony_encodings_dir()
    data = (folder / "o200k_base.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == PINNED_SHA256["o200k_base"]
    assert folder == bpe_dir()


def test_tiktoken_constructor_hash_drift_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(offline_encodings.__dict__, "PINNED_SHA256", {"o200k_base": "0" * 64})
    with pytest.raises(RuntimeError, match="update PINNED_SHA256"):
        offline_encodings._tiktoken_spec("o200k_base", {b"a": 0})


# ---------------------------------------------------------------------------------------------
# No network, no side effects
# ---------------------------------------------------------------------------------------------


def test_fresh_load_in_a_subprocess_never_touches_the_network(tmp_path: Path) -> None:
    result = run_offline(
        f"""
        import os, sys
        from pathlib import Path
        from dtl_notebook.context import offline_encodings, tokens

        fresh = Path({str(tmp_path / "fresh")!r})
        offline_encodings.bpe_dir(fresh)  # decompresses from the wheel
        assert offline_encodings.load_encoding("o200k_base", fresh).n_vocab == 200019
        assert offline_encodings.load_encoding("cl100k_base", fresh).n_vocab == 100277
        assert tokens.count_tokens("hello world", "openai-responses", "gpt-5") == 2
        assert tokens.count_tokens("hello world", "openai-chat", "gpt-4") == 2
        assert tokens.count_tokens("hello world", "anthropic", "claude") == 2
        assert not any(k.startswith("TIKTOKEN_") for k in os.environ)
        assert "bpe_openai" not in sys.modules
        print("OK")
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "OK"


def test_the_network_block_itself_works(tmp_path: Path) -> None:
    # Guards the test above: a real tiktoken download attempt must fail under the same prelude.
    result = run_offline(
        f"""
        import os
        os.environ["TIKTOKEN_CACHE_DIR"] = {str(tmp_path / "empty")!r}
        import tiktoken
        try:
            tiktoken.get_encoding("r50k_base")
        except Exception as e:
            print("BLOCKED", type(e).__name__)
        else:
            print("DOWNLOADED")
        """,
        tmp_path,
    )
    assert result.stdout.startswith("BLOCKED"), result.stdout + result.stderr


def test_in_process_load_with_caches_cleared_uses_no_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def blocked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket, "create_connection", blocked)
    monkeypatch.setattr(socket, "getaddrinfo", blocked)
    env_before = dict(os.environ)
    get_encoding.cache_clear()
    offline_encodings._default_bpe_dir.cache_clear()
    try:
        enc = get_encoding("o200k_base")
        assert enc.n_vocab == 200019
        assert count_tokens("hello world", "kimi", "kimi-k2") == 2
    finally:
        get_encoding.cache_clear()
        offline_encodings._default_bpe_dir.cache_clear()
    assert dict(os.environ) == env_before


def test_offline_encoding_equals_tiktoken_registry_encoding(tmp_path: Path) -> None:
    # Seed tiktoken's documented cache (file name = sha1 of the original URL) from our folder,
    # then compare tiktoken.get_encoding with ours, all without network.
    result = run_offline(
        f"""
        import hashlib, os, shutil
        from pathlib import Path
        from dtl_notebook.context import offline_encodings

        cache = Path({str(tmp_path / "tiktoken-cache")!r})
        cache.mkdir()
        for name in offline_encodings.PINNED_SHA256:
            url = f"https://openaipublic.blob.core.windows.net/encodings/{{name}}.tiktoken"
            key = hashlib.sha1(url.encode()).hexdigest()
            shutil.copy(offline_encodings.bpe_dir() / f"{{name}}.tiktoken", cache / key)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
        import tiktoken

        text = "Hello <|endoftext|> world!\\n\\n  def f(x):\\n\\treturn x**2  # 世界 🙂"
        for name in offline_encodings.PINNED_SHA256:
            ours, theirs = offline_encodings.get_encoding(name), tiktoken.get_encoding(name)
            assert ours._pat_str == theirs._pat_str
            assert ours._special_tokens == theirs._special_tokens
            assert ours._mergeable_ranks == theirs._mergeable_ranks
            assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
            assert ours.encode(text, allowed_special="all") == theirs.encode(
                text, allowed_special="all"
            )
        print("SAME")
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "SAME"
