"""Saving and loading sessions as versioned JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from dtl_notebook.agent.checks import json_path, shown, type_error
from dtl_notebook.agent.errors import (
    DtlError,
    InvalidArgumentError,
    SessionFileError,
    ToolDefinitionError,
)
from dtl_notebook.agent.messages import MESSAGES, Message
from dtl_notebook.agent.search import LocalEngine
from dtl_notebook.agent.sections import Sections
from dtl_notebook.agent.tool_search import TOOL_SEARCH, make_tool_search
from dtl_notebook.agent.tool_set import ToolSet
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec


class Stored(Protocol):
    """What saving and loading need of a session (imports in agent/ run one way)."""

    search: str | None
    registry: ToolRegistry
    prompt: Sections
    messages: list[Any]
    tool_set: ToolSet

    @property
    def active_tools(self) -> list[str]: ...

    def restore_active_tools(
        self, names: Iterable[str], declared_order: Iterable[str] = ()
    ) -> None: ...

    def activate(self, names: Iterable[str]) -> list[str]: ...


S = TypeVar("S", bound=Stored)

SCHEMA_VERSION = 1


FORMAT = "dtl_notebook.session"


def dump_session(session: Stored) -> dict[str, Any]:
    """The session as plain JSON data; `initial_tools` (the first definitions of initial
    tools redefined since) only where there are any, so older files read and write the same."""
    data = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "search": session.search,
        "tools": [t.spec().model_dump(exclude_none=True) for t in session.registry],
        "active": session.active_tools,
        "sections": session.prompt.copy(),
        "messages": MESSAGES.dump_python(session.messages, mode="json", exclude_none=True),
    }
    initial = session.tool_set.records.initial_specs
    if initial:
        data["initial_tools"] = [t.model_dump(exclude_none=True) for t in initial.values()]
    order = session.tool_set.frozen_order
    if order:  # frozen at a removal: withdrawn tools keep their places in requests
        data["declared_order"] = list(order)
    return data


def load_session(
    cls: Callable[..., S],
    path: Path,
    functions: Mapping[str, Callable[..., Any]] | Iterable[Tool],
) -> S:
    """Read and check a saved session; any problem raises SessionFileError naming it."""
    impls = implementations(functions)  # a bad argument is named before the file is read
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {str(path)!r}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SessionFileError(f"session file {str(path)!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise SessionFileError(f"session file {str(path)!r} is nested too deep to read") from None
    session = session_from_dict(cls, data, impls, source=str(path))
    if isinstance(functions, Mapping):
        _all_bound(session, impls)
    return session


class SessionFile(BaseModel):
    """The shape of a saved session, validated as a whole before anything is rebuilt."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["dtl_notebook.session"]
    schema_version: StrictInt
    search: LocalEngine | None
    tools: list[dict[str, Any]]  # each checked by ToolSpec, whose errors name the field
    active: list[StrictStr]
    sections: dict[str, StrictStr]
    messages: list[Message]
    initial_tools: list[ToolSpec] = []
    declared_order: list[StrictStr] = []


def session_from_dict(
    cls: Callable[..., S],
    data: Any,
    functions: Mapping[str, Callable[..., Any] | None] | Iterable[Tool] = (),
    source: str = "<data>",
) -> S:
    """Rebuild a session from `dump_session` data; a problem names its JSON path and value."""

    def bad(where: str, reason: str) -> SessionFileError:
        return SessionFileError(f"session file {source!r}: {where}: {reason}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad("format", f'not a saved session (expected "format": "{FORMAT}")')
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise bad("schema_version", f"unsupported schema_version {shown(version)}: not an integer")
    if version > SCHEMA_VERSION:
        raise bad(
            "schema_version",
            f"unsupported schema_version {version}: newer than this dtl_notebook supports "
            f"({SCHEMA_VERSION}); upgrade dtl_notebook to load it",
        )
    if version < 1:
        raise bad(
            "schema_version", f"unsupported schema_version {version} (valid: 1..{SCHEMA_VERSION})"
        )
    try:
        stored = SessionFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = json_path(first["loc"], data)
        value = f" (value {shown(first['input'])})" if first["type"] != "missing" else ""
        raise bad(where, f"{first['msg']}{value}") from None
    impls = implementations(functions)
    session = cls(search=None, active=[])
    for where, step in _rebuild_steps(session, stored, impls):
        try:
            step()
        except ToolDefinitionError as exc:
            raise bad(f"{where}.{exc.field}", str(exc)) from None
        except DtlError as exc:
            raise bad(where, str(exc)) from None
    return session


def _all_bound(session: Any, impls: Mapping[str, Any]) -> None:
    """Every name given by hand binds a tool of the session: one that binds nothing is a typo."""
    unknown = [name for name in impls if name not in session.registry]
    if unknown:
        names = session.registry.names()
        raise InvalidArgumentError(
            f"functions[{unknown[0]!r}]: no tool of that name in the session (its tools: "
            f"{', '.join(names[:12])}{', …' if len(names) > 12 else ''})"
        )


def implementations(
    functions: Mapping[str, Callable[..., Any] | None] | Iterable[Tool],
) -> dict[str, Callable[..., Any] | None]:
    """Implementations by tool name, from a dict of name -> function or a list of Tools."""
    if isinstance(functions, Mapping):
        for name, function in functions.items():
            if not isinstance(name, str):
                raise type_error(f"functions[{shown(name)}]", "keyed by a tool name", name)
            if function is not None and not callable(function):
                raise type_error(f"functions[{name!r}]", "a function", function)
        return dict(functions)
    if isinstance(functions, str | bytes | Tool) or not isinstance(functions, Iterable):
        raise type_error(
            "functions", "a dict of tool name -> function, or a list of Tool objects", functions
        )
    tools = list(functions)
    for i, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            raise type_error(
                f"functions[{i}]",
                "a Tool (to re-bind by name, pass a dict of tool name -> function)",
                tool,
            )
    return {t.name: t.execute for t in tools if t.execute}


def _rebuild_steps(
    session: Any, stored: SessionFile, impls: Mapping[str, Callable[..., Any] | None]
) -> Iterator[tuple[str, Callable[[], object]]]:
    """Each rebuilding step with the JSON path it reads, so an error can name it."""
    for i, raw in enumerate(stored.tools):
        yield f"tools[{i}]", partial(_register, session, raw, stored.search, impls)
    for name, text in stored.sections.items():
        yield f"sections.{name}", partial(session.prompt.__setitem__, name, text)
    yield "search", partial(setattr, session, "search", stored.search)
    for i, message in enumerate(stored.messages):
        yield f"messages[{i}]", partial(session.append, message)
    for i, name in enumerate(stored.active):
        yield f"active[{i}]", partial(session.registry.get, name)
    yield "active", partial(session.restore_active_tools, stored.active, stored.declared_order)
    for i, spec in enumerate(stored.initial_tools):
        yield f"initial_tools[{i}]", partial(session.tool_set.records.pin_initial, spec)


def _register(
    session: Any,
    raw: dict[str, Any],
    search: str | None,
    impls: Mapping[str, Callable[..., Any] | None],
) -> None:
    spec = ToolSpec(**raw)
    if spec.name == TOOL_SEARCH and search and spec.name not in impls:
        tool = make_tool_search(session, search)
        if tool.spec() != spec:
            tool = Tool(**spec.model_dump(), execute=tool.execute)
    else:
        tool = Tool(**spec.model_dump(), execute=impls.get(spec.name))
    session.registry.register(tool)
