"""Provider-run tool loops: the first call compared with the first call, or the loop named."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.context.server_loop import compare_input, model_calls


def test_a_stream_compares_its_first_call_from_message_start(real_recordings: Path) -> None:
    """vercel/ai anthropic-code-execution-20260120-prompt-cache.1.chunks.txt: two code runs in
    one request; message_start reports the first call (2 + 3,068 written), the last
    message_delta the whole loop's input (cumulative)."""
    stream = real_recordings / "vercel/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt"
    calls = model_calls(stream.read_text())
    assert (calls.calls, calls.first_input, calls.total_input) == (3, 3070, 6 + 3337 + 6289)
    compared = compare_input(3000, stream.read_text(), "anthropic")
    assert compared.reported == 3070 and compared.error_pct == -2.3
    assert compared.label == "first call of a loop of 3: predicted 3,000, reported 3,070 (-2.3 %)"


def test_hosted_tool_search_is_a_loop_not_compared(real_recordings: Path) -> None:
    """vercel/ai openai-tool-search.1.json: hosted search ran inside the request, then the
    model called get_weather: its 640 input tokens sum two model calls, not itemised."""
    response = json.loads((real_recordings / "vercel/openai-tool-search.1.json").read_text())
    compared = compare_input(83, response, "openai-responses")
    assert compared.calls.calls == 2 and compared.error_pct is None and compared.reported is None
    assert compared.label == (
        "loop of 2 calls: first call predicted 83 (reported 640 covers a server-side loop of "
        "2 calls; not compared)"
    )


def test_client_tool_search_is_one_call() -> None:
    response = {
        "output": [{"type": "tool_search_call", "execution": "client", "call_id": "c"}],
        "usage": {"input_tokens": 65},
    }
    compared = compare_input(65, response, "openai-responses")
    assert compared.calls.calls == 1 and compared.error_pct == 0.0
    assert compared.label == "predicted 65, reported 65 (+0 %)"


@given(
    predicted=st.integers(0, 10**6),
    hosted=st.integers(1, 5),
    total=st.integers(1, 10**6),
)
def test_a_summed_loop_is_never_scored(predicted: int, hosted: int, total: int) -> None:
    """Whatever the figures, a usage summing several unitemised calls gets no error."""
    output = [{"type": "web_search_call"}] * hosted + [{"type": "message"}]
    compared = compare_input(
        predicted, {"output": output, "usage": {"input_tokens": total}}, "openai-responses"
    )
    assert compared.error_pct is None and compared.calls.calls == hosted + 1
    assert compared.label.startswith(f"loop of {hosted + 1} calls: first call predicted")
