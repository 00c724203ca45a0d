"""Layer 2: the exact request JSON of each provider, and responses back to neutral messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dtl_notebook._lazy import lazy_package

if TYPE_CHECKING:
    from dtl_notebook.wire.codec import build_request, parse_response, parse_responses
    from dtl_notebook.wire.modes import (
        LOAD_MODES,
        PROVIDERS,
        SEARCH_MODES,
        LoadMode,
        Provider,
        SearchMode,
    )
    from dtl_notebook.wire.profiles import ModelProfile, profile_for
    from dtl_notebook.wire.reply import ProviderError, Reply, ResponseFormatError
    from dtl_notebook.wire.request import LoadPoint, WireRequest
    from dtl_notebook.wire.validate import WireValidationError, validate_payload

__all__ = [
    "LOAD_MODES",
    "PROVIDERS",
    "SEARCH_MODES",
    "LoadMode",
    "LoadPoint",
    "ModelProfile",
    "Provider",
    "ProviderError",
    "Reply",
    "ResponseFormatError",
    "SearchMode",
    "WireRequest",
    "WireValidationError",
    "build_request",
    "parse_response",
    "parse_responses",
    "profile_for",
    "validate_payload",
]

# the names above are imported on first use: `from dtl_notebook.wire.reply import ...` in a
# command that reads captures does not load every adapter and the SDKs' request types
lazy_package(
    __name__,
    {
        **dict.fromkeys(
            ["LOAD_MODES", "PROVIDERS", "SEARCH_MODES", "LoadMode", "Provider", "SearchMode"],
            "dtl_notebook.wire.modes",
        ),
        **dict.fromkeys(["ModelProfile", "profile_for"], "dtl_notebook.wire.profiles"),
        **dict.fromkeys(
            ["ProviderError", "Reply", "ResponseFormatError"], "dtl_notebook.wire.reply"
        ),
        **dict.fromkeys(["LoadPoint", "WireRequest"], "dtl_notebook.wire.request"),
        **dict.fromkeys(
            ["BUILD", "PARSE", "build_request", "parse_response", "parse_responses"],
            "dtl_notebook.wire.codec",
        ),
        **dict.fromkeys(["WireValidationError", "validate_payload"], "dtl_notebook.wire.validate"),
    },
)
