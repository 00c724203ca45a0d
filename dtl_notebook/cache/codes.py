"""The finding vocabulary: every code this package reports, one row each in `data/causes.json`.

A cache break (`BreakCause`) is a finding too: its code is the cause's code. Each row holds
the words, the part of the request it changed, the severity, the parts of the cache it
invalidates (in the provider's prefix order), the request setting it follows where it follows
one, and the fix: one text, or variants per model capability (`fix_for`). The analyzer, the
lint, the audit, the `codes` command and the view all read these rows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from dtl_notebook.cache.causes import BreakCause, Part
from dtl_notebook.wire.cache_limits import LOOKBACK_BLOCKS, MAX_CACHE_BREAKPOINTS

Severity = Literal["error", "warning", "info"]
# the figures the rows' words name, from the rules that apply them
_FIGURES = {"lookback": LOOKBACK_BLOCKS, "max_breakpoints": MAX_CACHE_BREAKPOINTS}


@dataclass(frozen=True)
class Code:
    """One finding code: what it means, how bad, what it invalidates, and the fix. `fixes`:
    (capability, fix) variants, the first one the model has wins; `fix` is the default.
    `expected`: the provider does this by design (nothing was done wrong)."""

    code: str
    severity: Severity
    invalidates: tuple[str, ...]
    message: str
    fix: str
    kind: Literal["break", "lint", "usage", "thread"] = "break"
    part: Part | None = None
    expected: bool = False
    fixes: tuple[tuple[str, str], ...] = ()
    settings: tuple[tuple[str, str], ...] = ()  # (provider, dotted path of the setting)

    def fix_for(self, capabilities: Collection[str]) -> str:
        """The fix a model with `capabilities` (see `capabilities`) can take."""
        return next((text for cap, text in self.fixes if cap in capabilities), self.fix)


def _row(row: dict[str, Any]) -> Code:
    fill = functools.partial(_fill, code=row["code"])
    fixes = row["fix"] if isinstance(row["fix"], dict) else {"default": row["fix"]}
    return Code(
        row["code"],
        row["severity"],
        tuple(row["invalidates"]),
        fill(row["message"]),
        fill(fixes["default"]),
        row["kind"],
        row.get("part"),
        bool(row.get("expected", False)),
        tuple((cap, fill(text)) for cap, text in fixes.items() if cap != "default"),
        tuple(row.get("settings", {}).items()),
    )


def _fill(text: str, code: str) -> str:
    try:
        return text.format_map(_FIGURES)
    except KeyError as missing:
        raise ValueError(f"causes.json {code}: unknown figure {missing} in {text!r}") from None


def _load() -> dict[str, Code]:
    text = resources.files("dtl_notebook.cache").joinpath("data/causes.json").read_text()
    codes = {row["code"]: _row(row) for row in json.loads(text)["causes"]}
    breaks = {c.code for c in codes.values() if c.kind == "break"}
    if breaks != {str(c) for c in BreakCause}:  # the enum names the rows' break codes
        raise ValueError(f"causes.json break rows differ from BreakCause: {sorted(breaks)}")
    return codes


CODES: dict[str, Code] = _load()


def code(name: str) -> Code:
    """The entry of a finding code; an unknown one raises KeyError listing the known ones."""
    try:
        return CODES[str(name)]
    except KeyError:
        raise KeyError(f"unknown finding code {name!r}; known: {', '.join(CODES)}") from None


def fix(name: str) -> str:
    """The one-line fix of a code (its default: for a model of unknown capabilities)."""
    return code(name).fix


@functools.cache
def capabilities(provider: str, model: str) -> frozenset[str]:
    """What a fix may count on: the provider's name and the model profile's true flags."""
    # the provider and model tables load only where a fix is chosen, not for `codes`
    from dtl_notebook.wire.profiles import profile_for
    from dtl_notebook.wire.providers import PROVIDERS

    if provider not in PROVIDERS or not model:
        return frozenset({provider})

    profile = profile_for(provider, model)[0]
    flags = {name for name, value in profile if value is True}
    return frozenset({provider, *flags})
