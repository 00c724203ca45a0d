"""The command line and the audit on bad input: exit status 2 with the file and the field
named (1 stays "a --fail-on finding"), `--fail-on` as a threshold, a store with one request
the analysis cannot read audited all the same, and commands that import only what they run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dtl_notebook.__main__ import main
from dtl_notebook.cache import audit_capture
from dtl_notebook.cache.codes import CODES
from dtl_notebook.notebook.records import from_capture
from dtl_notebook.proxy.store import StoredRow, StoreWriter
from tests.cache.test_cache_findings import MODEL, anthropic, grow

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}


def _deep(depth: int) -> bytes:
    return b'{"model": "m", "messages": ' + b"[" * depth + b"]" * depth + b"}"


# (id, command, file bytes, words the error must hold besides the file's name)
CASES = [
    ("lint-empty", "lint", b"", "empty file"),
    ("lint-blank", "lint", b"\n  \n", "empty file"),
    ("lint-two-lines", "lint", b'{"model": "m"}\n{"model": "m"}\n', "line 2"),
    ("lint-binary", "lint", b"\x00\xff\xfe\x01", "not UTF-8"),
    ("lint-100000-deep", "lint", _deep(100_000), "nested too deep"),
    (
        "lint-300-deep",
        "lint",
        b'{"model": "m", "metadata": ' + b'{"a": ' * 300 + b"1" + b"}" * 301,
        "nested more than 200 levels",
    ),
    ("lint-model-number", "lint", b'{"model": 5}', "model: expected a string, got 5"),
    ("lint-no-model", "lint", b'{"messages": []}', "model: missing"),
    ("lint-list", "lint", b"[1, 2]", "expected a JSON object, got list"),
    ("lint-messages-text", "lint", b'{"model": "m", "messages": "hi"}', "messages"),
    ("audit-empty", "audit", b"", "no provider requests"),
    ("audit-binary", "audit", b"\x00\xff\xfe\x01", "not UTF-8"),
    ("audit-100000-deep", "audit", _deep(100_000), "nested too deep"),
    ("audit-model-number", "audit", b'{"model": 5}', "model"),
]


def run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(argv)
    return int(done.value.code or 0)


@pytest.mark.parametrize(
    ("command", "data", "needle"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_exits_2_naming_the_file(
    command: str, data: bytes, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(data)
    assert run([command, str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and "input.json" in error and needle in error, error
    assert "Traceback" not in error


def test_a_file_that_cannot_be_read_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("lint", "audit"):
        assert run([command, str(tmp_path / "missing.json")]) == 2
        assert "missing.json: cannot read: No such file" in capsys.readouterr().err
        assert run([command, str(tmp_path)]) == 2  # a folder
        assert tmp_path.name in capsys.readouterr().err


def test_options_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(GOOD))
    assert run(["lint", str(path), "--provider", "gemini"]) == 2
    assert "--provider: unknown provider 'gemini'" in capsys.readouterr().err
    assert run(["lint", str(path), "--fail-on", "eror"]) == 2
    assert "--fail-on: unknown code or severity 'eror'" in capsys.readouterr().err


def test_fail_on_a_severity_is_a_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = anthropic()
    second = grow(first)
    second["system"][0]["text"] += " Edited."  # system_changed: an error
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps({"request": r}) + "\n" for r in (first, second)))
    assert CODES["system_changed"].severity == "error"
    for threshold, status in (("error", 1), ("warning", 1), ("info", 1), ("", 0)):
        assert run(["audit", str(path), "--fail-on", threshold]) == status, threshold
    warned = tmp_path / "warned.json"
    warned.write_text(json.dumps(GOOD))  # no breakpoint: a warning, and nothing worse
    assert CODES["no_breakpoint"].severity == "warning"
    assert run(["lint", str(warned), "--fail-on", "error"]) == 0
    assert run(["lint", str(warned), "--fail-on", "warning"]) == 1
    assert run(["lint", str(warned), "--fail-on", "no_breakpoint,error"]) == 1  # codes too
    assert run(["lint", str(warned), "--fail-on", "system_changed"]) == 0
    capsys.readouterr()


def _store(path: Path, bodies: list[dict[str, object]]) -> Path:
    writer = StoreWriter(path)
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    for n, body in enumerate(bodies, 1):
        values: dict[str, object] = {
            "number": n,
            "conversation": "c1",
            "provider": "anthropic",
            "upstream": "https://api.anthropic.com",
            "method": "POST",
            "path": "/v1/messages",
            "query": "",
            "request_headers": "{}",
            "request_body": json.dumps(body),
            "status": 200 if "model" in body else 400,
            "response_headers": "{}",
            "response_body": json.dumps(reply),
            "streamed": 0,
            "truncated": 0,
            "failure": None,
            "started": float(n),
            "first_byte": float(n),
            "ended": float(n),
        }
        writer.write(StoredRow(values))
    writer.close()
    return path


def test_a_request_without_a_model_leaves_the_rest_of_a_store_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = anthropic()
    nameless = {k: v for k, v in first.items() if k != "model"}
    store = _store(tmp_path / "store.sqlite", [first, nameless, grow(first)])
    audit = audit_capture(store)
    assert len(audit["anthropic"]) == 2
    (left,) = audit.errors
    assert "exchange 2" in left.source and "model: missing" in str(left.error)
    assert run(["audit", str(store), "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)
    assert len(group["left_out"]) == 1 and "exchange 2" in group["left_out"][0]
    assert run(["audit", str(store)]) == 0
    assert "left out: store.sqlite: exchange 2" in capsys.readouterr().out
    records = from_capture(store)  # what `%dtl inspect` shows
    assert [r.label for r in records] == ["captured", "captured, refused", "captured"]


def test_the_streamed_audit_finds_what_the_whole_audit_finds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dtl_notebook.cache.conversation import conversation_findings
    from dtl_notebook.cache.stream_audit import audit_stream

    first = anthropic()
    second = grow(first)
    third = grow(second)
    third["tools"].reverse()
    store = _store(tmp_path / "store.sqlite", [first, second, third, grow(third)])
    whole = audit_capture(store)
    name = f"{store} [anthropic]"
    expected = conversation_findings(whole["anthropic"], whole.requests("anthropic"), name=name)
    (streamed,) = audit_stream(store)
    assert [f.to_dict() for f in streamed.findings] == [f.to_dict() for f in expected.findings]
    assert streamed.hit_ratio == expected.hit_ratio and streamed.reported == expected.reported
    assert "tool_order_changed" in streamed.codes()


def test_codes_imports_neither_the_sdks_nor_the_schema_validator() -> None:
    script = (
        "import sys, runpy\n"
        "sys.argv = ['dtl_notebook', 'codes', '--json']\n"
        "try:\n    runpy.run_module('dtl_notebook', run_name='__main__')\n"
        "except SystemExit as done:\n    assert not done.code, done.code\n"
        "heavy = ('jsonschema', 'openai', 'anthropic', 'pydantic', 'tiktoken', 'httpx2',\n"
        "         'opentelemetry')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]"


def test_the_public_names_still_import() -> None:
    import dtl_notebook
    import dtl_notebook.cache as cache
    from dtl_notebook import Session, Tool, cache_footprint, free_caches
    from dtl_notebook.cache import analyze

    assert callable(analyze) and analyze is cache.analyze  # the function, not its module
    assert Session.__name__ == "Session" and Tool.__name__ == "Tool"
    assert callable(cache_footprint) and callable(free_caches)
    assert set(dtl_notebook.__all__) <= set(dir(dtl_notebook))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = dtl_notebook.nothing  # type: ignore[attr-defined]
