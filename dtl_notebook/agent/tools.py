"""Tool definitions and the registry of every tool an agent knows."""

from __future__ import annotations

import functools
import json
import re
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

from dtl_notebook._reuse.frozen import freeze
from dtl_notebook._reuse.registry import Memo, active, memoized
from dtl_notebook.agent.checks import surrogate_problem, type_error, unicode_json
from dtl_notebook.agent.errors import InvalidArgumentError, ToolDefinitionError, UnknownToolError

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@functools.cache
def _meta() -> Draft202012Validator:
    """The Draft 2020-12 meta-schema validator, built on first use (importing jsonschema
    takes seconds: a command that checks no tool schema never pays for it)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


@memoized("schema checks")
def _schema_problem(canonical: str) -> str | None:
    """Why a parameters schema is not an object schema valid under Draft 2020-12, or None."""
    schema = json.loads(canonical)
    try:
        unicode_json(schema, "schema")
    except InvalidArgumentError as exc:
        return str(exc)
    error = next(iter(sorted(_meta().iter_errors(schema), key=lambda e: e.path)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        return f"not a valid JSON Schema (Draft 2020-12) at {where}: {error.message}"
    if schema.get("type") != "object":
        return 'must be an object schema ({"type": "object", ...})'
    return None


class ToolSpec(BaseModel):
    """The serializable definition of a tool: what a provider can be told about it.

    Frozen, `parameters` included (a read-only dict): a new definition is a new ToolSpec, so
    request builders keep what they made from one (`register(..., replace=True)` redefines).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: dict(EMPTY_OBJECT), validate_default=True
    )
    prompt_snippet: str | None = None
    prompt_guidelines: str | None = None
    namespace: str | None = None

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not TOOL_NAME.match(name):
            raise ValueError("must match ^[a-zA-Z0-9_-]{1,64}$")
        return name

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, namespace: str | None) -> str | None:
        if namespace is not None and not TOOL_NAME.match(namespace):
            raise ValueError("must match ^[a-zA-Z0-9_-]{1,64}$")
        return namespace

    @field_validator("description", "prompt_snippet", "prompt_guidelines")
    @classmethod
    def _check_text(cls, text: str | None) -> str | None:
        problem = surrogate_problem(text) if text else None
        if problem:
            raise ValueError(problem)
        return text

    @field_validator("parameters")
    @classmethod
    def _check_parameters(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        try:
            canonical = json.dumps(parameters, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not JSON-serializable: {exc}") from None
        problem = _schema_problem(canonical)
        if problem:
            raise ValueError(problem)
        return freeze(parameters)  # type: ignore[no-any-return]

    def __init__(self, name: str | None = None, /, **data: Any) -> None:
        if name is not None:
            data["name"] = name
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ToolDefinitionError.from_validation(data.get("name"), exc) from None

    def spec(self) -> ToolSpec:
        """The definition alone, without any implementation."""
        # validated when this tool was built, and immutable: the values are shared as they are
        return ToolSpec.model_construct(**{name: getattr(self, name) for name in _SPEC_FIELDS})

    @property
    def summary(self) -> str:
        """The first line of the description."""
        return self.description.strip().splitlines()[0] if self.description.strip() else ""


_SPEC_FIELDS: set[str] = set(ToolSpec.model_fields)  # never mutated


class Tool(ToolSpec):
    """A tool: its definition plus an optional implementation called as execute(**arguments)."""

    execute: Callable[..., Any] | None = Field(default=None, exclude=True, repr=False)

    if TYPE_CHECKING:  # the signature type checkers see; `name` may be positional, as documented

        def __init__(
            self,
            name: str | None = None,
            /,
            *,
            description: str = "",
            parameters: dict[str, Any] = ...,
            execute: Callable[..., Any] | None = None,
            prompt_snippet: str | None = None,
            prompt_guidelines: str | None = None,
            namespace: str | None = None,
            **data: Any,
        ) -> None: ...

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolSpec):
            return NotImplemented
        return self.model_dump(include=_SPEC_FIELDS) == other.model_dump(include=_SPEC_FIELDS)

    __hash__ = None  # type: ignore[assignment]


class ToolRegistry:
    """Every registered tool by name, in registration order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self.version = 0  # bumped on every change, so indexes know when to rebuild
        # each name the first time it is registered, in order (a session records the ones
        # that arrive after its first message)
        self.arrivals: list[str] = []
        self._ever: set[str] = set()
        self._stamps: dict[str, int] = {}  # name -> the version its latest registration made
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> Tool:
        """Add a tool; a name already registered is an error unless replace=True."""
        if not isinstance(tool, Tool):
            raise type_error("tool", "a Tool", tool)
        if tool.name in self._tools and not replace:
            raise ToolDefinitionError(
                tool.name, "name", "already registered (pass replace=True to redefine it)"
            )
        self._tools[tool.name] = tool
        self.version += 1
        self._stamps[tool.name] = self.version
        if tool.name not in self._ever:
            self._ever.add(tool.name)
            self.arrivals.append(tool.name)
        return tool

    def unregister(self, name: str) -> Tool:
        """Remove a tool and return it."""
        tool = self.get(name)
        del self._tools[name]
        self.version += 1
        return tool

    def stamp(self, name: str) -> int | None:
        """The registry version the latest registration of `name` made (None: not registered):
        a newer stamp means the tool was registered again (or redefined) since."""
        return self._stamps.get(name) if name in self._tools else None

    def get(self, name: str) -> Tool:
        """The tool of that name; an unknown name raises UnknownToolError."""
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(name) from None

    def __getitem__(self, name: str) -> Tool:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def registered(self, names: Iterable[str]) -> list[Tool]:
        """The tools of those names that are registered, in that order (at dict speed: an
        agent reads its active tools this way every turn)."""
        tools = self._tools
        return [tools[n] for n in names if n in tools]


def same_definition(a: ToolSpec, b: ToolSpec) -> bool:
    """Whether two tools define the same thing (a Tool's implementation is not part of it);
    equal to comparing their `spec()`s without re-validating the schemas. Tools are immutable,
    so the answer for a pair of objects is remembered (while the second one lives)."""
    if a is b:
        return True
    entry = _SAME_DEFINITIONS.get((id(a), id(b)))  # (ref to b, (ref to a, same))
    if entry is not None and entry[0]() is b and entry[1][0]() is a:
        return bool(entry[1][1])
    same = all(getattr(a, name) == getattr(b, name) for name in ToolSpec.model_fields)
    if active():
        _SAME_DEFINITIONS.put_owned((id(a), id(b)), b, (weakref.ref(a), same))
    return same


_SAME_DEFINITIONS = Memo("definition comparisons")  # (ids) -> (ref to b, (ref to a, same))
