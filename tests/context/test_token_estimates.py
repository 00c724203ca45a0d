"""Token estimates against what providers reported, the hidden additions, and their labels."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook import Session
from dtl_notebook.context import model_context
from dtl_notebook.context.calibration import calibration
from dtl_notebook.context.openai_functions import (
    per_message,
    reply_priming,
)
from dtl_notebook.context.tokens import count_tokens
from dtl_notebook.wire import build_request, parse_response
from tests.support.usage_pairs import (
    covered,
    embedded_pairs,
    openai_calibration_pairs,
    openai_pairs,
    sdk_pairs,
    summary,
)
from tests.support.wire_requests import (
    CRM_DESCRIPTION,
    HOSTED_OUTPUT_DOC,
    RESPONSES_MODEL,
    doc_tools,
    responses_body,
)

TARGET_PCT = 5.0
FIT = calibration()["anthropic"]["fit"]


def test_median_error_on_the_embedded_requests_with_tools_within_target() -> None:
    """The pydantic-ai / vercel excerpts shipped in tests/data/anthropic_usage_pairs.json, alone.
    Their median is within the target; their 90th percentile is not held to the band shown to
    users: that band is measured on every real request (the anth_sdk recordings too, checked
    below), and on these 13 alone the pydantic-ai strict-tool conversation, estimated 4-6 % high,
    is the top decile."""
    pairs = covered(embedded_pairs())
    median, _ = summary(pairs)
    assert len(pairs) >= 13
    assert median <= TARGET_PCT, f"median |error| {median:.1f} % on {len(pairs)} requests"


def test_median_error_on_all_real_requests_the_fit_covers_within_target(
    real_recordings: Path,
) -> None:
    """Every real pair the framing fit covers (tool runs and requests without tools, the
    anth_sdk recordings included): what the shipped constants were fitted on."""
    from benchmarks.calibrate import fit_pairs

    pairs = fit_pairs()
    median, p90 = summary(pairs)
    assert len(pairs) == FIT["requests"]
    assert median <= TARGET_PCT, f"median |error| {median:.1f} % on {len(pairs)} requests"
    assert p90 <= FIT["p90_abs_error_pct"] + 0.05


def test_recorded_sdk_requests_match_shipped_fit(real_recordings: Path) -> None:
    """anthropics/anthropic-sdk-python snapshots (anth_sdk/ of the real recordings)."""
    pairs = covered(sdk_pairs())
    median, _ = summary(pairs)
    assert len(pairs) >= 16 and median <= TARGET_PCT
    # Before the hidden prompt and framing were counted, these were ~80 % low.
    assert all(p.predicted() > 0.9 * p.reported for p in pairs)


def test_request_without_tools_adds_no_tool_prompt(real_recordings: Path) -> None:
    """The one plain request in anth_sdk (a compaction summary, 324 reported)."""
    plain = [p for p in sdk_pairs() if not p.with_tools and p.unmodelled is None]
    assert plain and all(p.error() <= TARGET_PCT / 100 for p in plain)
    ctx = model_context(plain[0].body, provider="anthropic")
    assert not ctx.of_kind("hidden")


def _claude(tools: list[dict[str, object]], **extra: object) -> dict[str, object]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": tools,
        **extra,
    }


WEATHER = {"name": "get_weather", "input_schema": {"type": "object"}}


def test_tool_prompt_follows_published_table_and_tool_choice() -> None:
    auto = model_context(_claude([WEATHER]), provider="anthropic")
    forced = model_context(_claude([WEATHER], tool_choice={"type": "any"}), provider="anthropic")
    framing = calibration()["anthropic"]["tool_prompt_unpublished"]
    hidden = {s.label: s.tokens for s in auto.of_kind("hidden")}
    assert hidden == {"tool-use system prompt": 346, "tool-use framing": framing["auto"]}
    forced_hidden = {s.label: s.tokens for s in forced.of_kind("hidden")}
    assert forced_hidden == {"tool-use system prompt": 313, "tool-use framing": framing["any"]}
    assert all(s.source == "tools" for s in auto.of_kind("hidden"))


def test_unpublished_model_assumes_claude_4_size_and_says_so() -> None:
    ctx = model_context({**_claude([WEATHER]), "model": "claude-sonnet-9"}, provider="anthropic")
    assert ctx.of_kind("hidden")[0].tokens == 346
    assert any("not published" in n and "claude-sonnet-9" in n for n in ctx.notes)


@pytest.mark.parametrize("kind", ["bm25", "regex"])
def test_tool_search_tool_adds_its_prompt(kind: str) -> None:
    search = {"type": f"tool_search_tool_{kind}_20251119", "name": f"tool_search_tool_{kind}"}
    deferred = {**WEATHER, "defer_loading": True}
    ctx = model_context(_claude([search, deferred]), provider="anthropic")
    prompts = [s for s in ctx.of_kind("hidden") if "tool_search" in s.label]
    expected = calibration()["anthropic"]["tool_search_prompt"][f"tool_search_tool_{kind}"]
    assert [(s.tokens, s.source) for s in prompts] == [(expected, "tools.0")]


BANDS = calibration()["bands"]


def test_estimate_is_labelled_with_the_band_of_its_kind() -> None:
    """The band shown is the held-out error measured on real requests of the same kind."""
    ctx = model_context(_claude([WEATHER]), provider="anthropic")
    text = ctx.estimate.describe(ctx.total_tokens)
    tools = BANDS["kinds"]["anthropic_tools"]
    assert text.startswith(f"≈ {ctx.total_tokens:,} tokens (estimate, Claude: o200k")
    assert (
        f"±{tools['p90_abs_error_pct']:g} % on {tools['requests']} real requests of this kind "
        "(Anthropic tool runs), leave-one-conversation-out"
    ) in text
    plain = model_context({**_claude([]), "tools": []}, provider="anthropic")
    assert plain.estimate.kind == "Anthropic requests without tools"
    assert plain.estimate.band_pct == BANDS["kinds"]["anthropic_plain"]["p90_abs_error_pct"]
    responses = model_context(
        {"model": "gpt-5.4", "input": "hi", "tools": [{"type": "web_search"}]},
        provider="openai-responses",
    )
    # no public recording of hosted tools with a known body: no band is claimed
    assert responses.estimate.band_pct is None
    assert "no measured band for OpenAI hosted tools" in (
        responses.estimate.describe(responses.total_tokens)
    )
    assert any("hosted web_search" in n for n in responses.notes)
    search = model_context(
        {"model": "gpt-5.6", "input": "hi", "tools": [{"type": "tool_search"}]},
        provider="openai-responses",
    )
    measured = BANDS["kinds"]["openai_tool_search"]
    assert search.estimate.band_pct == measured["p90_abs_error_pct"]  # a weak band, shown
    hosted = {s.label: s.text for s in search.of_kind("hidden")}["hosted tool-search prompt"]
    assert "measured on gpt-5.6" in hosted


#: The issue's targets, and where a kind does not reach them, the figure it does reach (held
#: out, benchmarks/calibrate.py): a shipped band above either fails here.
TARGETS = {"median": 5.0, "p90": 15.0, "cached_median": 5.0}
REACHED: dict[str, tuple[float, float]] = {
    # gpt-5.4 and gpt-5.4-mini have one recorded conversation each: held out, each is
    # predicted with the other families' tool-search prompts, which differ (the p90)
    "openai_tool_search": (5.0, 36.0),
}


def test_shipped_bands_hold_their_targets() -> None:
    """Held-out median and p90 per kind within the target, or within the figure reached."""
    for kind, band in BANDS["kinds"].items():
        if not band["requests"]:
            assert band["p90_abs_error_pct"] is None, kind  # no recordings: no band
            continue
        median, p90 = REACHED.get(kind, (TARGETS["median"], TARGETS["p90"]))
        assert band["median_abs_error_pct"] <= max(median, TARGETS["median"]), kind
        assert band["p90_abs_error_pct"] <= max(p90, TARGETS["p90"]), kind
    cached = BANDS["cached_followups"]
    assert cached["requests"] >= 1
    assert cached["median_abs_error_pct"] <= TARGETS["cached_median"]


def test_shipped_bands_are_what_the_script_measures(real_recordings: Path) -> None:
    """calibration.json's bands equal what benchmarks/calibrate.py measures now (it writes
    them; nobody edits them by hand)."""
    from benchmarks.calibrate import held_out_cached, held_out_errors
    from benchmarks.calibrate_kinds import bands, measure

    assert bands(measure(held_out_errors(), held_out_cached())) == BANDS


def test_server_tool_first_calls_held_out_within_target() -> None:
    """The embedded server-tool streams (tests/data): each first model call predicted by the
    prompt its type and version was fitted to on the other conversations, within the target;
    the shipped sizes are the fit on all of them."""
    from benchmarks.calibrate_server import server_fit, server_kinds, server_loco, server_pairs

    pairs = server_pairs()
    errors = server_loco(pairs)
    assert len(errors) >= 4 and len({p.body["tools"][0]["type"] for p in pairs}) >= 4
    assert max(abs(e) for e in errors.values()) <= TARGETS["median"]
    shipped = calibration()["anthropic"]
    assert {k: round(v) for k, v in server_fit(pairs).items()} == shipped["server_tool_prompt"]
    scored = {k for p in pairs if p.source in errors for k in server_kinds(p)}
    assert sorted(scored) == shipped["server_tool_prompt_held_out"]
    band = BANDS["kinds"]["anthropic_server_tools"]
    assert band["requests"] == len(errors)


def test_openai_error_on_real_requests_with_tools_is_the_shipped_fit() -> None:
    """pydantic/pydantic-ai cassettes (tests/data/openai_usage_pairs.json): Responses and Chat
    Completions requests with tools, client tool search and gpt-4o included, as shipped; the
    target holds on the kind's held-out figures (leave-one-conversation-out), the issue's
    measure: in sample, the client tool-search follow-ups (a load's cost is not published) and
    the March 2025 gpt-4o conversation lift the median over the requests with tools."""
    pairs = openai_calibration_pairs()
    fit = calibration()["openai"]["fit"]
    median, p90 = summary(pairs)
    assert len(pairs) == fit["requests"]
    assert {p.provider for p in pairs} == {"openai-responses", "openai-chat"}
    assert any(t.get("type") == "tool_search" for p in pairs for t in p.body["tools"])
    assert median <= fit["median_abs_error_pct"] + 0.05, f"median |error| {median:.1f} %"
    assert p90 <= fit["p90_abs_error_pct"] + 0.05
    band = BANDS["kinds"]["openai_tools"]
    assert band["median_abs_error_pct"] <= TARGET_PCT
    assert band["p90_abs_error_pct"] <= 15.0


def test_openai_left_out_recordings_say_why() -> None:
    """Only a gpt-4o Responses request whose reported input is below what its own message and
    tool take is left out, with its reason; every other gpt-4o request is scored."""
    left_out = [p for p in openai_pairs() if p.unmodelled]
    assert left_out and all(p.body["model"] == "gpt-4o" for p in left_out)
    assert all(p.provider == "openai-responses" and "gpt-4o" in str(p.unmodelled) for p in left_out)


def test_openai_function_counts_by_the_cookbook_rule_not_json() -> None:
    """A function's tokens follow the cookbook's rule for the declaration the model sees
    (7 + name:description, 3 for properties, 3 + key:type:description each, an enum's values),
    below its JSON."""
    tool = {
        "type": "function",
        "name": "get_weather",
        "description": "Weather at a place",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    }
    ctx = model_context({"model": "gpt-5.4", "input": "hi", "tools": [tool]}, "openai-responses")
    (schema,) = ctx.of_kind("tool_schema")
    assert '"parameters"' in schema.text  # shown as the request's JSON

    def count(text: str) -> int:
        return count_tokens(text, "openai-responses", "gpt-5.4")

    rule = 7 + count("get_weather:Weather at a place") + 3
    rule += 3 + count("city:string:City name")
    rule += 3 - 3 + 3 + count("c") + 3 + count("f") + count("unit:string:")
    assert schema.tokens == rule
    assert schema.tokens < count(schema.text)


def _search_body(model: str, *items: dict[str, object]) -> dict[str, object]:
    search = {"type": "tool_search", "execution": "client", "parameters": {"type": "object"}}
    return {"model": model, "input": ["hi", *items], "tools": [search]}


def _hidden(body: dict[str, object]) -> dict[str, int]:
    ctx = model_context(body, "openai-responses")
    return {s.label: s.tokens for s in ctx.of_kind("hidden")}


@pytest.mark.parametrize("model", ["gpt-5.4-mini-2026-03-17", "gpt-5.4", "gpt-5.4-2026-03-05"])
def test_client_tool_search_prompt_is_its_model_family_figure(model: str) -> None:
    """The longest listed family prefix decides: gpt-5.4-mini is not gpt-5.4."""
    families = calibration()["openai"]["tool_search"]["client_prompt"]
    family = "gpt-5.4-mini" if "mini" in model else "gpt-5.4"
    body = _search_body(model)
    body["input"] = [{"role": "user", "content": "hi"}]
    assert _hidden(body)["client tool-search prompt"] == families[family]["tokens"]


def test_an_unmeasured_family_takes_the_mean_and_says_so() -> None:
    families = calibration()["openai"]["tool_search"]["client_prompt"]
    mean = round(sum(f["tokens"] for f in families.values()) / len(families))
    body = _search_body("gpt-6")
    body["input"] = [{"role": "user", "content": "hi"}]
    ctx = model_context(body, "openai-responses")
    (prompt,) = [s for s in ctx.of_kind("hidden") if s.label == "client tool-search prompt"]
    assert prompt.tokens == mean and "not measured for this model" in prompt.text


def test_an_exhausted_hosted_search_is_no_longer_rendered() -> None:
    """pydantic-ai test_openai_live_delta_preserves_the_warmed_cache_prefix (gpt-5.6): once
    additional_tools loaded the one deferred function, the request reported 142 tokens, 250
    fewer than the one before: neither the hosted search, its prompt nor the deferred summary
    is rendered; the load prompt is."""
    deferred = {"type": "function", "name": "f", "defer_loading": True, "parameters": {}}
    user = {"role": "user", "content": "hi"}
    body = {"model": "gpt-5.6", "tools": [{"type": "tool_search"}, deferred], "input": [user]}
    before = model_context(body, "openai-responses")
    assert "hosted tool-search prompt" in {s.label for s in before.of_kind("hidden")}
    load = {"type": "additional_tools", "role": "developer", "tools": [{**deferred}]}
    after = model_context({**body, "input": [user, load]}, "openai-responses")
    labels = {s.label for s in after.segments}
    assert "hosted tool-search prompt" not in labels and "tool_search" not in labels
    assert "tool-search load prompt" in labels and "function definitions framing" not in labels
    other = {"type": "function", "name": "g", "defer_loading": True, "parameters": {}}
    partial = model_context(
        {**body, "tools": [*body["tools"], other], "input": [user, load]}, "openai-responses"
    )
    assert "hosted tool-search prompt" in {s.label for s in partial.of_kind("hidden")}


def test_the_load_prompt_is_added_once_at_the_first_load_point() -> None:
    """At the first tool_search_output or additional_tools item, not ahead of the cached
    prefix, and not again at a later load."""
    loaded = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    first = {"type": "tool_search_output", "call_id": "c", "execution": "client", "tools": [loaded]}
    later = {"type": "additional_tools", "role": "developer", "tools": [{**loaded, "name": "g"}]}
    user = {"role": "user", "content": "hi"}
    body = {**_search_body("gpt-5.4-mini"), "input": [user, first, later]}
    ctx = model_context(body, "openai-responses")
    loads = [s for s in ctx.segments if s.label == "tool-search load prompt"]
    expected = calibration()["openai"]["tool_search"]["load_prompt"]["gpt-5.4-mini"]["tokens"]
    assert [(s.tokens, s.source) for s in loads] == [(expected, "input.1")]
    before = {**body, "input": [user]}
    assert "tool-search load prompt" not in _hidden(before)


def test_tool_search_figures_are_the_recordings_derivations() -> None:
    """calibration.json ships exactly what benchmarks/calibrate_tool_search.py derives from the
    recordings' differences (tests/data/openai_usage_pairs.json), each with its arithmetic."""
    from benchmarks.calibrate_tool_search import derivations

    shipped = calibration()["openai"]["tool_search"]
    derived = derivations()
    assert {part: shipped[part] for part in derived} == derived
    assert {"gpt-5.4", "gpt-5.4-mini"} <= set(derived["load_prompt"])
    assert all("reported" in f["derivation"] for part in derived.values() for f in part.values())


def test_openai_cookbook_framing_is_counted() -> None:
    bare = model_context({"model": "gpt-4.1", "messages": []}, provider="openai-chat")
    one = model_context(
        {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
        provider="openai-chat",
    )
    # the cookbook: a reply is primed with 3 tokens; "hi" is one o200k token and its message
    # adds 3 framing tokens plus its role's one token
    assert bare.total_tokens == reply_priming("gpt-4.1") == 3
    assert one.total_tokens - bare.total_tokens == 1 + per_message() == 5


def test_harmony_models_prime_the_reply_with_two_tokens() -> None:
    """gpt-5 speaks harmony: `<|start|>assistant` opens the reply; a lone user message of
    seven o200k tokens is 13 with its framing, as the API reported for it."""
    body = {"model": "gpt-5", "input": [{"role": "user", "content": "How do I cross the street?"}]}
    assert model_context(body, provider="openai-responses").total_tokens == 13


def test_an_earlier_tool_call_counts_as_an_addressed_message() -> None:
    """A function call is its recipient and its arguments, not the JSON of the item."""
    call = {"type": "function_call", "call_id": "c1", "name": "get_city", "arguments": '{"a":1}'}
    before = {"model": "gpt-4.1", "input": [{"role": "user", "content": "go"}]}
    after = {**before, "input": [*before["input"], call]}
    added = (
        model_context(after, provider="openai-responses").total_tokens
        - model_context(before, provider="openai-responses").total_tokens
    )
    addressed = count_tokens(" to=functions.get_city", "openai-responses", "gpt-4.1")
    arguments = count_tokens('{"a":1}', "openai-responses", "gpt-4.1")
    assert added == per_message() + addressed + arguments
    # its output is a message from that function back to the assistant (harmony's header)
    output = {"type": "function_call_output", "call_id": "c1", "output": "Paris"}
    answered = {**after, "input": [*after["input"], output]}
    added = (
        model_context(answered, provider="openai-responses").total_tokens
        - model_context(after, provider="openai-responses").total_tokens
    )
    header = count_tokens("functions.get_city to=assistant", "openai-responses", "gpt-4.1")
    paris = count_tokens("Paris", "openai-responses", "gpt-4.1")
    assert added == per_message() + paris + header - 1  # in place of the one-token role
    # an output whose call is not in the history keeps the plain framing
    orphan = {**before, "input": [*before["input"], output]}
    added = (
        model_context(orphan, provider="openai-responses").total_tokens
        - model_context(before, provider="openai-responses").total_tokens
    )
    assert added == per_message() + paris


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6))
def test_each_message_adds_its_text_and_framing(texts: list[str]) -> None:
    """Appending a message never lowers the total, and adds at least the framing."""
    messages = [{"role": "user", "content": t} for t in texts]
    totals = [
        model_context(_claude([WEATHER], messages=messages[: n + 1]), provider="anthropic")
        for n in range(len(messages))
    ]
    per_block = calibration()["anthropic"]["per_block"]
    for before, after in itertools.pairwise(totals):
        assert after.total_tokens - before.total_tokens >= per_block
        assert after.total_tokens == sum(s.tokens for s in after.segments)


def test_hosted_namespace_members_stay_visible_in_later_contexts() -> None:
    """A hosted tool_search_output that loaded the `crm` namespace (OpenAI's documented shape,
    the tool search guide) keeps each member in every later model context."""
    s = Session(tools=doc_tools(), active=["tool_search"])
    for name in ["get_weather", "get_time", "get_customer", "get_shipping_eta", "read_file"]:
        s.registry.unregister(name)
    s.user("Open orders of CUST-12345?")
    reply = parse_response(responses_body(HOSTED_OUTPUT_DOC), provider="openai-responses")
    s.append(reply.message)
    s.tool_result("call_abc123", "2 open orders")
    options = {"search": "hosted", "namespaces": {"crm": CRM_DESCRIPTION}}
    first = build_request(s, "openai-responses", RESPONSES_MODEL, **options)
    s.assistant("You have 2 open orders.")
    s.user("Thanks, and the first one's total?")
    later = build_request(s, "openai-responses", RESPONSES_MODEL, **options)
    for req in (first, later):
        ctx = model_context(req)
        loaded = {s.label: s for s in ctx.of_kind("loaded_schema")}
        assert "crm.list_open_orders" in loaded, sorted(loaded)
        member = loaded["crm.list_open_orders"]
        assert member.load_point is not None and member.source.startswith(member.load_point)
        assert '"name":"list_open_orders"' in member.text and '"defer_loading"' not in member.text
        assert loaded["crm"].text == json.dumps(
            {"namespace": "crm", "description": CRM_DESCRIPTION}, separators=(",", ":")
        )


def test_real_hosted_tool_search_output_loads_its_function(real_recordings: Path) -> None:
    """vercel/ai packages/openai/src/responses/__fixtures__/openai-tool-search.1.json: the real
    hosted search loaded get_weather; replayed, the definition is in the context at that item."""
    path = real_recordings / "vercel" / "openai-tool-search.1.json"
    response = json.loads(path.read_text())
    payload = {
        "model": response["model"],
        "tools": response["tools"],
        "input": [{"role": "user", "content": "What is the weather in San Francisco?"}]
        + response["output"],
    }
    ctx = model_context(payload, provider="openai-responses")
    loaded = ctx.of_kind("loaded_schema")
    assert [s.label for s in loaded] == ["get_weather"]
    assert loaded[0].load_point == "input.2" and '"unit"' in loaded[0].text
    assert [s.label for s in ctx.of_kind("tool_summary")] == [
        "get_weather",
        "search_files",
        "send_email",
    ]


def test_thinking_of_an_earlier_turn_is_not_counted_on_real_usage() -> None:
    """pydantic-ai's thinking cassette: the second request resends the first reply's thinking;
    Claude reported 266 input tokens, which only holds with that thinking stripped."""
    (pair,) = [p for p in embedded_pairs() if "thinking_part" in p.source and "[3]" in p.source]
    ctx = model_context(pair.body, provider="anthropic")
    (stripped,) = ctx.of_kind("not_seen")
    assert stripped.source == "messages.1.content.0" and stripped.tokens == 0
    thinking = count_tokens(stripped.text, "anthropic", pair.body["model"])
    counted = model_context(pair.body, provider="anthropic").total_tokens + thinking
    assert pair.error() <= 0.1 < abs(counted - pair.reported) / pair.reported


def test_server_loop_usage_is_not_scored_as_one_request(real_recordings: Path) -> None:
    """anth_sdk web search: the reply ran one search, so its usage sums two model calls."""
    loops = [p for p in sdk_pairs() if p.calls > 1]
    assert loops and all(p.comparable is None for p in loops)
    with pytest.raises(ValueError, match="model calls"):
        loops[0].error()
