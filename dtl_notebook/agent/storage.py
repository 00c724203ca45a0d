"""Saving and loading sessions as versioned JSON."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from dtl_notebook.agent.errors import DtlError, SessionFileError
from dtl_notebook.agent.messages import MESSAGES
from dtl_notebook.agent.sections import Sections
from dtl_notebook.agent.tool_search import TOOL_SEARCH, make_tool_search
from dtl_notebook.agent.tools import Tool, ToolRegistry, ToolSpec


class Stored(Protocol):
    """What saving and loading need of a session (imports in agent/ run one way)."""

    search: str | None
    registry: ToolRegistry
    prompt: Sections
    messages: list[Any]

    @property
    def active_tools(self) -> list[str]: ...

    def set_active_tools(self, names: Iterable[str]) -> None: ...

    def activate(self, names: Iterable[str]) -> list[str]: ...


S = TypeVar("S", bound=Stored)

SCHEMA_VERSION = 1


def write_atomic(path: str | Path, content: str | bytes) -> Path:
    """Write through a temporary file in the same folder (text as UTF-8), flush and fsync,
    then rename it over the target: a kill or a full disk mid-write leaves the old file whole.
    """
    target = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
FORMAT = "dtl_notebook.session"


def dump_session(session: Stored) -> dict[str, Any]:
    """The session as plain JSON data."""
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "search": session.search,
        "tools": [t.spec().model_dump(exclude_none=True) for t in session.registry],
        "active": session.active_tools,
        "sections": session.prompt.copy(),
        "messages": MESSAGES.dump_python(session.messages, mode="json", exclude_none=True),
    }


def load_session(
    cls: Callable[..., S],
    path: Path,
    functions: Mapping[str, Callable[..., Any]] | Iterable[Tool],
) -> S:
    """Read and check a saved session; any problem raises SessionFileError naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {str(path)!r}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SessionFileError(f"session file {str(path)!r} is not valid JSON: {exc}") from None
    return session_from_dict(cls, data, functions, source=str(path))


def session_from_dict(
    cls: Callable[..., S],
    data: Any,
    functions: Mapping[str, Callable[..., Any]] | Iterable[Tool] = (),
    source: str = "<data>",
) -> S:
    """Rebuild a session from `dump_session` data."""

    def bad(reason: str) -> SessionFileError:
        return SessionFileError(f"session file {source!r}: {reason}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad(f'not a saved session (expected "format": "{FORMAT}")')
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise bad("missing or non-integer schema_version")
    if version > SCHEMA_VERSION:
        raise bad(
            f"schema_version {version} is newer than this dtl_notebook supports "
            f"({SCHEMA_VERSION}); upgrade dtl_notebook to load it"
        )
    impls = (
        dict(functions)
        if isinstance(functions, Mapping)
        else {t.name: t.execute for t in functions if t.execute}
    )
    try:
        specs = [ToolSpec.model_validate(t) for t in data["tools"]]
        messages = MESSAGES.validate_python(data["messages"])
        session = cls(search=None, sections=data["sections"], active=[])
        for spec in specs:
            if spec.name == TOOL_SEARCH and data["search"] and spec.name not in impls:
                tool = make_tool_search(session, data["search"])
                if tool.spec() != spec:
                    tool = Tool(**spec.model_dump(), execute=tool.execute)
            else:
                tool = Tool(**spec.model_dump(), execute=impls.get(spec.name))
            session.registry.register(tool)
        session.search = data["search"]
        session.set_active_tools(data["active"])
        session.messages = list(messages)
    except (KeyError, TypeError) as exc:
        raise bad(f"missing or malformed field {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise bad(f"invalid data at {where}: {first['msg']}") from None
    except DtlError as exc:
        raise bad(str(exc)) from None
    return session
