"""A message scan resumed over a shared frozen prefix equals a scan from scratch."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dtl_notebook._reuse import disabled
from dtl_notebook._reuse.frozen import freeze
from dtl_notebook._reuse.prefix import PrefixScan
from dtl_notebook.wire.validate import WireValidationError, validate_payload


def _record(seen: list[tuple[int, str]], index: int, item: dict[str, str]) -> None:
    seen.append((index, item["text"]))


POOL = [freeze({"text": f"m{i}"}) for i in range(6)]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 5), st.booleans()), max_size=8), max_size=6))
def test_resumed_scans_equal_cold_scans(lists: list[list[tuple[int, bool]]]) -> None:
    scan: PrefixScan[list[tuple[int, str]]] = PrefixScan(list, _record)
    for picks in lists:  # frozen items shared between lists, plain copies of them
        items = [POOL[i] if frozen else dict(POOL[i]) for i, frozen in picks]
        with disabled():
            cold = scan.scan(items)
        assert scan.scan(items) == cold == [(i, item["text"]) for i, item in enumerate(items)]


def _body(messages: list[dict[str, object]]) -> dict[str, object]:
    return {"model": "claude-opus-4-8", "max_tokens": 64, "messages": messages}


def test_a_different_history_of_the_same_length_is_checked_again() -> None:
    use = {"type": "tool_use", "id": "a", "name": "t", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "a", "content": "ok"}
    good = [
        freeze({"role": "user", "content": "hi"}),
        freeze({"role": "assistant", "content": [use]}),
        freeze({"role": "user", "content": [result]}),
    ]
    payload = _body(good)
    payload["tools"] = [{"name": "t", "input_schema": {"type": "object"}}]
    validate_payload(payload, "anthropic")
    unpaired = freeze({"role": "user", "content": [{**result, "tool_use_id": "b"}]})
    bad = {**payload, "messages": [*good[:2], unpaired]}
    try:
        validate_payload(bad, "anthropic")
    except WireValidationError as exc:
        assert "messages.2.content.0" in str(exc) and "'b'" in str(exc)
    else:
        raise AssertionError("an unpaired tool_result was accepted")
    grown = {**payload, "messages": [*good, freeze({"role": "user", "content": "more"})]}
    validate_payload(grown, "anthropic")  # resumed: the same objects, one more message


def test_a_plain_item_edited_in_place_is_scanned_again() -> None:
    scan: PrefixScan[list[tuple[int, str]]] = PrefixScan(list, _record)
    plain = {"text": "before"}
    items = [POOL[0], plain, POOL[1]]
    assert scan.scan(items)[1] == (1, "before")
    plain["text"] = "after"
    assert scan.scan(items) == [(0, "m0"), (1, "after"), (2, "m1")]


def test_a_branch_and_its_trunk_both_resume_correctly() -> None:
    # one kept copy grows with the trunk; a branch from an earlier point gets its own
    scan: PrefixScan[list[tuple[int, str]]] = PrefixScan(list, _record)
    trunk = [POOL[0], POOL[1], POOL[2]]
    branch = [POOL[0], POOL[1], POOL[3]]
    for items in (trunk, [*trunk, POOL[4]], branch, [*branch, POOL[5]], [*trunk, POOL[4], POOL[5]]):
        expected = [(i, item["text"]) for i, item in enumerate(items)]
        assert scan.scan(items) == expected
        assert scan.scan(list(items)) == expected  # an equal list, resumed in full
