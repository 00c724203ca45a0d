"""Every excerpted recording names its source, and only permissively licensed ones are used."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PERMISSIVE = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"}


def test_every_excerpt_names_a_listed_permissive_source() -> None:
    listed = json.loads((DATA / "sources.json").read_text())["sources"]
    assert all(s["licence"] in PERMISSIVE for s in listed)
    assert all(len(s["commit"]) == 40 for s in listed)
    known = {f"{s['repository']} {s['path']}" for s in listed}
    for name in ("anthropic_usage_pairs.json", "openai_usage_pairs.json", "cached_followups.json"):
        for conversation in json.loads((DATA / name).read_text())["conversations"]:
            source = conversation["source"]
            assert any(source.startswith(k) for k in known), (name, source)
