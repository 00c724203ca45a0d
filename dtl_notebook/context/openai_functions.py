"""How OpenAI's chat models see a function definition, for counting its tokens.

OpenAI renders function tools to the model as TypeScript-like declarations inside a
`namespace functions { ... }` block, not as the JSON of the request (the layout is described in
OpenAI's cookbook token-counting notebook and in the open `harmony` format of gpt-oss models;
the fitted constants in `data/calibration.json` cover the namespace wrapper and framing). The
model context keeps showing each definition's JSON; only its token count comes from here.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from dtl_notebook.context.collector import Collector

__all__ = ["count_as_declaration", "function_declaration"]

_SCALARS = {"integer": "number", "number": "number", "string": "string", "boolean": "boolean"}


def function_declaration(function: dict[str, Any]) -> str:
    """`// description` + `type name = (_: {...}) => any;` for one function definition."""
    lines = [f"// {line}" for line in str(function.get("description") or "").splitlines()]
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    name = function.get("name", "")
    if not properties:
        lines.append(f"type {name} = () => any;")
    else:
        lines.append(f"type {name} = (_: {_object(parameters, 0)}) => any;")
    return "\n".join(lines)


def _object(schema: dict[str, Any], depth: int) -> str:
    indent = "  " * depth
    required = set(schema.get("required") or [])
    body: list[str] = []
    for key, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        if prop.get("description"):
            body.extend(f"{indent}// {line}" for line in str(prop["description"]).splitlines())
        optional = "" if key in required else "?"
        body.append(f"{indent}{key}{optional}: {_type(prop, depth + 1)},")
    return "{\n" + "\n".join(body) + f"\n{indent}}}"


def _type(schema: dict[str, Any], depth: int) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_type({**schema, "type": k}, depth) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"{_type(items, depth) if isinstance(items, dict) else 'any'}[]"
    if kind == "object" and schema.get("properties"):
        return _object(schema, depth)
    if kind == "null":
        return "null"
    return _SCALARS.get(str(kind), "any")


def count_as_declaration(out: Collector, function: dict[str, Any]) -> None:
    """Give the segment just added (a function definition's JSON) the token count of the
    declaration the model sees instead."""
    segment = out.segments[-1]
    tokens = int(out.counter.count(function_declaration(function)))
    out.segments[-1] = dataclasses.replace(segment, tokens=tokens)
