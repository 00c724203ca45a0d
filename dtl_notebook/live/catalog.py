"""A realistic demo catalog: about 200 working tools across everyday business domains.

Every tool carries a namespace (its domain), a one-sentence description, and an object schema
whose arguments are all described and which forbids extra arguments. The definitions are data,
in data/demo_catalog.json (validated on load); the behaviour lives in the `demo_tools` package,
one module per domain with one implementation registered under each tool's name, and its fake
data in data/demo_world.json; both are loaded on the first `demo_catalog()` call.
Implementations are deterministic, and each `demo_catalog()` call gets its own state, so two
catalogs answer the same call the same way and never share state.

Well-known demo ids: order `order_42`, customer `cust_1001`, employee `emp_012`, invoice
`inv_5004`, ticket `tkt_1001`, product `SKU-1001`; weather works for ~30 cities including
Paris, Tokyo and New York.
"""

from __future__ import annotations

import copy
import inspect
import json
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from dtl_notebook.agent.tools import Tool

if TYPE_CHECKING:
    from dtl_notebook.live.demo_tools.registry import Fn

CATALOG_DOMAINS: tuple[str, ...] = (
    "weather",
    "shipping",
    "crm",
    "billing",
    "files",
    "calendar",
    "maths",
    "units",
    "time",
    "currency",
    "travel",
    "support",
    "hr",
    "inventory",
    "email",
    "notes",
    "knowledge",
    "geography",
    "text",
    "data",
)

_CORE_TOOLS = ["read_file", "list_files", "write_file", "search_knowledge_base"]
_DATA_FILE = "demo_catalog.json"


def core_tool_names() -> list[str]:
    """A few always-useful tools an agent may keep active from the start."""
    return list(_CORE_TOOLS)


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


def _problem(where: str, message: str) -> CatalogDataError:
    return CatalogDataError(f"{_DATA_FILE}: {where}: {message}")


def _entries(raw: Any) -> list[_Entry]:
    """Validate the parsed data file: a {"tools": [...]} object of well-formed definitions."""
    if not isinstance(raw, dict) or set(raw) != {"tools"} or not isinstance(raw["tools"], list):
        raise _problem("<root>", 'expected an object {"tools": [...]}')
    entries: list[_Entry] = []
    for index, item in enumerate(raw["tools"]):
        name = item.get("name") if isinstance(item, dict) else None
        label = f"tool #{index} {name!r}" if isinstance(name, str) else f"tool #{index}"
        try:
            entry = _Entry.model_validate(item)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"]) or "<entry>"
            raise _problem(f"{label}, field {field!r}", error["msg"]) from None
        if entry.namespace not in CATALOG_DOMAINS:
            raise _problem(f"{label}, field 'namespace'", f"unknown domain {entry.namespace!r}")
        params = entry.parameters
        if params.get("type") != "object" or not isinstance(params.get("properties"), dict):
            raise _problem(f"{label}, field 'parameters'", "must be an object schema")
        entries.append(entry)
    names = [e.name for e in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _problem("tools", f"duplicate tool names: {', '.join(duplicates)}")
    return entries


def _check_signature(entry: _Entry, fn: Fn) -> None:
    """The implementation's signature must match the schema: same arguments in the same
    order, required exactly when without a default, scalar defaults copied into the schema."""
    label = f"tool {entry.name!r}, field 'parameters'"
    properties: dict[str, Any] = entry.parameters["properties"]
    signature = inspect.signature(fn).parameters
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


def _implementations() -> dict[str, tuple[str, Fn]]:
    """A fresh set of implementations; the demo_tools package is imported on first use."""
    from dtl_notebook.live.demo_tools.builders import implementations

    return implementations()


@lru_cache(maxsize=1)
def _definitions() -> tuple[_Entry, ...]:
    """The validated tool definitions, read once from the package data."""
    text = resources.files("dtl_notebook.live").joinpath("data", _DATA_FILE).read_text("utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _problem(f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from None
    entries = _entries(raw)
    impls = _implementations()
    missing = [e.name for e in entries if e.name not in impls]
    extra = [n for n in impls if n not in {e.name for e in entries}]
    if missing or extra:
        raise _problem("tools", f"no implementation for {missing}; no definition for {extra}")
    for entry in entries:
        namespace, fn = impls[entry.name]
        if namespace != entry.namespace:
            raise _problem(f"tool {entry.name!r}, field 'namespace'", f"expected {namespace!r}")
        _check_signature(entry, fn)
    return tuple(entries)


def demo_catalog() -> list[Tool]:
    """A fresh catalog of ~200 namespaced, deterministic tools with their own state."""
    impls = _implementations()
    return [
        Tool(
            name=entry.name,
            description=entry.description,
            parameters=copy.deepcopy(entry.parameters),
            prompt_snippet=entry.prompt_snippet,
            prompt_guidelines=entry.prompt_guidelines,
            execute=impls[entry.name][1],
            namespace=entry.namespace,
        )
        for entry in _definitions()
    ]


__all__ = ["CATALOG_DOMAINS", "CatalogDataError", "core_tool_names", "demo_catalog"]
