"""The tools through which a model reaches deferred ones: the providers' server search tools
(`anthropic_search.SEARCH_TOOL_NAMES`, OpenAI's hosted `tool_search` type) and clients'
search tools by name (`data/search_tools.json`)."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from dtl_notebook.wire.anthropic_search import SEARCH_TOOL_NAMES as SERVER_SEARCH_NAMES

__all__ = ["CLIENT_SEARCH_TOOLS", "SEARCH_TOOL_NAMES", "is_search_tool"]

_DATA = json.loads(files(__package__).joinpath("data/search_tools.json").read_text("utf-8"))
CLIENT_SEARCH_TOOLS: tuple[str, ...] = tuple(_DATA["client"])
SEARCH_TOOL_NAMES = frozenset({*SERVER_SEARCH_NAMES, *CLIENT_SEARCH_TOOLS})


def is_search_tool(tool: dict[str, Any]) -> bool:
    """Whether `tool` (a request's tool entry) searches for others."""
    function = tool.get("function")
    name = (function if isinstance(function, dict) else tool).get("name")
    return name in SEARCH_TOOL_NAMES or "tool_search" in str(tool.get("type", ""))
