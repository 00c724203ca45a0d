"""Tool changes under a provider's own tool search: what stays declared, and where it grows.

A native search declares every registered tool (Anthropic's `tool_search_tool_bm25/regex`
with `defer_loading`, OpenAI's hosted `tool_search`), so the builders start from the registry.
After a tool change the declared list must stay what earlier requests sent:

- the tools shown from the start keep their first definitions in their places, a withdrawn one
  included (its removal is told in a system message or in text, and a call to it is refused
  locally);
- a redefined tool keeps, where it is declared, the definition first declared, and the new one
  is told where the change happened (by value, or under a versioned name);
- a tool unregistered after it was withdrawn (an MCP server dropped it) stays declared, at the
  end, with its first definition, so earlier references to it still resolve.

What cannot be kept: a tool registered after earlier requests is declared where the registry
puts it, after the tools registered before it (`growth_note` says what that costs), except under
OpenAI's hosted search with `additional_tools` items, which declares it where its registration
was recorded (`SystemUpdate.tools_registered`) and leaves tools[] as it was. Anthropic
keeps a deferred definition out of the rendered prompt until its search loads it
(https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool), so the
cached prompt is expected to hold there while the request's `tools` bytes change; OpenAI shows
a deferred function's name and description up front
(https://platform.openai.com/docs/guides/tools-tool-search), so there the rendered tools change
and the cache misses from that tool on.

Every function here reads only what the changes touched (never every registered tool), so a
turn costs what it adds.
"""

from __future__ import annotations

from collections.abc import Callable, Container

from dtl_notebook.agent.tools import ToolSpec
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.tool_changes import ToolChanges

GROWTH_NOTE = (
    "native tool search declares every registered tool: tool(s) {names} offered by a change are "
    "declared deferred among the registered tools, and one registered after an earlier request "
    "makes tools[] grow after the tools registered before it; {effect}"
)


def pinned(
    changes: ToolChanges,
    left_out: Container[str],
    loaded_snapshot: Callable[[str], ToolSpec | None],
) -> dict[str, ToolSpec]:
    """The first definitions of redefined tools that are declared among the deferred ones (not
    in `left_out`) and were not pinned by a load point already (`loaded_snapshot`)."""
    out: dict[str, ToolSpec] = {}
    for real in dict.fromkeys(changes.aliases.values()):
        first = changes.first.get(real)
        if first is not None and real not in left_out and loaded_snapshot(real) is None:
            out[real] = first
    return out


def kept_declared(
    changes: ToolChanges, registered: Container[str], left_out: Container[str]
) -> list[ToolSpec]:
    """Withdrawn tools no longer registered, with their first definitions: they stay declared."""
    return [
        changes.first[n]
        for n in changes.withdrawn
        if n not in registered and n not in left_out and n in changes.first
    ]


def versioned_specs(changes: ToolChanges) -> list[ToolSpec]:
    """Every redefinition under its versioned name, in the order the transcript declared them
    (so a list that ends with them only grows at its end)."""
    return [
        spec.model_copy(update={"name": name}) for name, spec in changes.later if name != spec.name
    ]


def offered_by_change(changes: ToolChanges) -> list[str]:
    """The names a change offers for the first time under their own name (version 1)."""
    # a first definition (version 1) a change declares is never an initial tool's
    return list(dict.fromkeys(a.name for a in changes.fresh() if a.version == 1))


def growth_note(changes: ToolChanges, provider: str) -> str | None:
    """The note on tools a change offers first under `provider`'s own search, if any."""
    names = offered_by_change(changes)
    if not names:
        return None
    effect = spec(provider).native_growth_effect  # how its search renders a deferred tool
    if effect is None:
        raise LookupError(f"provider {provider!r} has no native_growth_effect in the table")
    return GROWTH_NOTE.format(names=names, effect=effect)
