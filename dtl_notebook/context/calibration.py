"""What providers add around the request text, and how far our token figures can be trusted.

The constants live in `data/calibration.json`: published figures (Anthropic's tool-use system
prompt table) and fitted ones (the Claude scale factor and framing overheads, the
structured-output and extended-thinking prompts, OpenAI tool search's prompts per model family,
derived from recordings' differences), written by `benchmarks/calibrate.py --write` from the
input tokens the APIs reported for real recorded requests, with the error band per kind of
request measured held out ("bands"). Each figure names its source there.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dtl_notebook.wire.providers import ANTHROPIC, spec

__all__ = [
    "Estimate",
    "anthropic_tool_framing",
    "anthropic_tool_prompt",
    "band",
    "calibration",
    "claude_fit",
    "estimate_for",
    "openai_tool_search",
]


@functools.cache
def calibration() -> dict[str, Any]:
    """The parsed calibration data (package data `context/data/calibration.json`)."""
    text = resources.files("dtl_notebook.context").joinpath("data/calibration.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def claude_fit() -> dict[str, Any]:
    """The calibration data's Claude section (its fitted factors, framing and tool prompts)."""
    section: dict[str, Any] = calibration()[ANTHROPIC]
    return section


@dataclass(frozen=True)
class Estimate:
    """How a token total was obtained: `label` says the method, `band_pct` the typical error.

    `band_pct` is the 90th percentile of |predicted - reported| / reported over `requests` real
    recorded requests of the same `kind` (`request_kinds.KINDS`), each predicted by constants
    fitted without its own conversation; None where that kind has no recordings ("no measured
    band"). `exact` is True only when the count is the model's own tokenizer and nothing hidden
    was left out. `unpublished` names parts whose size the provider does not publish (a hosted
    tool's prompt, an image of unknown size): the band does not cover them, and `describe`
    says so.
    """

    label: str
    exact: bool
    band_pct: float | None = None
    requests: int = 0
    unpublished: tuple[str, ...] = ()
    kind: str | None = None  # the kind title the band was measured on

    def describe(self, total: int) -> str:
        """E.g. '≈ 2,310 tokens (estimate, <label>; ±4 % on 25 real requests of this kind
        (Anthropic tool runs), leave-one-conversation-out)'."""
        if self.exact:
            return f"{total:,} tokens ({self.label})"
        of = f" ({self.kind})" if self.kind else ""
        band = (
            f"; ±{self.band_pct:g} % on {self.requests} real requests of this kind{of}, "
            "leave-one-conversation-out"
            if self.band_pct is not None
            else f"; no measured band{' for ' + self.kind if self.kind else ''}"
        )
        if self.unpublished:
            band += f"; not covered: {', '.join(self.unpublished)}"
        return f"≈ {total:,} tokens (estimate, {self.label}{band})"


def band(kind: str | None) -> tuple[float | None, int, str | None]:
    """(90th-percentile error in percent or None, requests, kind title) measured for `kind`."""
    if kind is None:
        return None, 0, None
    measured = calibration().get("bands", {}).get("kinds", {}).get(kind) or {}
    p90 = measured.get("p90_abs_error_pct")
    title = measured.get("title")
    return (
        None if p90 is None else float(p90),
        int(measured.get("requests") or 0),
        str(title) if title else kind,
    )


def anthropic_tool_framing(model: str) -> bool:
    """Whether `model`'s generation adds the fitted framing beyond the published tool-use
    prompt (Claude 4.5 and later; not Claude 4.0 / 4.1 or 3, `tool_prompt_without_unpublished`)."""
    name = model.strip().lower()
    without = claude_fit()["tool_prompt_without_unpublished"]["models"]
    return not any(name.startswith(prefix) for prefix in without)


def anthropic_tool_prompt(model: str, tool_choice: str) -> tuple[int | None, int]:
    """(published tool-use system prompt size or None, fitted unpublished extra) for `model`:
    the extra is 0 on a generation without it (`anthropic_tool_framing`)."""
    data = claude_fit()
    column = "any" if tool_choice in ("any", "tool") else "auto"
    name = model.strip().lower()
    published = next(
        (
            int(row[column])
            for row in data["tool_prompt"]
            if any(name.startswith(prefix) for prefix in row["models"])
        ),
        None,
    )
    extra = int(data["tool_prompt_unpublished"][column]) if anthropic_tool_framing(name) else 0
    return published, extra


def estimate_for(provider: str, method: str, kind: str | None = None) -> Estimate:
    """The estimate label for a context whose text was counted with tokenizer `method`, with
    the band measured on requests of `kind` (`request_kinds.request_kind`)."""
    p90, requests, title = band(kind)
    fit = spec(provider).fit  # the table says which fitted estimate sizes its context
    if fit == "claude":
        data = claude_fit()
        label = (
            f"Claude: o200k \u00d7 {data['factor']:g} (prose) / {data['json_factor']:g} (JSON)"
            " + tool prompt and framing"
        )
    elif fit == "openai":
        label = f"{method}, functions as declarations + fitted framing"
    else:
        label = method
    return Estimate(label, False, p90, requests, kind=title)


def openai_tool_search(part: str, model: str) -> tuple[int, str]:
    """(tokens, why) of what OpenAI's tool search adds, `part` "client_prompt" (a client
    `tool_search` declared) or "load_prompt" (tools loaded by `tool_search_output` or
    `additional_tools`), for `model`'s family: the longest listed prefix of its name, else
    the mean of the measured families (`data/calibration.json` "openai" "tool_search")."""
    families: dict[str, Any] = calibration()["openai"]["tool_search"][part]
    name = model.strip().lower().rsplit("/", 1)[-1]
    matches = [family for family in families if name.startswith(family)]
    if matches:
        family = max(matches, key=len)
        return int(families[family]["tokens"]), f"measured on {family}"
    mean = round(sum(int(f["tokens"]) for f in families.values()) / len(families))
    return mean, f"not measured for this model: the mean of {', '.join(families)}"
