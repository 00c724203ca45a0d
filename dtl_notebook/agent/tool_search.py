"""The built-in `tool_search` tool: searches the session's registry and activates by append."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Protocol

from dtl_notebook.agent.search import SearchEngine, make_engine
from dtl_notebook.agent.tools import Tool, ToolRegistry


class Searchable(Protocol):
    """What the search tool needs of a session (imports in agent/ run one way)."""

    registry: ToolRegistry

    def activate_found(self, names: Iterable[str]) -> list[str]: ...

    def withdrawn(self) -> frozenset[str]: ...


TOOL_SEARCH = "tool_search"
MAX_LIMIT = 50


class SessionSearch:
    """An engine kept in step with a session's registry (re-indexed when the registry changes)."""

    def __init__(self, session: Searchable, engine: str) -> None:
        self.session = session
        self.engine: SearchEngine = make_engine(engine)
        self._indexed: tuple[int, frozenset[str]] | None = None

    @property
    def indexed_version(self) -> int:
        """The registry version the index was built from (-1: not built yet)."""
        return self._indexed[0] if self._indexed is not None else -1

    def refresh(self) -> None:
        """Index the registry now if it (or the withdrawn tools) changed since the last index
        (the first search would). Withdrawn tools are left out of the index."""
        registry = self.session.registry
        key = (registry.version, self.session.withdrawn())
        if self._indexed != key:
            left_out = key[1] | {TOOL_SEARCH}
            self.engine.index([t for t in registry if t.name not in left_out])
            self._indexed = key

    def search(self, query: str, limit: int = 5) -> list[Tool]:
        self.refresh()
        registry = self.session.registry
        return [registry[name] for name in self.engine.search(query, limit)]


def make_tool_search(
    session: Searchable, engine: str, searcher: SessionSearch | None = None
) -> Tool:
    """The `tool_search` tool bound to a session (searching through `searcher` if given)."""
    if searcher is None:
        searcher = SessionSearch(session, engine)
    max_len = searcher.engine.max_query_length
    kind = {
        "bm25": "Keywords ranked with BM25",
        "regex": "A case-insensitive Python regular expression",
        "keyword": "Keywords",
    }[engine]

    def run(query: str, limit: int = 5) -> str:
        hits = searcher.search(query, limit)
        session.activate_found([t.name for t in hits])
        return json.dumps(
            {"tools": [{"name": t.name, "description": t.description} for t in hits]},
            ensure_ascii=False,
        )

    return Tool(
        name=TOOL_SEARCH,
        description=(
            "Search the catalog of available tools by what they do. Matching tools become "
            "callable from the next step on."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": f"{kind} describing the capability (at most {max_len} chars).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": 5,
                    "description": f"Maximum number of tools to return (1-{MAX_LIMIT}).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        execute=run,
    )
