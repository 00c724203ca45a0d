"""dtl_notebook: deferred tool loading that keeps the prompt cache intact."""

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
]
__version__ = "0.1.0"
