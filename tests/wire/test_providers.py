"""The provider table (wire/providers.py): every row has every field and every layer's part,
dispatch sites read only the table, and a new row is dispatched to without another edit."""

from __future__ import annotations

import ast
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, get_args

import pytest

import dtl_notebook
import dtl_notebook.cache.prefix_rules
import dtl_notebook.context.model
import dtl_notebook.live.emulator  # each layer registers its parts on import
from dtl_notebook.cache.reported import Usage, reported_usage
from dtl_notebook.context.request_kinds import request_kind
from dtl_notebook.context.server_loop import ModelCalls, model_calls
from dtl_notebook.live.emulator.stream import _STREAMS
from dtl_notebook.live.transport import live_transport
from dtl_notebook.notebook.copying import curl_command
from dtl_notebook.wire import PARSE, parse_response
from dtl_notebook.wire.modes import LOAD_MODES, SEARCH_MODES, check_modes
from dtl_notebook.wire.providers import (
    ANTHROPIC,
    KIMI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    PROVIDERS,
    SPECS,
    Provider,
    UnknownProviderError,
    all_parts,
    check_provider,
    provider_at,
    spec,
)
from dtl_notebook.wire.schema import ROOTS

PACKAGE = Path(dtl_notebook.__file__).parent
# modules that dispatch on the provider: they read the row or a part, never name a provider
# (a module that owns a part names each provider once, where it registers its entry)
DISPATCH_SITES = (
    "wire/__init__.py",
    "wire/modes.py",
    "wire/stream.py",
    "wire/profiles.py",
    "context/model.py",
    "cache/prefix_rules.py",
    "live/transport.py",
    "live/warmup.py",
    "live/emulator/stream.py",
    "demo/sessions.py",
    "wire/native_changes.py",
    "wire/stream_accumulators.py",
    "context/harmony.py",
    "cache/capture.py",
    "cache/capture_request.py",
    "cache/carry.py",
    "cache/diagnostics.py",
    "cache/lint.py",
    "cache/reported.py",
    "cache/retention.py",
    "cache/settings.py",
    "live/keep_warmer.py",
    "live/threads.py",
    "proxy/diagnostics.py",
    "context/request_kinds.py",
    "context/calibration.py",
    "context/server_loop.py",
    "context/tokens.py",
    "context/media.py",
    "context/content_rules.py",
    "context/render_anthropic.py",
    "context/anthropic_media.py",
    "live/emulator/request_view.py",
    "live/emulator/cli.py",
    "wire/lenient.py",
    "wire/validate.py",
)
# modules that dispatch on the upstream family (its origin, auth and error shape), whose names
# are written there as the proxy's settings and records spell them ("anthropic", "openai")
FAMILY_SITES = (
    "proxy/config.py",
    "proxy/app.py",
    "notebook/copying.py",
    "live/emulator/endpoint.py",
)
FAMILIES = frozenset(row.family for row in SPECS.values())


def test_the_union_and_the_table_name_the_same_providers() -> None:
    assert get_args(Provider) == PROVIDERS == tuple(SPECS)
    assert (ANTHROPIC, OPENAI_RESPONSES, OPENAI_CHAT, KIMI) == PROVIDERS  # the named constants


@pytest.mark.parametrize("name", PROVIDERS)
def test_every_row_has_every_field(name: str) -> None:
    row = spec(name)
    for field in fields(row):
        value = getattr(row, field.name)
        empty = field.name in (
            "extra_paths",
            "hosts",
            "native_searches",
            "load_modes",
            "body_signs",
        )
        optional = empty or "None" in str(field.type)  # a column that may be null
        assert optional or value, f"{name}: {field.name} is empty"
    assert row.family in ("anthropic", "openai")
    assert row.key_variable.isupper() and row.key_variable.endswith("_API_KEY")
    assert row.endpoint.startswith("/") and row.sdk_path.startswith("/")
    assert row.endpoint_url.startswith("https://") and row.endpoint_url.endswith(row.endpoint)
    assert set(row.request_roots) <= set(ROOTS)
    assert row.stream_format in _STREAMS
    assert set(row.native_searches) <= set(SEARCH_MODES) - {"client"}
    assert set(row.load_modes) <= set(LOAD_MODES)
    for load_mode in row.load_modes:
        check_modes(name, None, load_mode)
    assert callable(row.client_type()) and hasattr(row.response_type(), "model_validate")


def test_every_part_has_every_provider() -> None:
    parts = all_parts()
    assert {"build", "parse", "semantic check", "profile flags", "renderer", "cache rule"} <= set(
        parts
    )
    assert "reply" in parts
    for part in parts.values():
        assert tuple(part) == PROVIDERS, f"{part.name} (registered in {part.owner})"


def _named_providers(path: Path) -> list[tuple[int, str]]:
    """Provider names written in a module outside a `Part.register(name, ...)` call."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    registered = {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "register"
        and node.args
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in PROVIDERS and id(node) not in registered
    ]


@pytest.mark.parametrize("module", DISPATCH_SITES + FAMILY_SITES)
def test_dispatch_sites_read_only_the_table(module: str) -> None:
    allowed = FAMILIES if module in FAMILY_SITES else frozenset()
    named = [
        (line, name) for line, name in _named_providers(PACKAGE / module) if name not in allowed
    ]
    assert named == []


def test_an_unknown_provider_is_named_once_with_the_near_ones() -> None:
    with pytest.raises(UnknownProviderError) as info:
        check_provider("openai")
    assert str(info.value) == (
        "unknown provider 'openai'; choose one of anthropic, openai-responses, openai-chat, "
        "kimi; did you mean 'openai-responses' or 'openai-chat'?"
    )
    with pytest.raises(UnknownProviderError, match="did you mean 'anthropic'"):
        spec("antropic")
    with pytest.raises(UnknownProviderError, match=r"unknown provider 'gemini'; choose one of"):
        parse_response({}, "gemini")
    with pytest.raises(UnknownProviderError, match="unknown provider 5"):
        check_provider(5)


def test_a_registered_row_without_a_part_names_where_to_add_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(SPECS, "mirror", replace(SPECS["openai-chat"], name="mirror"))  # type: ignore[arg-type]
    with pytest.raises(LookupError, match="'mirror' has no parse part: register one in dtl_"):
        parse_response({"choices": []}, "mirror")


def test_a_new_row_is_dispatched_to_without_another_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """An OpenAI-compatible provider at its own host: one row (its behaviour columns copied
    from the plain Chat row) and its parts, and the URL reading, the transport, the curl line,
    the reply parser and the usage reading all find it."""
    row = replace(
        SPECS["openai-chat"],
        name="compatible",  # type: ignore[arg-type]
        base_url="https://api.compatible.example/v1",
        hosts=("compatible",),
        key_variable="COMPATIBLE_API_KEY",
        default_model="compatible-1",
    )
    monkeypatch.setitem(SPECS, "compatible", row)
    monkeypatch.setitem(PARSE._entries, "compatible", PARSE["openai-chat"])
    assert check_provider("compatible") == "compatible"
    assert provider_at("https://api.compatible.example/v1/chat/completions") == "compatible"
    assert provider_at("https://api.openai.com/v1/chat/completions") == "openai-chat"
    monkeypatch.setenv("COMPATIBLE_API_KEY", "sk-test-key")
    transport = live_transport("compatible")
    assert str(transport.client.base_url) == "https://api.compatible.example/v1/"
    record = SimpleNamespace(provider="compatible", payload={"model": "compatible-1"})
    curl = curl_command(record)  # type: ignore[arg-type]  # it reads these two fields
    assert "https://api.compatible.example/v1/chat/completions" in curl
    assert "$COMPATIBLE_API_KEY" in curl and "sk-test-key" not in curl
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "compatible-1",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
        ],
    }
    assert parse_response(body, "compatible").message.text == "hi"
    usage = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 40}}
    assert reported_usage({"usage": usage}, "compatible") == Usage(40, 0, 60, 100)
    assert model_calls({"usage": usage}, "compatible") == ModelCalls(1, 100, 100)
    assert request_kind("compatible", {"model": "compatible-1", "messages": []}) == "openai_tools"
