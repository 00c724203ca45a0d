"""The indexed regex and keyword engines answer exactly as a plain loop over every tool does."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dtl_notebook.agent.search import (
    KeywordEngine,
    RegexEngine,
    SearchQueryError,
    document,
    tokenize,
)
from dtl_notebook.agent.search_index import required_literal
from dtl_notebook.agent.tools import ToolSpec

# Letters that case-insensitive matching folds across ASCII and non-ASCII (long s, Kelvin sign,
# dotted and dotless i) sit beside plain ones: a prefilter that lower-cases naively would miss
# real matches.
_LETTERS = "absekiSK\u017f\u212a\u0130\u0131_ .\n-"
_FRAGMENTS = (
    "a b s k e ab sk ks . .* (a|b) [ab] s+ (?:ab)+ ^ $ \\b K \u017f \u0130 x? (?-i:A) \\n (?=a) "
    "(?<!b) e{2} \\s (?:ke)* [^a] \\w+"
).split()


def _tools(texts: list[str]) -> list[ToolSpec]:
    return [ToolSpec(name=f"tool_{i}", description=text) for i, text in enumerate(texts)]


def _plain_regex(tools: list[ToolSpec], query: str, limit: int) -> list[str]:
    pattern = re.compile(query, re.IGNORECASE)
    return [t.name for t in tools if pattern.search(document(t))][:limit]


def _plain_keyword(tools: list[ToolSpec], query: str, limit: int) -> list[str]:
    words = set(tokenize(query))
    scored = []
    for position, tool in enumerate(tools):
        score = len(words & set(tokenize(document(tool)))) + len(words & set(tokenize(tool.name)))
        if score:
            scored.append((-score, position, tool.name))
    return [name for _, _, name in sorted(scored)[:limit]]


texts = st.lists(st.text(alphabet=_LETTERS, max_size=30), min_size=1, max_size=25)


@settings(max_examples=300)
@given(texts, st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=5), st.integers(1, 8))
@example(["\u017ftop"], ["s"], 3)
@example(["\u0130nk", "ink"], ["i", "n"], 5)
@example(["a\nb", "ab"], ["a", "\\n", "b"], 5)
def test_regex_index_answers_as_the_plain_loop(
    docs: list[str], fragments: list[str], limit: int
) -> None:
    query = "".join(fragments)
    tools = _tools(docs)
    engine = RegexEngine()
    engine.index(tools)
    assert engine.search(query, limit) == _plain_regex(tools, query, limit)


words = st.lists(st.sampled_from(["eta", "ship", "order", "get", "ab", "x1"]), max_size=4)


@settings(max_examples=300)
@given(st.lists(words, min_size=1, max_size=25), words.filter(bool), st.integers(1, 8))
def test_keyword_index_answers_as_the_plain_loop(
    docs: list[list[str]], query: list[str], limit: int
) -> None:
    tools = [
        ToolSpec(name="_".join(["t", str(i), *doc[:1]]), description=" ".join(doc))
        for i, doc in enumerate(docs)
    ]
    engine = KeywordEngine()
    engine.index(tools)
    assert engine.search(" ".join(query), limit) == _plain_keyword(tools, " ".join(query), limit)


def test_required_literal_is_the_longest_certain_run() -> None:
    assert required_literal(re.compile("ship.*eta", re.I)) == "ship"
    assert required_literal(re.compile("(?:Order)+_id", re.I)) == "order"
    assert required_literal(re.compile("a|b")) is None  # either may match
    assert required_literal(re.compile("(?:abc)?d")) == "d"  # the optional part is not certain
    assert required_literal(re.compile("\u017ftop")) == "top"  # long s is not plain ASCII


def test_an_empty_index_finds_nothing() -> None:
    for engine in (RegexEngine(), KeywordEngine()):
        engine.index([])
        assert engine.search("eta", 5) == []


def test_keyword_query_without_words_is_refused() -> None:
    engine = KeywordEngine()
    engine.index(_tools(["eta"]))
    try:
        engine.search("!!", 5)
    except SearchQueryError as exc:
        assert "no searchable words" in str(exc)
    else:
        raise AssertionError("a query without words was accepted")
