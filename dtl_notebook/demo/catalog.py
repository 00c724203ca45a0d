"""The demo catalog: about 200 namespaced tools across everyday business domains.

The definitions are data: data/catalog.json holds the one list of namespaces (with the line
the grouped catalog shows for each) and every tool's name, namespace, one-sentence description
and closed object schema, validated on first use. The tools the lessons call are written by
hand in `dtl_notebook.demo.tools` over the demo world (data/demo_world.json); every other
tool is answered by the deterministic, schema-typed fake of `dtl_notebook.demo.fake`. Each
`demo_catalog()` call gets its own state, so two catalogs answer the same call the same way
and never share state.

Well-known demo ids: order `order_42`, customer `cust_1001`, employee `emp_012`, invoice
`inv_5004`, ticket `tkt_1001`, product `SKU-1001`; weather works for ~30 cities including
Paris, Tokyo and New York.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from dtl_notebook.agent.tools import Tool
from dtl_notebook.demo.fake import fake_tool
from dtl_notebook.demo.records import World
from dtl_notebook.demo.tools import HAND_WRITTEN

DATA_FILE = "catalog.json"
_CORE_TOOLS = ("read_file", "list_files", "write_file", "search_knowledge_base")


class CatalogDataError(ValueError):
    """The catalog data file is malformed or disagrees with the implementations."""


class _Entry(BaseModel):
    """One tool definition in the data file."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str
    namespace: str
    description: str
    parameters: dict[str, Any]
    prompt_snippet: str | None = None
    prompt_guidelines: str | None = None


class _Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    namespaces: dict[str, str]
    tools: tuple[_Entry, ...]


def _problem(where: str, message: str) -> CatalogDataError:
    return CatalogDataError(f"{DATA_FILE}: {where}: {message}")


def parse_catalog(text: str) -> _Catalog:
    """Validate the data file's text: known namespaces, object schemas, unique names, and a
    signature matching the schema for every hand-written tool."""
    try:
        catalog = _Catalog.model_validate_json(text)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "<root>"
        raise _problem(f"field {field!r}", error["msg"]) from None
    seen: set[str] = set()
    for entry in catalog.tools:
        label = f"tool {entry.name!r}"
        if entry.namespace not in catalog.namespaces:
            raise _problem(f"{label}, field 'namespace'", f"unknown namespace {entry.namespace!r}")
        params = entry.parameters
        if params.get("type") != "object" or not isinstance(params.get("properties"), dict):
            raise _problem(f"{label}, field 'parameters'", "must be an object schema")
        if entry.name in seen:
            raise _problem(label, "defined twice")
        seen.add(entry.name)
        if entry.name in HAND_WRITTEN:
            _check_signature(entry, HAND_WRITTEN[entry.name])
    missing = sorted(set(HAND_WRITTEN) - seen)
    if missing:
        raise _problem("tools", f"no definition for the hand-written tools {missing}")
    return catalog


def _arguments(fn: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The tool arguments of an implementation (a leading `world` is bound by the catalog)."""
    parameters = dict(inspect.signature(fn).parameters)
    parameters.pop("world", None)
    return parameters


def _check_signature(entry: _Entry, fn: Callable[..., Any]) -> None:
    """Same arguments in the same order, required exactly when without a default, scalar
    defaults copied into the schema."""
    label = f"tool {entry.name!r}, field 'parameters'"
    properties: dict[str, Any] = entry.parameters["properties"]
    signature = _arguments(fn)
    if list(signature) != list(properties):
        raise _problem(label, f"properties {list(properties)} != signature {list(signature)}")
    required = [a for a, p in signature.items() if p.default is inspect.Parameter.empty]
    if entry.parameters.get("required", []) != required:
        raise _problem(label, f"required {entry.parameters.get('required')} != {required}")
    for arg, param in signature.items():
        default = param.default
        if isinstance(default, str | int | float | bool) and (
            properties[arg].get("default") != default
            or type(properties[arg].get("default")) is not type(default)
        ):
            where = f"tool {entry.name!r}, field 'parameters.properties.{arg}.default'"
            raise _problem(where, f"must be {default!r}, the implementation's default")


@functools.cache
def _catalog() -> _Catalog:
    """The validated definitions, read once from the package data."""
    text = resources.files("dtl_notebook.demo").joinpath("data", DATA_FILE).read_text("utf-8")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise _problem(f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from None
    return parse_catalog(text)


def namespaces() -> tuple[str, ...]:
    """The catalog's namespaces, in the data file's order."""
    return tuple(_catalog().namespaces)


def demo_group_summaries() -> dict[str, str]:
    """One line per namespace for the grouped catalog."""
    return dict(_catalog().namespaces)


def core_tool_names() -> list[str]:
    """A few always-useful tools an agent may keep active from the start."""
    return list(_CORE_TOOLS)


def _implementation(entry: _Entry, world: World) -> Callable[..., Any]:
    fn = HAND_WRITTEN.get(entry.name)
    if fn is None:
        return fake_tool(entry.name, entry.namespace, entry.description, entry.parameters)
    return functools.partial(fn, world) if "world" in inspect.signature(fn).parameters else fn


def demo_catalog() -> list[Tool]:
    """A fresh catalog of ~200 namespaced, deterministic tools with their own state."""
    world = World()
    return [
        Tool(
            name=entry.name,
            description=entry.description,
            parameters=copy.deepcopy(entry.parameters),
            prompt_snippet=entry.prompt_snippet,
            prompt_guidelines=entry.prompt_guidelines,
            execute=_implementation(entry, world),
            namespace=entry.namespace,
        )
        for entry in _catalog().tools
    ]


__all__ = [
    "CatalogDataError",
    "core_tool_names",
    "demo_catalog",
    "demo_group_summaries",
    "namespaces",
    "parse_catalog",
]
