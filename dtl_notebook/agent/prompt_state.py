"""The system prompt a session holds: the sections the next turn should hold, the ones the
model holds now (replayed from the transcript's updates), and the patch between them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dtl_notebook.agent.messages import Message, SystemUpdate
from dtl_notebook.agent.sections import Patch, Sections, apply_patch, diff_sections, tools_section
from dtl_notebook.agent.tools import Tool, ToolSpec

if TYPE_CHECKING:
    from dtl_notebook._reuse.transcript import Transcript


@dataclass(frozen=True)
class CacheHazard:
    """A deferred tool whose prompt contribution would change the system prompt on activation."""

    tool: str
    fields: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"deferred tool {self.tool!r} carries {' and '.join(self.fields)}: activating it "
            "rewrites the `tools` section of the system prompt"
        )


class PromptState:
    """A session's system prompt: the sections it holds (`sections`, the session's `prompt`)
    and the ones the model holds, replayed from the transcript."""

    def __init__(self, sections: Sections) -> None:
        self.sections = sections
        # the held sections at the end of the transcript seen: (transcript, rewrites, seen, held)
        self._held: tuple[Transcript[Message], int, int, dict[str, str]] | None = None

    def copy(self) -> PromptState:
        """The same sections (shared) with a replay of its own, for a scratch copy."""
        return PromptState(self.sections)

    def desired(self, tools: list[Tool]) -> dict[str, str]:
        """The sections the next turn should hold: the prompt plus the derived `tools` section."""
        sections = self.sections.copy()
        derived = tools_section(tools)
        if derived and "tools" not in sections:
            ordered = {k: v for k, v in sections.items() if k == "preamble"}
            ordered["tools"] = derived
            ordered.update(sections)
            sections = ordered
        return sections

    def held(self, transcript: Transcript[Message]) -> dict[str, str]:
        """The sections the model holds now, replayed from the transcript (from where the last
        replay stopped, while the transcript only grew)."""
        held: dict[str, str] = {}
        start = 0
        memo = self._held  # its dict is never edited: apply_patch makes a new one
        same = memo is not None and memo[0] is transcript and memo[1] == transcript.rewrites
        if memo is not None and same and memo[2] <= len(transcript):
            held, start = memo[3], memo[2]
        for message in transcript[start:]:
            if isinstance(message, SystemUpdate):
                held = apply_patch(held, message.sections)
        self._held = (transcript, transcript.rewrites, len(transcript), held)
        return dict(held)

    def patch(self, transcript: Transcript[Message], tools: list[Tool]) -> Patch | None:
        """What a `SystemUpdate` must change for the model to hold the desired sections (None:
        nothing)."""
        return diff_sections(self.held(transcript), self.desired(tools))


def cache_hazards(deferred: Iterable[ToolSpec]) -> list[CacheHazard]:
    """Deferred tools carrying a prompt snippet or guidelines."""
    hazards = []
    for tool in deferred:
        fields = tuple(f for f in ("prompt_snippet", "prompt_guidelines") if getattr(tool, f))
        if fields:
            hazards.append(CacheHazard(tool.name, fields))
    return hazards
