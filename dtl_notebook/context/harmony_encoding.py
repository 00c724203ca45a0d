"""The harmony `HarmonyGptOss` encoding, loaded once and offline.

The o200k vocabulary is read offline: while the encoding loads (once per process),
`TIKTOKEN_ENCODINGS_BASE` points at `offline_encodings.harmony_encodings_dir()` unless the
variable is already set, and is restored afterwards. Nothing here touches the network.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any, Final

from openai_harmony import (  # type: ignore[import-untyped]
    HarmonyEncodingName,
    load_harmony_encoding,
)

from dtl_notebook.context.offline_encodings import harmony_encodings_dir

_ENV: Final = "TIKTOKEN_ENCODINGS_BASE"
_LOAD_LOCK: Final = threading.Lock()


@functools.cache
def harmony_encoding() -> Any:
    """The `HarmonyGptOss` encoding (an `openai_harmony.HarmonyEncoding`), loaded once, offline.

    While it loads, `TIKTOKEN_ENCODINGS_BASE` points at `harmony_encodings_dir()` unless it is
    already set (an empty value counts as unset); the variable is restored afterwards.
    """
    with _LOAD_LOCK:
        previous = os.environ.get(_ENV)
        if previous:
            return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
        os.environ[_ENV] = str(harmony_encodings_dir())
        try:
            return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
        finally:
            if previous is None:
                del os.environ[_ENV]
            else:
                os.environ[_ENV] = previous
