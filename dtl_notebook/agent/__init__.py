"""Layer 1: the agent's own, provider-neutral state."""

from dtl_notebook.agent.errors import (
    ArgumentTypeError,
    DtlError,
    InvalidArgumentError,
    SectionNameError,
    SessionFileError,
    ToolDefinitionError,
    TranscriptError,
    UnknownToolError,
)
from dtl_notebook.agent.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    NativeBlock,
    SystemUpdate,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.agent.search import SearchQueryError, make_engine
from dtl_notebook.agent.sections import (
    Sections,
    apply_patch,
    diff_sections,
    render_sections,
    replay_sections,
    tool_catalog,
    tools_section,
)
from dtl_notebook.agent.session import CacheHazard, Session, ToolOutput
from dtl_notebook.agent.split import DeferredSplit, split_deferred_tools
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec

__all__ = [
    "ArgumentTypeError",
    "AssistantMessage",
    "CacheHazard",
    "DeferredSplit",
    "DtlError",
    "ImagePart",
    "InvalidArgumentError",
    "Message",
    "NativeBlock",
    "SearchQueryError",
    "SectionNameError",
    "Sections",
    "Session",
    "SessionFileError",
    "SystemUpdate",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolOutput",
    "ToolRegistry",
    "ToolResultMessage",
    "ToolSpec",
    "TranscriptError",
    "UnknownToolError",
    "UserMessage",
    "apply_patch",
    "diff_sections",
    "make_engine",
    "render_sections",
    "replay_sections",
    "split_deferred_tools",
    "tool_catalog",
    "tools_section",
]
