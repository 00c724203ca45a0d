"""Tool search engines (BM25, regex, keyword) over a registry."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from dtl_notebook.agent.checks import choice, positive_int, shown
from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.search_index import LiteralIndex, WordIndex, required_literal
from dtl_notebook.agent.tools import ToolSpec

if TYPE_CHECKING:  # numpy and bm25s load on first use: a command that never searches skips them
    import bm25s
    import numpy as np

LocalEngine = Literal["bm25", "regex", "keyword"]
LOCAL_ENGINES: tuple[LocalEngine, ...] = get_args(LocalEngine)  # run in the session's tool_search

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class SearchQueryError(DtlError, ValueError):
    """A query an engine cannot run; the message explains the limit."""


def tokenize(text: str) -> list[str]:
    """Lower-case words; snake_case and camelCase split into parts."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _describe_params(schema: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        out.append(prefix + name)
        if isinstance(sub.get("description"), str):
            out.append(sub["description"])
        if sub.get("type") == "object":
            out.extend(_describe_params(sub, f"{prefix}{name}."))
    return out


def document(tool: ToolSpec) -> str:
    """The searchable text of a tool: name, description, argument names and descriptions."""
    return "\n".join([tool.name, tool.description, *_describe_params(tool.parameters)])


class SearchEngine(Protocol):
    """Indexes tool definitions and returns the names of the best matches."""

    name: str
    max_query_length: int

    def index(self, tools: Sequence[ToolSpec]) -> None: ...

    def search(self, query: str, limit: int) -> list[str]: ...


def _check_query(query: str, max_length: int, limit: int) -> str:
    positive_int(limit, "limit")
    if not isinstance(query, str) or not query.strip():
        raise SearchQueryError(f"query must be a non-empty string, got {shown(query)}")
    if len(query) > max_length:
        raise SearchQueryError(
            f"query is {len(query)} characters; the limit is {max_length} characters"
        )
    return query


class BM25Engine:
    """BM25 ranking (bm25s, Lucene idf) over the tools' documents."""

    name = "bm25"
    max_query_length = 500

    def __init__(self) -> None:
        self._names: list[str] = []
        self._bm25: bm25s.BM25 | None = None

    def index(self, tools: Sequence[ToolSpec]) -> None:
        self._names = [t.name for t in tools]
        corpus = [tokenize(document(t)) for t in tools]
        self._bm25 = None
        if any(corpus):
            import bm25s

            self._bm25 = bm25s.BM25(method="lucene")
            self._bm25.index(corpus, show_progress=False)

    def search(self, query: str, limit: int) -> list[str]:
        terms = tokenize(_check_query(query, self.max_query_length, limit))
        if not terms:
            raise SearchQueryError("query has no searchable words (letters or digits)")
        if self._bm25 is None:
            return []
        return [self._names[i] for i in top_positive(self._bm25.get_scores(terms), limit)]


def top_positive(scores: np.ndarray[Any, Any], limit: int) -> list[int]:
    """Indexes of the `limit` best positive scores, best first, ties by index: only the
    candidates at or above the limit-th best score are sorted (a query touches a few
    thousand of 10,000 documents, and sorting them all in Python cost more than scoring)."""
    import numpy as np

    hits = np.flatnonzero(scores > 0)
    if len(hits) > limit:
        threshold = np.partition(scores[hits], len(hits) - limit)[len(hits) - limit]
        hits = hits[scores[hits] >= threshold]
    order = np.lexsort((hits, -scores[hits]))
    return [int(i) for i in hits[order][:limit]]


class RegexEngine:
    """Case-insensitive Python regular expressions, matched with re.search; only the tools
    holding the pattern's required text (found through a LiteralIndex) are tried."""

    name = "regex"
    max_query_length = 200

    def __init__(self) -> None:
        self._docs: list[tuple[str, str]] = []
        self._index = LiteralIndex([])

    def index(self, tools: Sequence[ToolSpec]) -> None:
        self._docs = [(t.name, document(t)) for t in tools]
        self._index = LiteralIndex([doc for _, doc in self._docs])

    def search(self, query: str, limit: int) -> list[str]:
        try:
            pattern = re.compile(_check_query(query, self.max_query_length, limit), re.IGNORECASE)
        except re.error as exc:
            raise SearchQueryError(f"invalid regular expression {query!r}: {exc}") from None
        literal = required_literal(pattern)
        candidates = range(len(self._docs)) if literal is None else self._index.containing(literal)
        hits: list[str] = []
        for position in candidates:
            name, doc = self._docs[position]
            if pattern.search(doc):
                hits.append(name)
                if len(hits) == limit:
                    break
        return hits


class KeywordEngine:
    """Counts query words found in each tool; a word in the name counts double. Counted at
    once over word postings (WordIndex), ties broken by registration order."""

    name = "keyword"
    max_query_length = 500

    def __init__(self) -> None:
        self._names: list[str] = []
        self._in_names = self._in_docs = WordIndex([])

    def index(self, tools: Sequence[ToolSpec]) -> None:
        self._names = [t.name for t in tools]
        self._in_names = WordIndex([set(tokenize(t.name)) for t in tools])
        self._in_docs = WordIndex([set(tokenize(document(t))) for t in tools])

    def search(self, query: str, limit: int) -> list[str]:
        words = set(tokenize(_check_query(query, self.max_query_length, limit)))
        if not words:
            raise SearchQueryError("query has no searchable words (letters or digits)")
        import numpy as np

        scores = np.zeros(len(self._names), dtype=np.int64)
        self._in_docs.add_counts(scores, words)
        self._in_names.add_counts(scores, words)
        return [self._names[i] for i in top_positive(scores, limit)]


ENGINES: dict[LocalEngine, type[BM25Engine] | type[RegexEngine] | type[KeywordEngine]] = {
    "bm25": BM25Engine,
    "regex": RegexEngine,
    "keyword": KeywordEngine,
}


def make_engine(name: str) -> SearchEngine:
    """A fresh engine by name: one of LOCAL_ENGINES."""
    engine: LocalEngine = choice(name, "search engine", LOCAL_ENGINES)  # type: ignore[assignment]
    return ENGINES[engine]()
