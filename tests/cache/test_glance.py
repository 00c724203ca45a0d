"""Cache health in words and as data: the time left, the warmth line with its warning, the
hit rate and money, and the warmth as JSON a viewer counts down to."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from dtl_notebook.cache.glance import health_words, span_left, warmth_data, warmth_words
from dtl_notebook.cache.health import CacheHealth
from dtl_notebook.cache.warmth import ExpiryWarning, WarmNow, Warmth


@given(st.floats(min_value=0, max_value=400_000, allow_nan=False))
def test_span_left_reads_back_as_the_whole_seconds(seconds: float) -> None:
    words = span_left(seconds)
    found = re.fullmatch(r"(?:(\d+)h(\d\d)m|(\d+)m(\d\d)s|(\d+)s)", words)
    assert found is not None, words
    h, hm, m, ms, s = (int(g) if g else 0 for g in found.groups())
    whole = int(seconds)
    if found.group(1):  # hours drop the seconds
        assert h * 3600 + hm * 60 == whole - whole % 60
    else:
        assert m * 60 + ms + s == whole


def test_warmth_words_name_tokens_time_left_and_a_priced_warning() -> None:
    warning = ExpiryWarning(1300.0, 1400.0, 30_000, 0.5175, "m", "refresh it")
    warm = WarmNow(30_000, 1300.0, 299.5, False, "", warning)
    words = warmth_words(warm)
    assert words.startswith("warm 30,000 tok 4m59s left (until 00:21:40 UTC)")
    assert words.endswith("expires before the next likely request (30,000 tokens again, $0.52)")
    assert warmth_words(WarmNow(0, None, 0.0, False, "", None)) == "cold"


def test_health_words_and_warmth_data() -> None:
    health = CacheHealth(3, 9000, 6000, 2 / 3, True, 0.0123, 0.027, 1, 0.001)
    assert health_words(health) == "hit 67% · $0.01 of $0.03 uncached · 1 keep-warm"
    predicted = CacheHealth(1, 100, 0, 0.0, False, None, None)
    assert health_words(predicted) == "hit 0% predicted"
    warmth = Warmth(10.0, 300.0, ((5000, 310.0), (2000, 3610.0)), False, 310.0, "n", "s")
    data = warmth_data(warmth)
    assert data is not None and json.loads(json.dumps(data)) == data
    assert data["expires_at"] == 310.0 and data["tokens"] == 5000 and data["warning"] is None
    assert data["tiers"] == [[5000, 310.0], [2000, 3610.0]]
    assert warmth_data(None) is None
