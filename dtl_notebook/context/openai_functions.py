"""How OpenAI's chat models see a function definition, for counting its tokens.

OpenAI renders function tools to the model as TypeScript-like declarations inside a
`namespace functions { ... }` block, not as the JSON of the request (the open `harmony` format
of gpt-oss models shows the layout). Their tokens follow the rule OpenAI's
cookbook "How to count tokens with tiktoken" publishes (`data/billing.json` "openai" "framing"
"function"): a fixed count per function plus its `name:description`, per property its
`key:type:description`, per enum value the value; a nested type (an array, an object) is
counted as its declaration (`key:string[]`, `key:{...}`), which the cookbook does not cover.
The model context keeps showing each definition's JSON; only its token count comes from here.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from dtl_notebook.context.collector import Collector
from dtl_notebook.context.media import billing

__all__ = [
    "answered_call",
    "count_as_declaration",
    "function_tokens",
    "per_message",
    "reply_priming",
    "tool_call_tokens",
    "tool_output_header",
]

_SCALARS = {"integer": "number", "number": "number", "string": "string", "boolean": "boolean"}


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


def _no_period(value: Any) -> str:
    text = str(value or "")
    return text[:-1] if text.endswith(".") else text


def function_tokens(function: dict[str, Any], count: Callable[[str], int]) -> int:
    """The cookbook's count of one function definition (the section's own tokens apart)."""
    rule = billing()["openai"]["framing"]["function"]
    name = function.get("name", "")
    tokens = int(rule["per_function"]) + count(f"{name}:{_no_period(function.get('description'))}")
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict) or not properties:
        return tokens
    tokens += int(rule["properties"])
    for key, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        tokens += int(rule["per_property"])
        if isinstance(prop.get("enum"), list):
            tokens += int(rule["enum"])
            tokens += sum(int(rule["per_enum_item"]) + count(str(v)) for v in prop["enum"])
        kind = prop.get("type")
        typed = kind if isinstance(kind, str) and kind in _SCALARS else _type(prop, 1)
        tokens += count(f"{key}:{typed}:{_no_period(prop.get('description'))}")
    return tokens


def count_as_declaration(out: Collector, function: dict[str, Any]) -> None:
    """Give the segment just added (a function definition's JSON) the token count of the
    declaration the model sees instead, by the cookbook's rule."""
    segment = out.segments[-1]
    tokens = function_tokens(function, lambda text: int(out.counter.count(text)))
    out.segments[-1] = dataclasses.replace(segment, tokens=tokens)


def per_message() -> int:
    """Framing tokens of one message: the cookbook's 3 plus the role's one token."""
    return int(billing()["openai"]["framing"]["per_message"])


def reply_priming(model: str) -> int:
    """Tokens that open the reply: 3 in the cookbook's format, 2 in harmony's."""
    rule = billing()["openai"]["framing"]
    if model.startswith(tuple(rule["harmony_models"])):
        return int(rule["harmony_reply_priming"])
    return int(rule["reply_priming"])


def tool_call_tokens(call: dict[str, Any], count: Callable[[str], int]) -> int:
    """An earlier tool call (its message framing apart): a message addressed to
    `functions.<name>` (`<namespace>.<name>`) whose content is the arguments."""
    arguments = call.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    namespace = call.get("namespace")
    scope = namespace if isinstance(namespace, str) and namespace else "functions"
    return count(f" to={scope}.{call.get('name', '')}") + count(text)


def tool_output_header(call: dict[str, Any], count: Callable[[str], int]) -> int:
    """Tokens a tool output's header adds beyond a plain message's framing: harmony authors it
    by the function it answers and addresses it back (`functions.<name> to=assistant`, in place
    of the one-token role)."""
    namespace = call.get("namespace")
    scope = namespace if isinstance(namespace, str) and namespace else "functions"
    return count(f"{scope}.{call.get('name', '')} to=assistant") - 1


def answered_call(items: list[Any], i: int, call_id: Any) -> dict[str, Any] | None:
    """The call that the tool output at `items[i]` answers (a Responses `function_call` item,
    or the `function` of a Chat Completions tool call), searched back from it: it is usually
    just before. None where the call is not in the history."""
    for j in range(i - 1, -1, -1):
        item = items[j]
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call" and item.get("call_id") == call_id:
            return item
        for call in item.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id") == call_id:
                function = call.get("function")
                return function if isinstance(function, dict) else None
    return None
