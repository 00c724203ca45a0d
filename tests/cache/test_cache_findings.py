"""Every finding code: a request or conversation that triggers it, a near miss that must not."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from dtl_notebook.__main__ import main
from dtl_notebook.cache import analyze
from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.cache.codes import CODES
from dtl_notebook.cache.conversation import conversation_findings
from dtl_notebook.cache.lint import lint
from dtl_notebook.testing import CacheRecorder, assert_cache_stable

JSON = dict[str, Any]
EPH = {"type": "ephemeral"}
MODEL = "claude-sonnet-4-6"
SEARCH = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
TEXT = "Answer briefly and cite the file and line of every claim you make. " * 250


def _tool(name: str, **extra: Any) -> JSON:
    return {
        "name": name,
        "description": f"The {name} tool. " * 20,
        "input_schema": {"type": "object"},
        **extra,
    }


def _png(seed: int) -> str:
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (400).to_bytes(4, "big") * 2
    return base64.b64encode(head + bytes([seed]) * 500).decode()


def _turn(t: int) -> list[JSON]:
    call = f"toolu_{t:04d}"
    return [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call, "name": "a_read", "input": {"n": t}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call, "content": f"result {t} " * 60}
            ],
        },
    ]


def anthropic(turns: int = 3, marking: str = "last", **top: Any) -> JSON:
    messages: list[JSON] = [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": _png(1)},
                },
                {"type": "text", "text": "Look at this."},
            ],
        }
    ]
    for t in range(turns):
        messages += _turn(t)
    body: JSON = {
        "model": MODEL,
        "max_tokens": 100,
        "tools": [_tool("a_read"), _tool("b_write", cache_control=EPH)],
        "system": [{"type": "text", "text": TEXT, "cache_control": EPH}],
        "messages": messages,
        **top,
    }
    if marking == "last":
        body["messages"][-1]["content"][-1]["cache_control"] = EPH
    return body


def grow(body: JSON, t: int = 50, marking: str = "last") -> JSON:
    out = copy.deepcopy(body)
    for m in out["messages"]:
        for b in m["content"]:
            b.pop("cache_control", None)
    out["messages"] += _turn(t)
    if marking == "last":
        out["messages"][-1]["content"][-1]["cache_control"] = EPH
    return out


def cause(requests: list[JSON], provider: str = "anthropic", **kw: Any) -> list[str | None]:
    report = analyze(requests, provider=provider, **kw)
    return [str(e.cache_break.cause) if e.cache_break else None for e in report.entries[1:]]


# -- break causes: (change applied to the second request, expected code) -----------------
def _set(key: str, value: Any) -> Callable[[JSON], None]:
    return lambda b: b.update({key: value})


ANTHROPIC_CHANGES: list[tuple[str, Callable[[JSON], None]]] = [
    ("thinking_changed", _set("thinking", {"type": "enabled", "budget_tokens": 2048})),
    ("effort_changed", _set("output_config", {"effort": "low"})),
    ("tool_choice_changed", _set("tool_choice", {"type": "any"})),
    (
        "parallel_tool_use_changed",
        _set("tool_choice", {"type": "auto", "disable_parallel_tool_use": True}),
    ),
    ("media_changed", lambda b: b["messages"][0]["content"][0]["source"].update(data=_png(2))),
    ("history_rewritten", lambda b: b["messages"][2]["content"][0].update(content="edited")),
    ("system_changed", lambda b: b["system"][0].update(text=TEXT + " More.")),
    ("tool_order_changed", lambda b: b["tools"].reverse()),
    ("model_changed", _set("model", "claude-opus-4-8")),
]


@pytest.mark.parametrize(
    ("code", "change"), ANTHROPIC_CHANGES, ids=[c for c, _ in ANTHROPIC_CHANGES]
)
def test_a_documented_change_is_named_once(code: str, change: Callable[[JSON], None]) -> None:
    first = anthropic()
    second = grow(first)
    change(second)
    third = grow(second, 51)
    assert cause([first, second, third]) == [code, None]
    assert code in CODES and CODES[code].fix


@pytest.mark.parametrize(
    ("code", "change"),
    [c for c in ANTHROPIC_CHANGES if CODES[c[0]].invalidates == ("messages",)],
)
def test_near_miss_a_messages_only_change_leaves_a_system_only_client_intact(
    code: str, change: Callable[[JSON], None]
) -> None:
    first = anthropic(marking="system")
    second = grow(first, marking="system")
    change(second)
    report = analyze([first, second], provider="anthropic")
    assert report[1].cache_break is None  # tools and system were all it wrote: they survive
    assert report[1].cached_tokens >= report[0].written_tokens > 0


def test_a_setting_change_keeps_tools_and_system_cached() -> None:
    first = anthropic()
    second = grow(first)
    second["tool_choice"] = {"type": "any"}
    report = analyze([first, second], provider="anthropic")
    brk = report[1].cache_break
    assert brk is not None and brk.cause == BreakCause.TOOL_CHOICE_CHANGED
    assert 0 < report[1].cached_tokens < report[0].total_tokens  # tools and system read
    assert brk.where == "tool_choice" and "tool_set_changed" not in str(brk.cause)


def test_system_only_marking_gives_no_false_breaks_and_one_client_finding() -> None:
    requests = [anthropic(marking="system")]
    for t in range(3):
        requests.append(grow(requests[-1], 60 + t, marking="system"))
    report = analyze(requests, provider="anthropic")
    assert not report.breaks
    found = conversation_findings(report, requests)
    assert [f.code for f in found.findings].count("messages_never_cached") == 1


def test_expired_breakpoint_moved_back_and_lookback() -> None:
    first, second = anthropic(), None
    second = grow(first)
    assert cause([first, second], times=[0.0, 400.0]) == ["expired"]
    assert cause([first, second], times=[0.0, 200.0]) == [None]
    back = copy.deepcopy(second)
    back["messages"][-1]["content"][-1].pop("cache_control")
    back["messages"][2]["content"][-1]["cache_control"] = EPH
    again = copy.deepcopy(back)
    assert cause([first, back, again]) == ["breakpoint_moved_back", None]
    long = copy.deepcopy(first)
    for t in range(12):
        long = grow(long, 100 + t, marking="none")
    long["messages"][-1]["content"][-1]["cache_control"] = EPH
    assert cause([first, long]) == ["breakpoint_out_of_lookback"]
    short = grow(first, 7)
    assert cause([first, short]) == [None]
    bare = copy.deepcopy(second)
    bare["messages"][-1]["content"][-1].pop("cache_control")
    bare["tools"][-1].pop("cache_control")
    bare["system"][0].pop("cache_control")
    assert cause([first, bare, grow(bare, 9, marking="none")]) == ["no_breakpoint", None]


def _responses(**top: Any) -> JSON:
    return {
        "model": "gpt-5.4",
        "instructions": TEXT,
        "tools": [
            {"type": "function", "name": "a_read", "parameters": {"type": "object"}, "strict": None}
        ],
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": f"data:image/png;base64,{_png(1)}"},
                    {"type": "input_text", "text": "hi"},
                ],
            },
        ],
        **top,
    }


@pytest.mark.parametrize(
    ("code", "top"),
    [
        ("reasoning_effort_changed", {"reasoning": {"effort": "high"}}),
        ("parallel_tool_calls_changed", {"parallel_tool_calls": False}),
        (
            "text_format_changed",
            {"text": {"format": {"type": "json_schema", "name": "x", "schema": {}}}},
        ),
        ("verbosity_changed", {"text": {"verbosity": "low"}}),
        ("cache_key_changed", {"prompt_cache_key": "tenant-2"}),
    ],
)
def test_openai_settings_are_their_own_causes(code: str, top: JSON) -> None:
    first = _responses()
    second = _responses(**top)
    second["input"].append({"role": "user", "content": "more"})
    assert cause([first, second], "openai-responses") == [code]
    same = _responses(**top)
    same["input"].append({"role": "user", "content": "more"})
    assert cause([second, same], "openai-responses") == [None]  # near miss: unchanged


def test_a_changed_image_is_seen_in_openai_input() -> None:
    first, second = _responses(), _responses()
    second["input"][0]["content"][0]["image_url"] = f"data:image/png;base64,{_png(3)}"
    assert cause([first, second], "openai-responses") == ["media_changed"]


# -- lint: code -> (request that triggers it, near miss) ---------------------------------
def _deferred_marked(b: JSON) -> None:
    b["tools"].append(_tool("c_deferred", defer_loading=True, cache_control=EPH))


def _many_marks(b: JSON) -> None:
    for m in b["messages"][1:4]:
        m["content"][-1]["cache_control"] = EPH


def _trailing_system(b: JSON) -> None:
    b["messages"][-1]["content"][-1].pop("cache_control")
    b["messages"].append(
        {"role": "system", "content": [{"type": "text", "text": "Note.", "cache_control": EPH}]}
    )


def _long(b: JSON, turns: int) -> None:
    b["messages"][-1]["content"][-1].pop("cache_control")
    for t in range(turns):
        b["messages"] += _turn(200 + t)
    b["messages"][-1]["content"][-1]["cache_control"] = EPH


LINTS: dict[str, tuple[Callable[[JSON], None], Callable[[JSON], None]]] = {
    "no_breakpoint": (
        lambda b: [
            b["tools"][-1].pop("cache_control"),
            b["system"][0].pop("cache_control"),
            b["messages"][-1]["content"][-1].pop("cache_control"),
        ],
        lambda b: None,
    ),
    "too_many_breakpoints": (
        _many_marks,
        lambda b: b["messages"][1]["content"][-1].update(cache_control=EPH),
    ),
    "below_minimum": (
        lambda b: [
            b["system"][0].update(text="Short."),
            b.update(messages=b["messages"][:1]),
            b["tools"].__setitem__(slice(None), [_tool("a_read", cache_control=EPH)]),
        ],
        lambda b: None,
    ),
    "volatile_prefix": (
        lambda b: b["system"][0].update(text=TEXT + " Today is Friday."),
        lambda b: b["messages"][-1]["content"].append({"type": "text", "text": "Today is Friday."}),
    ),
    "lookback_exceeded": (lambda b: _long(b, 11), lambda b: _long(b, 5)),
    "messages_never_cached": (
        lambda b: b["messages"][-1]["content"][-1].pop("cache_control"),
        lambda b: None,
    ),
    "cache_control_on_deferred": (
        _deferred_marked,
        lambda b: b["tools"].append(_tool("c", defer_loading=True)),
    ),
    "deferred_without_placeholder": (
        lambda b: b["tools"].insert(0, SEARCH),
        lambda b: b["tools"].extend(
            [SEARCH, _tool("deferred_tool_placeholder", defer_loading=True)]
        ),
    ),
    "deferred_tool_snippet": (
        lambda b: [
            b["tools"].append(_tool("c_deferred", defer_loading=True)),
            b["system"][0].update(text=TEXT + "\n<tools>\n- c_deferred: reads\n</tools>"),
        ],
        lambda b: [
            b["tools"].append(_tool("c_deferred", defer_loading=True)),
            b["system"][0].update(text=TEXT + "\n<tools>\n- a_read: reads\n</tools>"),
        ],
    ),
    "breakpoint_on_trailing_system": (
        _trailing_system,
        lambda b: b["messages"].append(
            {"role": "system", "content": [{"type": "text", "text": "Note."}]}
        ),
    ),
    "catalog_in_prefix": (
        lambda b: b["system"][0].update(text=TEXT + "\nDeferred tools (search before use):\n- c"),
        lambda b: b["messages"].append(
            {"role": "system", "content": "Deferred tools (search before use):\n- c"}
        ),
    ),
}


@pytest.mark.parametrize("code", sorted(LINTS))
def test_each_lint_code_fires_and_its_near_miss_does_not(code: str) -> None:
    trigger, near = LINTS[code]
    hit, miss = anthropic(), anthropic()
    trigger(hit)
    near(miss)
    assert code in {f.code for f in lint(hit, "anthropic")}
    assert code not in {f.code for f in lint(miss, "anthropic")}


def test_a_long_prefix_before_the_only_breakpoint_is_no_lookback_finding() -> None:
    body = anthropic()
    body["tools"][-1].pop("cache_control", None)
    body["system"][0].pop("cache_control", None)
    _long(body, 15)  # 30 more blocks, one breakpoint at the very end: nothing written before it
    assert "lookback_exceeded" not in {f.code for f in lint(body, "anthropic")}


def test_every_code_is_documented_and_exercised() -> None:
    exercised = (
        set(LINTS)
        | {c for c, _ in ANTHROPIC_CHANGES}
        | {
            "reasoning_effort_changed",
            "parallel_tool_calls_changed",
            "text_format_changed",
            "verbosity_changed",
            "cache_key_changed",
            "expired",
            "breakpoint_moved_back",
            "breakpoint_out_of_lookback",
            "no_breakpoint",
            "messages_never_cached",
            "prefix_intact_not_read",
            "write_never_read",
            "ttl_gap",
            # covered by the existing tests of the analyzer, and by test_cache_causes
            "tool_set_changed",
            "thinking_budget_changed",
            "reasoning_dropped",
            "deferred_prompt_added",
            "deferred_prompt_removed",
            # covered by test_cache_health and test_agent_cache_health
            "expires_before_next",
            "cache_unreported",
            # covered by test_cache_threads
            "thread_not_found",
            "thread_replaced",
            # covered by test_shared_cache
            "shared_prefix_lost",
            # covered by test_tool_order (a conversation's finding, not one body's)
            "tool_order_unstable",
        }
    )
    assert set(CODES) <= exercised
    assert {str(c) for c in BreakCause} <= set(CODES)
    for entry in CODES.values():
        assert entry.severity in ("error", "warning", "info") and entry.fix and entry.message


# -- usage findings ------------------------------------------------------------------------
def _usage(read: int, written: int) -> JSON:
    return {
        "usage": {
            "input_tokens": 10,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }
    }


def test_usage_findings() -> None:
    first = anthropic()
    second = grow(first)
    third = grow(second, 51)
    requests = [first, second, third]
    quiet = analyze(
        requests, provider="anthropic", responses=[_usage(0, 900), _usage(0, 900), _usage(0, 10)]
    )
    codes = [f.code for f in conversation_findings(quiet, requests).findings]
    assert "prefix_intact_not_read" in codes and "write_never_read" in codes
    read = analyze(
        requests, provider="anthropic", responses=[_usage(0, 900), _usage(900, 50), _usage(950, 9)]
    )
    found = conversation_findings(read, requests)
    assert not {"prefix_intact_not_read", "write_never_read"} & found.codes()
    assert 0 < found.hit_ratio < 1 and found.reported
    timed = analyze(requests, provider="anthropic", times=[0.0, 10.0, 900.0])
    gaps = conversation_findings(timed, requests, times=[0.0, 10.0, 900.0]).findings
    assert [f.index for f in gaps if f.code == "ttl_gap"] == [2]


# -- CLI and the pytest helper -------------------------------------------------------------
def _capture(tmp_path: Path, requests: list[JSON]) -> Path:
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps({"request": r}) + "\n" for r in requests))
    return path


def _exit(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(argv)
    return int(done.value.code or 0)


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = anthropic()
    second = grow(first)
    second["tool_choice"] = {"type": "any"}
    broken = _capture(tmp_path, [first, second])
    assert _exit(["audit", str(broken), "--fail-on", "tool_choice_changed"]) == 1
    assert _exit(["audit", str(broken), "--fail-on", "system_changed"]) == 0
    capsys.readouterr()
    assert _exit(["audit", str(broken), "--fail-on", "error", "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert any(f["code"] == "tool_choice_changed" for f in rows[0]["findings"])
    assert _exit(["audit", str(broken), "--fail-on", "no_such_code"]) == 2
    assert _exit(["audit", str(tmp_path / "missing.jsonl")]) == 2
    body = tmp_path / "request.json"
    body.write_text(json.dumps(first))
    assert _exit(["lint", str(body), "--fail-on", "too_many_breakpoints"]) == 0
    capsys.readouterr()
    assert _exit(["codes", "--json"]) == 0
    assert {r["code"] for r in json.loads(capsys.readouterr().out)} == set(CODES)


def test_assert_cache_stable_fails_on_a_real_break() -> None:
    first = anthropic()
    second = grow(first)
    assert_cache_stable([first, second])
    second["system"][0]["text"] = TEXT + " Edited."
    with pytest.raises(AssertionError, match="system_changed"):
        assert_cache_stable([first, second])


def test_the_recorder_records_what_an_sdk_client_sends() -> None:
    import anthropic as sdk

    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    recorder = CacheRecorder()
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=reply))
    client = sdk.Anthropic(api_key="test", http_client=recorder.http_client(transport))
    first = anthropic()
    second = grow(first)
    second["tools"].reverse()
    for body in (first, second):
        client.messages.create(**body)
    assert [p for p, _ in recorder.requests] == ["anthropic", "anthropic"]
    with pytest.raises(AssertionError, match="tool_order_changed"):
        assert_cache_stable(recorder)


def test_fail_on_takes_a_severity_as_a_threshold_and_a_text() -> None:
    first = anthropic()
    second = grow(first)
    second["system"][0]["text"] = TEXT + " Edited."  # system_changed: an error
    for fail_on in ("error", "warning", "info", "system_changed", ["warning"]):
        with pytest.raises(AssertionError, match="system_changed"):
            assert_cache_stable([first, second], fail_on=fail_on)
    assert assert_cache_stable([first, second], fail_on="tool_order_changed")
