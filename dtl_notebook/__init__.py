"""dtl_notebook: deferred tool loading that keeps the prompt cache intact."""

from typing import TYPE_CHECKING, Any

from dtl_notebook._lazy import lazy_package
from dtl_notebook.agent.tool_sources import ToolHost, ToolSource, register_connector

if TYPE_CHECKING:
    from dtl_notebook._reuse import footprint as cache_footprint
    from dtl_notebook._reuse import reset as free_caches
    from dtl_notebook.agent import (
        AssistantMessage,
        Session,
        SystemUpdate,
        Tool,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )

__all__ = [
    "AssistantMessage",
    "Session",
    "SystemUpdate",
    "Tool",
    "ToolCall",
    "ToolResultMessage",
    "UserMessage",
    "cache_footprint",
    "free_caches",
]
__version__ = "0.1.0"

lazy_package(
    __name__,
    {
        **dict.fromkeys(__all__[:7], "dtl_notebook.agent"),
        "cache_footprint": "dtl_notebook._reuse:footprint",
        "free_caches": "dtl_notebook._reuse:reset",
    },
)


def _connect_mcp(host: ToolHost, target: Any, namespace: str | None, timeout: float) -> ToolSource:
    """`Session.connect_mcp`: the MCP client does I/O, so it lives in live/, imported when a
    server is first connected."""
    from dtl_notebook.live.mcp_client import McpConnection

    return McpConnection(host, target, namespace=namespace, timeout=timeout)


register_connector("mcp", _connect_mcp)


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext dtl_notebook`: the magics and rich displays (imports the notebook layer)."""
    from dtl_notebook.notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what `load_ipython_extension` added."""
    from dtl_notebook.notebook.extension import unload

    unload(ipython)
