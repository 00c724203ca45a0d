"""Emulated models: deterministic policies, labelled "emulated, not an LLM".

A policy sees only a View (the tools in its model context and the current turn) and returns
the next action. It never calls a tool outside its context, so a broken load shows up as a
failed demo rather than a hidden one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.agent.search import tokenize
from dtl_notebook.live.emulator.request_view import View, VisibleTool
from dtl_notebook.wire.search_tools import SEARCH_TOOL_NAMES

LABEL = "emulated, not an LLM"
STOPWORDS = set(
    "a an and are as at be by can could do does for from get give how i in is it me my of on "
    "or please show tell that the this to use what when where which who why will with would "
    "you your find look up current today now".split()
)
_ID = re.compile(r"\b[a-zA-Z]+_[a-zA-Z0-9]+\b")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_PLACE = re.compile(r"\b(?:in|for|at|to|from)\s+((?:[A-Z][a-zA-Z]+)(?:\s+[A-Z][a-zA-Z]+)*)")
_PATH = re.compile(r"\b[\w./-]+\.[a-z0-9]{1,5}\b")


@dataclass(frozen=True)
class Answer:
    text: str


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Search:
    query: str


Action = Answer | Call | Search


class Policy(Protocol):
    """Decides the next action of an emulated model from what its context holds."""

    name: str

    def decide(self, view: View) -> Action: ...


def words(text: str) -> set[str]:
    return {w for w in tokenize(text) if w not in STOPWORDS and len(w) > 1}


def _score(tool: VisibleTool, task_words: set[str]) -> int:
    name = words(tool.name)
    rest = words(tool.description) | {
        w for p in tool.parameters.get("properties", {}) for w in words(p)
    }
    return 3 * len(task_words & name) + len(task_words & rest)


def fill_arguments(tool: VisibleTool, text: str) -> dict[str, Any]:
    """Arguments for a tool from the user's text and the tool's schema, deterministically."""
    props: dict[str, Any] = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or [])
    numbers = [float(n) for n in _NUMBER.findall(_DATE.sub(" ", text))]
    ids = _ID.findall(text)
    out: dict[str, Any] = {}
    for name, schema in props.items():
        if _nullable(schema):
            # how strict tools declare an optional parameter (required, null allowed): a model
            # that has nothing for it sends null
            if name in required:
                out[name] = None
            continue
        value = _value(name, schema if isinstance(schema, dict) else {}, text, numbers, ids)
        if value is not None and (name in required or _mentioned(name, value, text)):
            out[name] = value
    return out


def _nullable(schema: Any) -> bool:
    """Whether a parameter's schema is a union with null (`anyOf: [{...}, {"type": "null"}]`)."""
    options = schema.get("anyOf") if isinstance(schema, dict) else None
    return isinstance(options, list) and any(
        isinstance(o, dict) and o.get("type") == "null" for o in options
    )


def _mentioned(name: str, value: Any, text: str) -> bool:
    return isinstance(value, str) and value in text and name not in ("query", "text")


def _value(
    name: str, schema: dict[str, Any], text: str, numbers: list[float], ids: list[str]
) -> Any:
    kind = schema.get("type")
    lowered = text.lower()
    if "enum" in schema:
        options = schema["enum"]
        return next(
            (o for o in options if str(o).lower() in lowered), schema.get("default", options[0])
        )
    if kind in ("number", "integer"):
        if not numbers:
            return schema.get("default", 0)
        value = numbers.pop(0)
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return bool(schema.get("default", False))
    if kind == "array":
        if (schema.get("items") or {}).get("type") in ("number", "integer"):
            values, numbers[:] = list(numbers), []
            return values
        return []
    if kind not in (None, "string"):
        return schema.get("default")
    key = name.lower()
    if key.endswith("id") or key.endswith("_id"):
        prefix = key.removesuffix("_id").removesuffix("id").split("_")[-1]
        match = next((i for i in ids if i.lower().startswith(prefix[:4])), None)
        return match or (ids[0] if ids else "")
    if "date" in key or key in ("day", "when"):
        dates = _DATE.findall(text)
        return dates[0] if dates else schema.get("default", "")
    if "email" in key:
        emails = _EMAIL.findall(text)
        return emails[0] if emails else ""
    if key in ("city", "location", "place", "destination", "origin", "country") or "city" in key:
        places = _PLACE.findall(text)
        return places[0] if places else ""
    if "path" in key or "file" in key:
        paths = _PATH.findall(text)
        return paths[0] if paths else ""
    return text.strip()


class KeywordPolicy:
    """Calls the best-matching visible tool, else searches, then answers from the results."""

    name = "keyword"

    def __init__(self, min_score: int = 2, max_searches: int = 2) -> None:
        checks.positive_int(min_score, "min_score", 0)
        checks.positive_int(max_searches, "max_searches", 0)
        self.min_score = min_score
        self.max_searches = max_searches

    def decide(self, view: View) -> Action:
        done = [e for e in view.events if e.name not in SEARCH_TOOL_NAMES and e.result is not None]
        if done:
            return Answer(_summary(done))
        task_words = words(view.task)
        ranked = sorted(
            ((_score(t, task_words), i, t) for i, t in enumerate(view.callable_tools())),
            key=lambda x: (-x[0], x[1]),
        )
        if ranked and ranked[0][0] >= self.min_score:
            tool = ranked[0][2]
            return Call(tool.name, fill_arguments(tool, view.task))
        searches = sum(1 for e in view.events if e.name in SEARCH_TOOL_NAMES)
        if view.search and searches < self.max_searches:
            return Search(" ".join(sorted(task_words, key=view.task.lower().find)) or view.task)
        return Answer(f"({LABEL}) I have no tool in my context for: {view.task}")


def _summary(events: list[Any]) -> str:
    parts = [f"{e.name} returned {e.result}" for e in events]
    return f"({LABEL}) " + "; ".join(parts)


class ScriptedPolicy:
    """Plays a fixed list of steps, one per request: {"text": …}, {"call": name,
    "arguments": {…}} or {"search": query}. A call to a tool outside the context is refused."""

    name = "scripted"

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        if isinstance(steps, str | bytes | dict) or not isinstance(steps, list | tuple):
            raise checks.type_error("steps", "a list of step dicts", steps)
        for i, step in enumerate(steps):
            _check_step(step, f"steps[{i}]")
        self.steps = list(steps)
        self.position = 0

    def decide(self, view: View) -> Action:
        if self.position >= len(self.steps):
            return Answer(f"({LABEL}) script finished")
        step = self.steps[self.position]
        self.position += 1
        if "search" in step:
            return Search(str(step["search"]))
        if "call" in step:
            name = str(step["call"])
            if name not in view.tools:
                return Answer(
                    f"({LABEL}) I cannot call {name!r}: it is not in my context "
                    f"(visible: {', '.join(sorted(view.tools)) or 'none'})"
                )
            return Call(name, dict(step.get("arguments") or {}))
        return Answer(str(step.get("text", "")))


def _check_step(step: Any, param: str) -> None:
    """A scripted step holds exactly one of text, call or search, with the right types."""
    if not isinstance(step, dict):
        raise checks.type_error(param, 'a dict like {"text": ...}, {"call": ...}', step)
    kinds = [k for k in ("text", "call", "search") if k in step]
    extra = set(step) - {"text", "call", "search", "arguments"}
    if len(kinds) != 1 or extra or ("arguments" in step and kinds != ["call"]):
        raise InvalidArgumentError(
            f"{param} must hold exactly one of 'text', 'call' or 'search' (and 'arguments' only "
            f"with 'call'), got {checks.shown(step)}"
        )
    checks.text(step[kinds[0]], f"{param}[{kinds[0]!r}]", empty=kinds[0] == "text")
    if "arguments" in step:
        checks.mapping(step["arguments"], f"{param}['arguments']")
        checks.finite_json(step["arguments"], f"{param}['arguments']")
