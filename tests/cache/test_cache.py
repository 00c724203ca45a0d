from __future__ import annotations

import json
from pathlib import Path

import pytest

from dtl_notebook import ToolCall
from dtl_notebook.cache import CaptureError, analyze, audit_jsonl, cache_rule, reported_usage
from dtl_notebook.cache.lint import lint
from dtl_notebook.wire import build_request
from tests.support import scenario

CASES = [
    ("anthropic", "claude-sonnet-4-6"),
    ("anthropic", "claude-opus-4-8"),
    ("openai-responses", "gpt-5.4"),
    ("openai-responses", "gpt-5.6-sol"),
    ("kimi", "kimi-k2"),
]


@pytest.mark.parametrize(("provider", "model"), CASES)
def test_append_only_hits_up_to_previous_end(provider: str, model: str) -> None:
    report = analyze(scenario.append_only_requests(provider, model))
    rule = cache_rule(provider, model)
    assert report[0].cached_tokens == 0
    for prev, entry in zip(report.entries, report.entries[1:], strict=False):
        assert entry.cache_break is None
        assert entry.cached_tokens == rule.floor(prev.total_tokens) == entry.best_cached_tokens
        assert entry.cached_tokens > 0
        assert entry.cached_tokens + entry.written_tokens + entry.uncached_tokens == (
            entry.total_tokens
        )


def test_anthropic_writes_at_breakpoint_and_reports_input_after_it() -> None:
    report = analyze(scenario.append_only_requests("anthropic", "claude-sonnet-4-6"))
    first, second = report[0], report[1]
    assert first.written_tokens == first.total_tokens  # automatic breakpoint on the last block
    assert second.written_tokens == second.total_tokens - first.total_tokens
    assert second.uncached_tokens == 0


def test_chat_loading_a_tool_breaks_at_the_tools() -> None:
    report = analyze(scenario.append_only_requests("openai-chat", "gpt-4.1"))
    brk = report[1].cache_break
    assert brk is not None
    assert brk.cause == "tool_set_changed"
    assert brk.involved == ["+get_weather"]
    assert brk.where == "tools.2"
    assert brk.diff[0].op == "insert" and "get_weather" in (brk.diff[0].new or "")
    assert report[1].cached_tokens == 0  # two tools are below 1,024 tokens
    assert report[2].cache_break is None and report[2].cached_tokens > 0


def _swap_requests(provider: str, model: str, **options: str) -> list:
    s = scenario.session()
    s.user("hello")
    first = build_request(s, provider, model, **options)
    s.assistant("hi")
    s.set_active_tools(["tool_search", "add"])  # a swap, not an append
    s.user("add 2 and 3")
    return [first, build_request(s, provider, model, **options)]


@pytest.mark.parametrize(("provider", "model"), CASES)
def test_non_append_activation_keeps_the_cache_where_the_model_can_say_so(
    provider: str, model: str
) -> None:
    """A swap is a removal (told, the definition kept) plus an addition where it happened: no
    break, except where the new tool can only be declared top-level (a model without tool
    changes in system messages), which breaks after the tools declared before."""
    entry = analyze(_swap_requests(provider, model))[1]
    if model == "claude-sonnet-4-6":
        assert entry.cache_break is not None and entry.cache_break.involved == ["+add"]
        assert entry.cache_break.where == "tools.3"  # after the placeholder
    else:
        assert entry.cache_break is None, entry.cache_break
        assert entry.cached_tokens == entry.best_cached_tokens > 0


@pytest.mark.parametrize(("provider", "model"), CASES)
def test_non_append_activation_rewritten_breaks_at_tools(provider: str, model: str) -> None:
    entry = analyze(_swap_requests(provider, model, tool_changes="rewrite"))[1]
    assert entry.cache_break is not None
    assert entry.cache_break.cause == "tool_set_changed"
    assert set(entry.cache_break.involved) >= {"+add", "-read_file"}
    assert entry.cache_break.where is not None and entry.cache_break.where.startswith("tools.")


def test_tool_order_change() -> None:
    s = scenario.session()
    s.user("hello")
    first = build_request(s, "openai-responses", "gpt-5.4")
    s.assistant("hi")
    s.set_active_tools(["read_file", "tool_search"])
    s.user("again")
    entry = analyze([first, build_request(s, "openai-responses", "gpt-5.4")])[1]
    assert entry.cache_break is not None
    assert entry.cache_break.cause == "tool_order_changed"
    assert entry.cache_break.diff[0].old == "tool_search, read_file"
    assert entry.cache_break.diff[0].new == "read_file, tool_search"
    assert entry.cached_tokens == 0


def _section_change(model: str) -> list:
    s = scenario.session()
    s.user("hello")
    first = build_request(s, "anthropic", model)
    s.assistant("hi")
    s.prompt["rules"] = "Answer in one sentence."
    s.user("again")
    return [first, build_request(s, "anthropic", model)]


def test_section_change_breaks_the_system_prompt_without_mid_conversation_support() -> None:
    entry = analyze(_section_change("claude-sonnet-4-6"))[1]
    assert entry.cache_break is not None
    assert entry.cache_break.cause == "system_changed"
    assert entry.cache_break.involved == ["rules"]
    assert entry.cache_break.where == "system.1"


def test_section_change_keeps_the_prefix_with_mid_conversation_system_messages() -> None:
    report = analyze(_section_change("claude-opus-4-8"))
    assert report[1].cache_break is None
    assert report[1].cached_tokens == report[0].total_tokens
    assert any(s.kind == "system_patch" for s in report[1].context.segments)


def test_model_change() -> None:
    a = scenario.append_only_requests("openai-responses", "gpt-5.4")[0]
    b = scenario.append_only_requests("openai-responses", "gpt-5.5")[0]
    entry = analyze([a, b])[1]
    assert entry.cache_break is not None and entry.cache_break.cause == "model_changed"


def test_history_rewritten() -> None:
    reqs = scenario.append_only_requests("openai-responses", "gpt-5.4")
    edited = json.loads(reqs[1].json())
    edited["input"][0]["content"][0]["text"] = "What is the weather in Rome?"
    entry = analyze([reqs[0].payload, edited], provider="openai-responses")[1]
    assert entry.cache_break is not None
    assert entry.cache_break.cause == "history_rewritten"
    assert entry.cache_break.where == "input.0"
    assert any(op.op == "replace" and "Rome" in (op.new or "") for op in entry.cache_break.diff)


def test_below_minimum() -> None:
    s = scenario.session()
    s.prompt["preamble"] = "Short."
    s.user("hi")
    a = build_request(s, "anthropic", "claude-sonnet-4-6")
    s.assistant("hello")
    s.user("again")
    report = analyze([a, build_request(s, "anthropic", "claude-sonnet-4-6")])
    entry = report[1]
    assert entry.cached_tokens == 0
    # below the minimum is a fact about each request, never a cache break
    assert entry.cache_break is None and not report.breaks
    minimum = cache_rule("anthropic", "claude-sonnet-4-6").min_tokens
    assert entry.below_minimum == f"{entry.total_tokens} < {minimum} tokens"
    assert report[0].below_minimum is not None


def test_no_breakpoint() -> None:
    reqs = scenario.append_only_requests("anthropic", "claude-sonnet-4-6", cache="none")
    entry = analyze(reqs)[1]
    assert entry.cached_tokens == 0 and entry.written_tokens == 0
    # a client that never marks a breakpoint wrote nothing to lose: a finding, not a break
    assert entry.cache_break is None
    assert "no_breakpoint" in {f.code for f in lint(reqs[1].payload, "anthropic")}


def test_expired_entries() -> None:
    reqs = scenario.append_only_requests("anthropic", "claude-sonnet-4-6")
    report = analyze(reqs[:2], times=[0.0, 301.0])
    assert report[1].cached_tokens == 0
    assert report[1].cache_break is not None and report[1].cache_break.cause == "expired"
    assert analyze(reqs[:2], times=[0.0, 299.0])[1].cached_tokens > 0
    one_hour = scenario.append_only_requests("anthropic", "claude-sonnet-4-6", ttl="1h")
    assert analyze(one_hour[:2], times=[0.0, 3000.0])[1].cached_tokens > 0


def _long_turn(provider: str, model: str, **options: object) -> list:
    s = scenario.session()
    s.set_active_tools(["tool_search", "read_file", "add"])
    s.user("read many files")
    first = build_request(s, provider, model, **options)
    calls = [
        ToolCall(id=f"c{i}", name="read_file", arguments={"path": f"f{i}.txt"}) for i in range(12)
    ]
    s.assistant("Reading all of them at once.", tool_calls=calls)
    for call in calls:
        s.execute(call)
    return [first, build_request(s, provider, model, **options)]


def test_intermediate_breakpoint_keeps_the_lookback_hit() -> None:
    reqs = _long_turn("anthropic", "claude-sonnet-4-6")
    blocks = sum(len(m["content"]) for m in reqs[1].payload["messages"])
    assert blocks > 20
    marked = [b for m in reqs[1].payload["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marked) == 1  # the intermediate breakpoint at the previous request's end
    assert analyze(reqs)[1].cached_tokens == analyze(reqs)[0].total_tokens


def test_without_intermediate_breakpoint_the_lookback_misses() -> None:
    reqs = _long_turn("anthropic", "claude-sonnet-4-6")
    stripped = json.loads(reqs[1].json())
    for message in stripped["messages"]:
        for block in message["content"]:
            block.pop("cache_control", None)
    entry = analyze([reqs[0].payload, stripped], provider="anthropic")[1]
    assert entry.cached_tokens == 0
    assert entry.cache_break is not None
    assert entry.cache_break.cause == "breakpoint_out_of_lookback"


def test_reported_usage_from_the_docs() -> None:
    anthropic = {
        "usage": {
            "input_tokens": 2048,
            "cache_read_input_tokens": 1800,
            "cache_creation_input_tokens": 248,
            "output_tokens": 503,
            "cache_creation": {"ephemeral_5m_input_tokens": 148, "ephemeral_1h_input_tokens": 100},
        }
    }
    usage = reported_usage(anthropic, "anthropic")
    assert usage is not None and (usage.cached, usage.written, usage.uncached) == (1800, 248, 2048)
    openai = {
        "usage": {
            "input_tokens": 15000,
            "input_tokens_details": {"cached_tokens": 12000, "cache_write_tokens": 3000},
        }
    }
    usage = reported_usage(openai, "openai-responses")
    assert usage is not None and (usage.cached, usage.written, usage.uncached) == (12000, 3000, 0)
    chat = {"usage": {"prompt_tokens": 2006, "prompt_tokens_details": {"cached_tokens": 1920}}}
    usage = reported_usage(chat, "openai-chat")
    assert usage is not None and (usage.cached, usage.uncached) == (1920, 86)


def test_predicted_vs_reported_disagreement_is_flagged() -> None:
    reqs = scenario.append_only_requests("openai-responses", "gpt-5.4")[:2]
    report = analyze(reqs)
    predicted = report[1].cached_tokens
    agree = {
        "usage": {
            "input_tokens": report[1].total_tokens,
            "input_tokens_details": {"cached_tokens": predicted},
        }
    }
    disagree = {
        "usage": {
            "input_tokens": report[1].total_tokens,
            "input_tokens_details": {"cached_tokens": 0},
        }
    }
    assert analyze(reqs, responses=[None, agree])[1].disagreement is None
    flagged = analyze(reqs, responses=[None, disagree])[1]
    assert flagged.reported is not None and flagged.reported.cached == 0
    assert flagged.disagreement is not None and str(predicted) in flagged.disagreement


def test_jsonl_audit_finds_the_known_break(tmp_path: Path) -> None:
    system = "Stable instructions for the audit. " * 200
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in ("alpha", "beta")
    ]
    first = {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "one"}],
        "tools": tools,
    }
    second = json.loads(json.dumps(first))
    second["messages"] += [
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "two"},
    ]
    third = json.loads(json.dumps(second))
    third["tools"].insert(
        0, {"type": "function", "function": {"name": "gamma", "parameters": {"type": "object"}}}
    )
    third["messages"].append({"role": "user", "content": "three"})
    path = tmp_path / "capture.jsonl"
    lines = [
        json.dumps(first),
        json.dumps(
            {
                "request": second,
                "response": {
                    "usage": {
                        "prompt_tokens": 1500,
                        "prompt_tokens_details": {"cached_tokens": 1280},
                    }
                },
            }
        ),
        "",
        json.dumps(third),
    ]
    path.write_text("\n".join(lines))
    report = audit_jsonl(path)
    assert [e.provider for e in report] == ["openai-chat"] * 3
    assert report[1].cache_break is None and report[1].cached_tokens > 1024
    assert report[1].reported is not None and report[1].reported.cached == 1280
    assert report[2].cache_break is not None
    assert report[2].cache_break.cause == "tool_set_changed"
    assert report[2].cache_break.involved == ["+gamma"]
    assert report[2].cached_tokens == 0


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"model": "gpt-4.1", "messages": []}\n[1, 2]\n')
    with pytest.raises(CaptureError, match=r"bad.jsonl:2: expected a JSON object"):
        audit_jsonl(path)
    path.write_text('{"nope": 1}\n')
    with pytest.raises(CaptureError, match=r":1: neither a request body"):
        audit_jsonl(path)


def test_server_granularity_override() -> None:
    reqs = scenario.append_only_requests("openai-chat", "gpt-4.1")
    vllm = analyze(reqs, cache_granularity=16, min_cacheable_tokens=0)
    assert all(e.cached_tokens % 16 == 0 for e in vllm)
    assert vllm[2].cached_tokens >= vllm[1].total_tokens - 16
