"""Layer 1: the agent's own, provider-neutral state."""

from typing import TYPE_CHECKING

from dtl_notebook._lazy import lazy_package

if TYPE_CHECKING:
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

lazy_package(
    __name__,
    {
        **dict.fromkeys(
            [
                "ArgumentTypeError",
                "DtlError",
                "InvalidArgumentError",
                "SectionNameError",
                "SessionFileError",
                "ToolDefinitionError",
                "TranscriptError",
                "UnknownToolError",
            ],
            "dtl_notebook.agent.errors",
        ),
        **dict.fromkeys(
            [
                "AssistantMessage",
                "ImagePart",
                "Message",
                "NativeBlock",
                "SystemUpdate",
                "TextPart",
                "ToolCall",
                "ToolResultMessage",
                "UserMessage",
            ],
            "dtl_notebook.agent.messages",
        ),
        **dict.fromkeys(["SearchQueryError", "make_engine"], "dtl_notebook.agent.search"),
        **dict.fromkeys(
            [
                "Sections",
                "apply_patch",
                "diff_sections",
                "render_sections",
                "replay_sections",
                "tool_catalog",
                "tools_section",
            ],
            "dtl_notebook.agent.sections",
        ),
        **dict.fromkeys(["CacheHazard", "Session", "ToolOutput"], "dtl_notebook.agent.session"),
        **dict.fromkeys(["DeferredSplit", "split_deferred_tools"], "dtl_notebook.agent.split"),
        **dict.fromkeys(["Tool", "ToolRegistry", "ToolSpec"], "dtl_notebook.agent.tools"),
    },
)
