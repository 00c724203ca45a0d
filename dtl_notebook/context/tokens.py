"""Offline token counting: the `TokenCounter` for each (provider, model), and whether it is exact.

The encodings come from `offline_encodings` (tiktoken's own vocabularies, verified and built
without a download).

"Exact" means the text tokenizer is the one the model uses. It never covers what a provider adds
around the text (role markers, hidden system prompts, tool-schema rendering), which only the
provider's own counting endpoint or the `usage` of a real reply can tell.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import tiktoken
import tiktoken.model

from dtl_notebook.context.calibration import claude_fit
from dtl_notebook.context.offline_encodings import PINNED_SHA256, get_encoding
from dtl_notebook.wire.providers import ANTHROPIC, KIMI, OPENAI_CHAT, OPENAI_RESPONSES, Part

__all__ = [
    "ANTHROPIC_FACTOR",
    "ANTHROPIC_JSON_FACTOR",
    "KIMI_FACTOR",
    "TOKENIZERS",
    "TokenCounter",
    "count_tokens",
    "encoding_for",
    "looks_like_json",
]

#: Claude's tokenizer is not public (Anthropic offers only the `messages.count_tokens` API, which
#: its own docs call an estimate). Claude vocabularies are not o200k's; the o200k count is scaled
#: and rounded to the nearest: by `ANTHROPIC_FACTOR` for prose, by `ANTHROPIC_JSON_FACTOR` for
#: JSON text (tool schemas, tool inputs, JSON results), whose braces, quotes and keys Claude's
#: vocabulary splits more finely than o200k's. Both are fitted, together with the hidden prompts
#: and framing that `model_context` adds, against input tokens the API reported for real
#: recorded requests (`context/data/calibration.json`, `benchmarks/calibrate.py`).
ANTHROPIC_FACTOR: Final[float] = float(claude_fit()["factor"])
ANTHROPIC_JSON_FACTOR: Final[float] = float(claude_fit()["json_factor"])

#: Kimi (Moonshot) models use their own tiktoken-style BPE vocabulary, which is not bundled here;
#: the o200k_base count is used unscaled and labelled as an estimate.
KIMI_FACTOR: Final = 1.0

# each provider's token counter for a model name (registered at the end of this module)
TOKENIZERS: Part[Callable[[str], TokenCounter]] = Part("tokenizer", __name__)
# Model families this module maps to o200k_base in addition to tiktoken's own tables
# (`tiktoken.model`), e.g. "o4-pro", "gpt-4.5", "gpt-oss".
_EXTRA_O200K_PREFIXES: Final = ("o1", "o3", "o4", "gpt-4.5", "gpt-oss", "gpt-5")


_JSON_START: Final = re.compile(r"\s*[\[{]")


def looks_like_json(text: str) -> bool:
    """Whether `text` is JSON (an object or an array), the kind the JSON scale applies to."""
    return _JSON_START.match(text) is not None


@dataclass(frozen=True)
class TokenCounter:
    """How tokens are counted for one provider and model.

    `name` is the encoding used, `exact` whether it is the model's own text tokenizer, `method` a
    human-readable label for displays, and `factor` the scale applied to the raw count (counts
    are rounded to the nearest when it is not 1); `json_factor`, where set, the scale for JSON
    text instead.
    """

    name: str
    exact: bool
    method: str
    factor: float = 1.0
    json_factor: float | None = None
    _encoding: tiktoken.Encoding | None = field(default=None, repr=False, compare=False)

    @property
    def encoding(self) -> tiktoken.Encoding:
        return self._encoding if self._encoding is not None else get_encoding(self.name)

    def count(self, text: str) -> int:
        """Tokens in `text`; text that looks like a special token is counted as ordinary text."""
        n = len(self.encoding.encode_ordinary(text))
        factor = self.factor
        if self.json_factor is not None and looks_like_json(text):
            factor = self.json_factor
        # to the nearest: rounding up added a token to every short segment (a 16-token
        # prompt predicted as 17, tests/context/test_tokens.py)
        return n if factor == 1.0 else math.floor(n * factor + 0.5)


def _normalize_model(model: str) -> str:
    m = model.strip().lower()
    # "openai/gpt-oss-120b" (vLLM, OpenRouter style) -> "gpt-oss-120b"; keep "ft:..." intact.
    return m.rsplit("/", 1)[-1]


def _openai_encoding_name(model: str) -> tuple[str | None, str]:
    """(offline encoding, or None when there is none; why) for a normalized OpenAI model name."""
    try:
        name = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        if model.startswith(_EXTRA_O200K_PREFIXES):
            return "o200k_base", "known family"
        return None, "is not a known OpenAI model"
    if name == "o200k_harmony":
        # gpt-oss: o200k_harmony is o200k_base plus chat-format special tokens; ordinary text
        # encodes identically.
        return "o200k_base", "known family"
    if name in PINNED_SHA256:
        return name, "known model"
    return None, f"uses {name}, which is not bundled offline"


def encoding_for(provider: str, model: str) -> TokenCounter:
    """The token counter for `model` served through `provider` (its `TOKENIZERS` entry)."""
    return TOKENIZERS[provider](model)


def _openai_counter(model: str) -> TokenCounter:
    """gpt-4o, gpt-4.1, gpt-4.5, gpt-5*, o1/o3/o4*, gpt-oss* use o200k_base; gpt-4 and
    gpt-3.5-turbo use cl100k_base (exact). Unknown models get o200k_base, exact=False,
    labelled as a guess."""
    name, why = _openai_encoding_name(_normalize_model(model))
    if name is not None:
        return TokenCounter(name, True, f"{name} (tiktoken, offline)")
    return TokenCounter(
        "o200k_base", False, f"guess: o200k_base (tiktoken, offline) — model {model!r} {why}"
    )


def _claude_counter(model: str) -> TokenCounter:
    """No public Claude tokenizer: o200k_base * `ANTHROPIC_FACTOR` (prose) or
    `ANTHROPIC_JSON_FACTOR` (JSON), exact=False."""
    return TokenCounter(
        "o200k_base",
        False,
        f"estimate: o200k_base token count \u00d7 {ANTHROPIC_FACTOR:g} (prose), "
        f"\u00d7 {ANTHROPIC_JSON_FACTOR:g} (JSON), fitted on real usage"
        " — no public Claude tokenizer",
        ANTHROPIC_FACTOR,
        ANTHROPIC_JSON_FACTOR,
    )


def _kimi_counter(model: str) -> TokenCounter:
    """Kimi's vocabulary is not bundled: o200k_base * `KIMI_FACTOR`, exact=False."""
    return TokenCounter(
        "o200k_base",
        False,
        "estimate: o200k_base token count — Kimi tokenizer not bundled",
        KIMI_FACTOR,
    )


def count_tokens(text: str, provider: str, model: str) -> int:
    """`encoding_for(provider, model).count(text)`."""
    return encoding_for(provider, model).count(text)


TOKENIZERS.register(ANTHROPIC, _claude_counter)
TOKENIZERS.register(OPENAI_RESPONSES, _openai_counter)
TOKENIZERS.register(OPENAI_CHAT, _openai_counter)
TOKENIZERS.register(KIMI, _kimi_counter)
