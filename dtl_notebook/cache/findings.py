"""A finding: one code of the vocabulary (`codes.CODES`), where it was found and what."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dtl_notebook.cache.codes import Code, code
from dtl_notebook.cache.explain import CacheBreak


@dataclass(frozen=True)
class Finding:
    """A code found at `where` (a payload path, `@offset` inside it), in request `index` of a
    conversation (None: a single request), with what it involves; `capabilities`: the
    model's (`codes.capabilities`), which pick the fix it can take."""

    code: str
    where: str | None = None
    involved: list[str] = field(default_factory=list)
    index: int | None = None
    conversation: str | None = None
    lost_tokens: int = 0
    capabilities: frozenset[str] = frozenset()

    @property
    def entry(self) -> Code:
        return code(self.code)

    @property
    def severity(self) -> str:
        return self.entry.severity

    @property
    def message(self) -> str:
        return self.entry.message

    @property
    def fix(self) -> str:
        return self.entry.fix_for(self.capabilities)

    @property
    def expected(self) -> bool:
        return self.entry.expected

    def __str__(self) -> str:
        what = f" ({', '.join(self.involved)})" if self.involved else ""
        at = f" at {self.where}" if self.where else ""
        return f"{self.code}: {self.message}{what}{at}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
            "where": self.where,
            "involved": list(self.involved),
            "index": self.index,
            "conversation": self.conversation,
            "lost_tokens": self.lost_tokens,
            "invalidates": list(self.entry.invalidates),
            "expected": self.expected,
        }


def finding(name: str, where: str | None = None, involved: list[str] | None = None) -> Finding:
    """A finding of a known code (an unknown one raises KeyError)."""
    code(name)
    return Finding(name, where, list(involved or []))


def break_finding(brk: CacheBreak, index: int, conversation: str | None = None) -> Finding:
    """A cache break as a finding: its code is the cause's."""
    where = brk.diff[0].path if brk.diff and "@" in brk.diff[0].path else brk.where
    return Finding(
        str(brk.cause),
        where,
        list(brk.involved),
        index,
        conversation,
        brk.lost_tokens,
        brk.capabilities,
    )
