"""The provider table's behaviour columns: how each provider caches, reports and is called.

`data/provider_traits.json` holds them, one row per row of `data/providers.json` (its `_doc`
says what each column means); a reader asks `traits(provider)` instead of naming a provider,
so a new provider's quirks are one more row, not another branch.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from dtl_notebook.wire.providers import spec

__all__ = ["ProviderTraits", "marked_provider", "traits"]


@dataclass(frozen=True)
class ProviderTraits:
    """One provider's behaviour columns (see `data/provider_traits.json` `_doc`)."""

    name: str
    cache_marks: str  # "breakpoints" (cache_control blocks) or "automatic"
    settings_cached_after: str | None  # the part the cached-on settings sit in front of
    diagnosis: str | None  # the provider's own cache-miss diagnosis, by style
    diagnosis_reasons: dict[str, str] | None  # request part -> its reason word
    usage_split: tuple[str, str, str] | None  # (cached, written, uncached) usage fields
    usage_details: tuple[str, str] | None  # (the object holding cached_tokens, input total)
    key_header: str  # "x-api-key" or "bearer"
    smallest_answer: tuple[str, int]  # the output-length field and its least value
    older_answer_field: str | None  # a deprecated name of that field it still takes
    retention: str  # the entry of cache/data/retention.json
    harmony: str | None  # "responses" or "chat": how the harmony renderer walks it
    harmony_note: str | None
    native_growth_effect: str | None
    body_signs: tuple[dict[str, Any], ...]  # what a body written for it shows (body_signs.py)

    @property
    def marks_breakpoints(self) -> bool:
        """Whether its requests mark the cached prefix with cache_control blocks."""
        return self.cache_marks == "breakpoints"


@functools.cache
def _table() -> dict[str, ProviderTraits]:
    text = files(__package__).joinpath("data/provider_traits.json").read_text("utf-8")
    rows = {name: row for name, row in json.loads(text).items() if not name.startswith("_")}
    return {name: _row(name, row) for name, row in rows.items()}


def _row(name: str, row: dict[str, Any]) -> ProviderTraits:
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()}
    return ProviderTraits(name=name, **fields)


def traits(provider: object) -> ProviderTraits:
    """The behaviour columns of `provider`: UnknownProviderError for a name not in the table,
    a LookupError naming the file for a provider whose row is missing there."""
    name = spec(provider).name
    try:
        return _table()[name]
    except KeyError:
        raise LookupError(
            f"provider {name!r} has no row in wire/data/provider_traits.json"
        ) from None


def marked_provider() -> ProviderTraits:
    """The first provider whose requests carry cache_control breakpoints (whose `ttl` a mark
    names)."""
    return next(row for row in _table().values() if row.marks_breakpoints)
