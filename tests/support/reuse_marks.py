"""A mark for tests of the sharing itself: they skip when reuse is off (``DTL_REUSE=0``), where
every byte-identity test still runs (and compares two cold builds)."""

from __future__ import annotations

import pytest

from dtl_notebook import _reuse

shares = pytest.mark.skipif(
    not _reuse.enabled(), reason="reuse is off (DTL_REUSE=0): nothing is shared or kept"
)
