"""The text namespace: counting, casing, extraction, similarity and encodings."""

from __future__ import annotations

import base64
import difflib
import hashlib
import re

from dtl_notebook.live.demo_tools.fakes import STOPWORDS, _words
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.world import _World

CASES = ("upper", "lower", "title", "sentence", "snake", "kebab", "camel", "pascal", "constant")


def _case_words(text: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]+", spaced)]


def _text(tool: _Domain, world: _World) -> None:
    @tool
    def count_words(text: str) -> J:
        return {
            "words": len(text.split()),
            "characters": len(text),
            "characters_without_spaces": len(re.sub(r"\s", "", text)),
            "sentences": len(re.findall(r"[^.!?]+[.!?]+", text)) or (1 if text.strip() else 0),
            "lines": len(text.splitlines()),
            "paragraphs": len([p for p in re.split(r"\n\s*\n", text) if p.strip()]),
        }

    @tool
    def slugify(text: str, separator: str = "-") -> J:
        slug = separator.join(_words(text))
        if not slug:
            raise ValueError("the text has no letters or digits to build a slug from")
        return {"slug": slug}

    @tool
    def convert_case(text: str, case: str) -> J:
        words = _case_words(text)
        out = {
            "upper": text.upper(),
            "lower": text.lower(),
            "title": text.title(),
            "sentence": text[:1].upper() + text[1:].lower(),
            "snake": "_".join(words),
            "kebab": "-".join(words),
            "camel": words[0] + "".join(w.title() for w in words[1:]) if words else "",
            "pascal": "".join(w.title() for w in words),
            "constant": "_".join(words).upper(),
        }[case]
        return {"result": out}

    @tool
    def truncate_text(text: str, max_length: int, ellipsis: str = "…") -> J:
        if len(text) <= max_length:
            return {"result": text, "truncated": False}
        if len(ellipsis) >= max_length:
            raise ValueError("max_length must be longer than the ellipsis")
        cut = text[: max_length - len(ellipsis)]
        if " " in cut.strip():
            cut = cut[: cut.rstrip().rfind(" ")]
        return {"result": cut.rstrip() + ellipsis, "truncated": True}

    @tool
    def extract_emails(text: str) -> J:
        found = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}", text)
        return {"emails": list(dict.fromkeys(found))}

    @tool
    def extract_urls(text: str) -> J:
        found = [u.rstrip(".,;:!?)") for u in re.findall(r"https?://[^\s<>\"']+", text)]
        return {"urls": list(dict.fromkeys(found))}

    @tool
    def word_frequency(text: str, top_n: int = 10, skip_stopwords: bool = True) -> J:
        counts: dict[str, int] = {}
        for w in _words(text):
            if not (skip_stopwords and w in STOPWORDS):
                counts[w] = counts.get(w, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return {"words": [{"word": w, "count": c} for w, c in ranked[:top_n]]}

    @tool
    def normalize_whitespace(text: str) -> J:
        lines = [" ".join(line.split()) for line in text.splitlines()]
        return {"result": re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()}

    @tool
    def text_similarity(text_a: str, text_b: str) -> J:
        a, b = text_a.split(), text_b.split()
        matcher = difflib.SequenceMatcher(None, a, b)
        changes = [
            {"op": op, "from": " ".join(a[i1:i2]), "to": " ".join(b[j1:j2])}
            for op, i1, i2, j1, j2 in matcher.get_opcodes()
            if op != "equal"
        ]
        return {
            "similarity": round(difflib.SequenceMatcher(None, text_a, text_b).ratio(), 4),
            "word_changes": changes[:50],
        }

    @tool
    def base64_encode(text: str) -> J:
        return {"base64": base64.b64encode(text.encode()).decode()}

    @tool
    def base64_decode(data: str) -> J:
        try:
            return {"text": base64.b64decode(data.strip(), validate=True).decode()}
        except (ValueError, UnicodeDecodeError):
            raise ValueError("data is not valid Base64-encoded UTF-8 text") from None

    @tool
    def hash_text(text: str, algorithm: str = "sha256") -> J:
        return {"algorithm": algorithm, "hex": hashlib.new(algorithm, text.encode()).hexdigest()}
