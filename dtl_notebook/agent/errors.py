"""Errors of the agent layer. Each one names what was wrong."""

from __future__ import annotations

from pydantic import ValidationError


class DtlError(Exception):
    """Base class of every error dtl_notebook raises on bad input."""


class InvalidArgumentError(DtlError, ValueError):
    """A public argument of the right type whose value is unusable; names the parameter."""


class ArgumentTypeError(DtlError, TypeError):
    """A public argument of the wrong type; names the parameter."""


class ToolDefinitionError(DtlError, ValueError):
    """A tool definition is invalid: names the tool and the field."""

    def __init__(self, tool: object, field: str, reason: str) -> None:
        self.tool, self.field, self.reason = tool, field, reason
        super().__init__(f"invalid tool {tool!r}: field {field!r} {reason}")

    @classmethod
    def from_validation(cls, tool: object, exc: ValidationError) -> ToolDefinitionError:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "<tool>"
        reason = str(first["msg"]).removeprefix("Value error, ")
        return cls(tool, field, reason)


class UnknownToolError(DtlError, KeyError):
    """A name that is not in the registry."""

    def __init__(self, name: str, context: str = "registered") -> None:
        self.name = name
        super().__init__(name)
        self.message = f"unknown tool {name!r}: no tool of that name is {context}"

    def __str__(self) -> str:
        return self.message


class SectionNameError(DtlError, ValueError):
    """A system prompt section name that does not match ^[a-z][a-z0-9_-]*$."""


class TranscriptError(DtlError, ValueError):
    """A message that would make the transcript inconsistent (e.g. a result for no call)."""


class SessionFileError(DtlError, ValueError):
    """A saved session that cannot be loaded (corrupt, or from a newer version)."""


class DispatchError(DtlError, RuntimeError):
    """A call made through a dispatcher tool (the bridge's `call_tool`) failed; `tool` names the
    inner tool, `cause` is what went wrong."""

    def __init__(self, tool: str, cause: Exception) -> None:
        self.tool, self.cause = tool, cause
        super().__init__(f"{type(cause).__name__}: {cause}")
