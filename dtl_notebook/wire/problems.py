"""The first problem a rule scan records, and the helpers the rule scans share
(`wire.rules`, `wire.openai_rules`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from dtl_notebook.wire.shape_errors import Path, fail, format_path


@dataclass(frozen=True, slots=True)
class Problem:
    """The first rule a body breaks: where (a JSON path) and why."""

    path: Path
    message: str

    def __deepcopy__(self, memo: dict[int, Any]) -> Problem:
        return self  # immutable: a copied scan state shares it

    def raise_for(self, provider: str) -> NoReturn:
        fail(provider, self.path, self.message)


def raise_first(provider: str, problem: Problem | None) -> None:
    """Raise `problem` (the first a scan recorded) as the request's error, if there is one."""
    if problem is not None:
        problem.raise_for(provider)


def dict_items(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index, item)`` for the dict items of a list (anything else yields nothing)."""
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def as_list(items: Any) -> list[Any]:
    """A body's message (or input) list as a list to scan; anything else as empty."""
    if isinstance(items, tuple):
        return list(items)
    return items if isinstance(items, list) else []


def first_duplicate(prefix: Path, named: Iterable[tuple[int, Any]], what: str) -> Problem | None:
    """The second occurrence of a name; `named` holds (index under prefix, name)."""
    first: dict[str, int] = {}
    for i, name in named:
        if not isinstance(name, str):
            continue
        if name in first:
            where = format_path((*prefix, first[name]))
            return Problem((*prefix, i), f"duplicate {what} {name!r} (first at {where})")
        first[name] = i
    return None
