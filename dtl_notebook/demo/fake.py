"""One deterministic, schema-typed answer for every demo tool that is not written by hand.

`result_shape(definition)` derives the JSON Schema of a tool's results from its definition:
every result names the tool, echoes the arguments (defaults filled in, so the echo validates
against the tool's own parameters), carries a record id and a one-line summary from the
description, and one part chosen by the kind of tool its name and namespace tell:
a list of `items` (list_/search_/find_/suggest_ tools), a computed `value` (the maths, units,
currency, time, geography, text and data namespaces), a `status` (tools that create, change,
cancel or delete something), or a `record` of fields (the lookups). `fake_result` fills that
shape from a stable hash of the tool name and the arguments, so the same call always gets
the same answer, in every process.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from typing import Any

from dtl_notebook.demo.derive import pick, stable_hash, unit

J = dict[str, Any]
COLLECTION_VERBS = frozenset({"list", "search", "find", "suggest"})
NUMERIC_NAMESPACES = frozenset({"maths", "units", "currency", "geography"})
TEXT_NAMESPACES = frozenset({"time", "text", "data"})
STATUS_BY_VERB = {
    **dict.fromkeys(
        "create add book request log issue generate write reserve render".split(), "created"
    ),
    **dict.fromkeys(
        "update append reschedule assign escalate adjust tag mark apply transfer move copy".split(),
        "updated",
    ),
    "cancel": "cancelled",
    "delete": "deleted",
}
ID = {"type": "string", "pattern": "^[a-z0-9_-]+$"}
ID_CHARACTERS = frozenset(string.ascii_lowercase + string.digits + "_-")
WORDS = "alpha amber birch cedar delta ember fjord granite harbor indigo juniper".split()


def kind_of(name: str, namespace: str) -> str:
    """items, value, status or record: what part a tool's results carry."""
    verb = name.split("_")[0]
    if verb in COLLECTION_VERBS:
        return "items"
    if namespace in NUMERIC_NAMESPACES | TEXT_NAMESPACES:
        return "value"
    return "status" if verb in STATUS_BY_VERB else "record"


def result_shape(name: str, namespace: str, parameters: J) -> J:
    """The JSON Schema every fake result of this tool validates against."""
    properties: J = {
        "tool": {"const": name},
        "arguments": parameters,
        "id": ID,
        "summary": {"type": "string", "minLength": 1},
    }
    kind = kind_of(name, namespace)
    if kind == "items":
        item = {
            "type": "object",
            "properties": {"id": ID, "name": {"type": "string"}, "score": {"type": "number"}},
            "required": ["id", "name", "score"],
            "additionalProperties": False,
        }
        properties["items"] = {"type": "array", "items": item, "minItems": 1, "maxItems": 5}
    elif kind == "value":
        numeric = namespace in NUMERIC_NAMESPACES
        properties["value"] = {"type": "number"} if numeric else {"type": "string"}
    elif kind == "status":
        properties["status"] = {"const": STATUS_BY_VERB[name.split("_")[0]]}
    else:
        fields = {"type": "string", "minLength": 1}
        properties["record"] = {"type": "object", "additionalProperties": fields}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _with_defaults(parameters: J, arguments: J) -> J:
    defaults = {
        key: spec["default"]
        for key, spec in (parameters.get("properties") or {}).items()
        if isinstance(spec, dict) and "default" in spec and key not in arguments
    }
    return {**arguments, **defaults}


def _record_id(name: str, namespace: str, arguments: J, seed: int) -> str:
    """The id the call names (its first *_id argument, folded to the id alphabet), else one
    made from the namespace and the seed."""
    for key, value in arguments.items():
        if key.endswith("_id") and isinstance(value, str):
            folded = "".join(c if c in ID_CHARACTERS else "_" for c in value.strip().lower())
            if folded:
                return folded
    return f"{namespace}_{seed % 100_000:05d}"


def fake_result(name: str, namespace: str, description: str, parameters: J, arguments: J) -> J:
    """The deterministic answer of one call, shaped as `result_shape` says."""
    seed = stable_hash(name, json.dumps(arguments, sort_keys=True, ensure_ascii=False))
    echo = _with_defaults(parameters, arguments)
    out: J = {
        "tool": name,
        "arguments": echo,
        "id": _record_id(name, namespace, arguments, seed),
        "summary": f"{description.rstrip('.')} (generated demo answer).",
    }
    kind = kind_of(name, namespace)
    noun = " ".join(name.split("_")[1:]) or name
    if kind == "items":
        count = 1 + seed % 5
        out["items"] = [
            {
                "id": f"{namespace}_{stable_hash(seed, i) % 100_000:05d}",
                "name": f"{pick(WORDS, seed, i, 'word')} {noun}".strip(),
                "score": round(1 - i / (count + 1) - unit(seed, i) / (4 * (count + 1)), 3),
            }
            for i in range(count)
        ]
    elif kind == "value":
        if namespace in NUMERIC_NAMESPACES:
            out["value"] = round(unit(seed, "value") * 1000, 4)
        else:
            out["value"] = f"{pick(WORDS, seed, 'value')}-{seed % 10_000:04d}"
    elif kind == "status":
        out["status"] = STATUS_BY_VERB[name.split("_")[0]]
    else:
        out["record"] = {
            "name": f"{pick(WORDS, seed, 'name')} {noun}".strip(),
            "reference": f"{namespace.upper()}-{seed % 1_000_000:06d}",
        }
    return out


def fake_tool(name: str, namespace: str, description: str, parameters: J) -> Callable[..., J]:
    """The implementation of a tool with no hand-written one: `fake_result` for its calls."""

    def answer(**arguments: Any) -> J:
        return fake_result(name, namespace, description, parameters, arguments)

    answer.__name__ = name
    answer.__qualname__ = f"fake_tool.<{name}>"
    return answer
