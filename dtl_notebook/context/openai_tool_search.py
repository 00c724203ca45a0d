"""What OpenAI's tool search adds to the model context, per mode and model family.

OpenAI publishes none of these sizes; each comes from recordings (`calibration.json` "openai"
"tool_search", derived by `benchmarks/calibrate_tool_search.py`, the arithmetic stored beside
each figure):
- a client `tool_search` adds its prompt up front ("client_prompt");
- a hosted `tool_search` adds its prompt up front while something is left to search
  ("hosted_prompt"); once every deferred function has been loaded, the search, its prompt and
  the deferred functions' summaries are no longer rendered (a gpt-5.6 request whose
  `additional_tools` loaded its one deferred function reported 250 tokens fewer than the
  request before it);
- the first `tool_search_output` or `additional_tools` item adds a prompt at that load point,
  at the end of the context ("load_prompt").
"""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.calibration import openai_tool_search
from dtl_notebook.context.collector import Collector

__all__ = [
    "CLIENT_SEARCH_PROMPT",
    "HOSTED_SEARCH_PROMPT",
    "LOAD_ITEMS",
    "LOAD_PROMPT",
    "add_load_prompt",
    "add_search_prompts",
    "search_exhausted",
    "shown",
]

CLIENT_SEARCH_PROMPT = "client tool-search prompt"
HOSTED_SEARCH_PROMPT = "hosted tool-search prompt"
LOAD_PROMPT = "tool-search load prompt"
LOAD_ITEMS = frozenset({"additional_tools", "tool_search_output"})


def _hosted_search(tool: Any) -> bool:
    return (
        isinstance(tool, dict)
        and tool.get("type") == "tool_search"
        and (tool.get("execution") != "client")
    )


def _deferred_names(tools: list[Any]) -> set[str]:
    names = set()
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        members = tool.get("tools") if tool.get("type") == "namespace" else [tool]
        for member in members if isinstance(members, list) else []:
            if isinstance(member, dict) and member.get("defer_loading"):
                names.add(str(member.get("name")))
    return names


def search_exhausted(tools: list[Any], items: list[Any], types: set[str]) -> bool:
    """Whether a hosted search has nothing left to find: every deferred function is loaded by
    a load item (`types`: the types of the body's items, read without a scan where none loads)."""
    if not types & LOAD_ITEMS or not any(_hosted_search(t) for t in tools):
        return False
    loaded: set[str] = set()
    for item in items:
        if isinstance(item, dict) and item.get("type") in LOAD_ITEMS:
            for tool in item.get("tools") or []:
                members = tool.get("tools") if tool.get("type") == "namespace" else [tool]
                loaded |= {str(m.get("name")) for m in members or [] if isinstance(m, dict)}
    return _deferred_names(tools) <= loaded


def shown(tool: Any, exhausted: bool) -> bool:
    """Whether a declared tool is rendered: once a hosted search is exhausted, neither the
    search nor the deferred functions' summaries are."""
    if not exhausted or not isinstance(tool, dict):
        return True
    if _hosted_search(tool):
        return False
    return not (tool.get("type") == "function" and tool.get("defer_loading"))


def add_search_prompts(tools: list[Any], exhausted: bool, out: Collector) -> None:
    """Each declared tool search's prompt, per mode and the model's family."""
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "tool_search":
            continue
        if tool.get("execution") == "client":
            tokens, why = openai_tool_search("client_prompt", out.model)
            out.hidden(CLIENT_SEARCH_PROMPT, tokens, f"tools.{i}", why)
        elif not exhausted:
            tokens, why = openai_tool_search("hosted_prompt", out.model)
            out.hidden(HOSTED_SEARCH_PROMPT, tokens, f"tools.{i}", why)


def add_load_prompt(items: list[Any], i: int, out: Collector) -> None:
    """The load prompt, at the first load item only."""
    if any(isinstance(e, dict) and e.get("type") in LOAD_ITEMS for e in items[:i]):
        return
    size, why = openai_tool_search("load_prompt", out.model)
    out.hidden(LOAD_PROMPT, size, f"input.{i}", why)
