"""The provider-neutral transcript: pydantic models with a lossless JSON round trip.

Messages are frozen: a message never changes once built, so work derived from it can be
kept. `message.model_copy(update={...})` makes a changed copy (to put in its place).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from dtl_notebook.agent.checks import finite_json, shown, surrogate_problem, type_error
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.tools import ToolSpec


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextPart(_Model):
    type: Literal["text"] = "text"
    text: str

    @field_validator("text")
    @classmethod
    def _valid_text(cls, text: str) -> str:
        problem = surrogate_problem(text)
        if problem:
            raise ValueError(problem)
        return text


class ImagePart(_Model):
    """An image, inline (base64 `data` + `media_type`) or by `url`."""

    type: Literal["image"] = "image"
    media_type: str | None = None
    data: str | None = None
    url: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ImagePart:
        if bool(self.data) == bool(self.url):
            raise ValueError("an image needs exactly one of `data` (base64) or `url`, non-empty")
        if self.data and not self.media_type:
            raise ValueError("an inline image (`data`) needs its `media_type`, e.g. image/png")
        return self


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class ToolCall(_Model):
    """A call the model made. `invalid_arguments` holds raw text that was not a JSON object."""

    id: str = Field(min_length=1)
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    namespace: str | None = None
    invalid_arguments: str | None = None

    @field_validator("arguments")
    @classmethod
    def _finite(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        finite_json(arguments, "arguments")
        return arguments


class NativeBlock(_Model):
    """A provider's own block or item kept verbatim (e.g. Anthropic `server_tool_use`)."""

    provider: str
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data.get("type", ""))


class UserMessage(_Model):
    role: Literal["user"] = "user"
    content: list[ContentPart] = Field(min_length=1)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


class AssistantMessage(_Model):
    """Model output in order: text, tool calls and native blocks, as the model produced them."""

    role: Literal["assistant"] = "assistant"
    content: list[Annotated[TextPart | ToolCallPart | NativePart, Field(discriminator="type")]] = (
        Field(default_factory=list)
    )
    provider: str | None = None
    model: str | None = None

    @property
    def text(self) -> str | None:
        texts = [p.text for p in self.content if isinstance(p, TextPart)]
        return "".join(texts) if texts else None

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p.call for p in self.content if isinstance(p, ToolCallPart)]

    @property
    def native_blocks(self) -> list[NativeBlock]:
        return [p.block for p in self.content if isinstance(p, NativePart)]


class ToolCallPart(_Model):
    type: Literal["tool_call"] = "tool_call"
    call: ToolCall


class NativePart(_Model):
    type: Literal["native"] = "native"
    block: NativeBlock


class ToolChange(_Model):
    """An active-set change during a tool run that was not a pure append (no marker written)."""

    removed: list[str]
    added: list[str]


class ToolResultMessage(_Model):
    """The result of one tool call. `added_tool_names` marks the tools that became available
    after this result; `added_tools` keeps their definitions as they were at that moment."""

    role: Literal["tool"] = "tool"
    call_id: str
    tool_name: str | None = None
    content: list[ContentPart]
    is_error: bool = False
    added_tool_names: list[str] | None = None
    added_tools: list[ToolSpec] = Field(default_factory=list)
    non_append_change: ToolChange | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    def snapshot(self, name: str) -> ToolSpec | None:
        """The definition of an added tool as it was when this marker was written."""
        return next((t for t in self.added_tools if t.name == name), None)


class SystemUpdate(_Model):
    """A change the model is told about between turns: a patch of system prompt sections (new
    text per changed section, None for a removal) and changes to the tools it may call.

    `tools_removed` names the tools withdrawn from here on; `tools_added` holds the definitions
    offered from here on, as snapshots (later registry edits do not change history). Removals
    apply before additions, so a name in both is a redefinition. `tools_registered` names the
    tools that entered the session's registry here (searchable, not offered: a native search
    declares them from here on, and no other request changes). The tool fields are left out of
    the saved form while empty, so updates written before they existed read and write the same.
    """

    role: Literal["system"] = "system"
    sections: dict[str, str | None] = Field(default_factory=dict)
    tools_added: list[ToolSpec] = Field(default_factory=list)
    tools_removed: list[str] = Field(default_factory=list)
    tools_registered: list[str] = Field(default_factory=list)

    @field_validator("sections")
    @classmethod
    def _valid_text(cls, sections: dict[str, str | None]) -> dict[str, str | None]:
        for name, text in sections.items():
            problem = surrogate_problem(text) if text else None
            if problem:
                raise ValueError(f"section {name!r} {problem}")
        return sections

    @field_validator("tools_added")
    @classmethod
    def _one_definition_each(cls, tools: list[ToolSpec]) -> list[ToolSpec]:
        names = [t.name for t in tools]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"tool {twice[0]!r} is added twice in one update")
        return [t.spec() for t in tools]  # a snapshot of the definition, never a callable

    @field_validator("tools_removed", "tools_registered")
    @classmethod
    def _named_once(cls, names: list[str], info: ValidationInfo) -> list[str]:
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            what = "removed" if info.field_name == "tools_removed" else "registered"
            raise ValueError(f"tool {twice[0]!r} is {what} twice in one update")
        return names

    @model_serializer(mode="wrap")
    def _omit_empty_tool_changes(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("tools_added", "tools_removed", "tools_registered"):
            if not data.get(name, True):
                del data[name]
        return data

    def snapshot(self, name: str) -> ToolSpec | None:
        """The definition this update adds under `name`, if any."""
        return next((t for t in self.tools_added if t.name == name), None)

    @property
    def redefined(self) -> list[str]:
        """Names removed and added again in this update."""
        removed = set(self.tools_removed)
        return [t.name for t in self.tools_added if t.name in removed]


Message = Annotated[
    UserMessage | AssistantMessage | ToolResultMessage | SystemUpdate,
    Field(discriminator="role"),
]
MESSAGES = TypeAdapter(list[Message])

AssistantMessage.model_rebuild()


def parts(content: str | list[ContentPart] | Any, param: str = "content") -> list[ContentPart]:
    """Content parts from a string, a non-empty list of parts, or a JSON-serializable value
    (finite numbers only: NaN or infinity would make the request body invalid JSON)."""
    if isinstance(content, str):
        return [TextPart(text=content)]
    if content is None:
        raise type_error(param, "a string, a list of parts or a JSON value (not None)", content)
    if isinstance(content, list) and any(isinstance(p, TextPart | ImagePart) for p in content):
        strays = [i for i, p in enumerate(content) if not isinstance(p, TextPart | ImagePart)]
        if strays:
            raise InvalidArgumentError(
                f"{param}[{strays[0]}] must be a TextPart or ImagePart like the other parts, "
                f"got {shown(content[strays[0]])}"
            )
        return list(content)
    return [TextPart(text=finite_json(content, param))]
