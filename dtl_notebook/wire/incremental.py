"""Incremental shape validation: a new request validates only the items it adds.

A request body repeats its history: every message, input item and tool of request N is in
request N+1. Each list field of the root type (``messages``, ``input``, ``tools``, ...) is
checked item by item against its item type, and the items of a recently accepted list that
come back unchanged are not validated again. "Unchanged" is an exact comparison with a copy
taken when the item was validated: numbers and booleans must match in type as well as value
(``1``, ``1.0`` and ``True`` are equal in Python but not to a validator), and an item holding
anything but plain JSON values (dict, list, str, int, float, bool, None) is never remembered.
A read-only item (:mod:`dtl_notebook._reuse.frozen`, e.g. a tool definition a builder shares
between requests) is its own copy: it cannot change, so finding the same object again is
enough, and costs nothing; its `==` is exact too, so a whole list is compared at once
(`shared_prefix`).
The other top-level keys are validated every time.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import operator
from typing import Any

import typing_extensions as te

from dtl_notebook._reuse.frozen import (
    FROZEN,
    FrozenDict,
    FrozenList,
    built_list,
    exact_copy,
    identical_run,
    shared_prefix,
)
from dtl_notebook._reuse.registry import Memo, active
from dtl_notebook.wire.schema import is_valid, root_type, schema, schema_of
from dtl_notebook.wire.shape_errors import origin, union_members

LISTS_PER_FIELD = 4  # recently accepted lists remembered per root type and field
# items past a list's identical run that it may still share with the next (the open last
# message, an item a breakpoint marks): beyond that, the next list is another lineage's
OPEN_ITEMS = 4


@dataclasses.dataclass(frozen=True)
class _Accepted:
    """An accepted list's items as remembered. The first `settled` are frozen values kept
    themselves: a later list repeating them is matched by identity alone."""

    items: list[Any] = dataclasses.field(default_factory=list)
    settled: int = 0


# (root, field) -> the lists accepted lately, newest first (bounded per key and in all)
_ACCEPTED = Memo("accepted lists")


@functools.cache
def item_fields(root: str) -> dict[str, Any]:
    """``{field: item type}`` for the root's fields that hold a list (an ``Iterable[X]``)."""
    fields: dict[str, Any] = {}
    for name, hint in te.get_type_hints(root_type(root), include_extras=True).items():
        while origin(hint) in (te.Required, te.NotRequired, te.Annotated):
            hint = te.get_args(hint)[0]
        items = [
            te.get_args(m)[0]
            for m in union_members(hint)
            if origin(m) in (collections.abc.Iterable, list) and te.get_args(m)
        ]
        if len(items) == 1:
            fields[name] = items[0]
    return fields


def accepts(root: str, payload: dict[str, Any]) -> bool:
    """Whether ``payload`` passes the root type, validating only items not seen before.

    ``False`` means "not shown valid here": the caller validates from scratch, which gives
    the canonical error (or accepts).
    """
    fields = {f: t for f, t in item_fields(root).items() if isinstance(payload.get(f), list)}
    if not is_valid(schema(root), {**payload, **{key: [] for key in fields}}):
        return False
    accepted: dict[str, _Accepted] = {}
    others: dict[str, tuple[_Accepted, ...]] = {}  # the other recent lists, where one was taken
    for field, item_type in fields.items():
        items: list[Any] = payload[field]
        accepted_before = _recent(root, field, items)
        known = accepted_before.items
        item_schema = None
        same = shared_prefix(items, known)  # at C speed where they are the same objects
        # past the identical run, an equal frozen item replaces its remembered copy
        settled = identical_run(items, known, min(accepted_before.settled, same))
        remembered: list[Any] = []  # the items past `settled`, as remembered
        i = settled
        while i < len(items):
            item = items[i]
            if i < same and item is known[i]:
                # a run of remembered values themselves (immutable: the copies are private),
                # e.g. a shared catalog after tools made anew, taken at C speed
                run = list(map(operator.is_, items[i:same], known[i:same]))
                end = i + run.index(False) if False in run else same
                remembered += items[i:end]
                i = end
                continue
            if i < same or (i < len(known) and item == known[i]):
                # an equal item frozen since is kept itself: later lists match it by identity;
                # a plain one equal to a frozen one is kept as a plain copy, so that parsed
                # bodies keep a lineage of their own (`_recent`)
                if type(item) in FROZEN:
                    remembered.append(item)
                elif type(known[i]) in FROZEN:
                    remembered.append(exact_copy(item))
                else:
                    remembered.append(known[i])
            else:
                item_schema = item_schema or schema_of(item_type)
                if not is_valid(item_schema, item):
                    return False
                remembered.append(exact_copy(item))
            i += 1
        recent: tuple[_Accepted, ...] = _ACCEPTED.get((root, field), ()) if active() else ()
        if (
            len(known) - settled <= OPEN_ITEMS  # this list's own lineage, grown
            and recent
            and recent[0] is accepted_before
            and _ACCEPTED.take((root, field), recent)
        ):
            # the newest list goes on as this one, cut back and extended in place (not copied)
            others[field] = recent[1:]
            del known[settled:]
            known += remembered
            remembered = known
        else:
            remembered = known[:settled] + remembered
        while settled < len(remembered) and type(remembered[settled]) in (FrozenDict, FrozenList):
            settled += 1
        accepted[field] = _Accepted(remembered, settled)
    if active():
        for field, kept in accepted.items():
            before = others[field] if field in others else _ACCEPTED.get((root, field), ())
            _ACCEPTED.put((root, field), (kept, *before[: LISTS_PER_FIELD - 1]))
    return True


def _recent(root: str, field: str, items: list[Any]) -> _Accepted:
    """The most recent accepted list of this field that starts like ``items``."""
    recent: tuple[_Accepted, ...] = _ACCEPTED.get((root, field), ()) if active() else ()
    if not items:
        return _Accepted()
    for accepted in recent:  # the same lineage first: its items are compared by identity
        known = accepted.items
        n = min(len(known), len(items))
        if n and items[0] is known[0] and items[n - 1] is known[n - 1]:
            return accepted
    # then one of the same lineage (built here, or parsed: see `frozen.built_here`), whose equal
    # items compare at C speed, before one of the other
    built = built_list(items)
    ordered = sorted(recent, key=lambda a: built_list(a.items) != built)
    return next((a for a in ordered if a.items and items[0] == a.items[0]), _Accepted())
