"""Layer 4: prefix-cache rules, the turn-over-turn analyzer, and why a cache breaks."""

from typing import TYPE_CHECKING

from dtl_notebook._lazy import lazy_package

if TYPE_CHECKING:
    from dtl_notebook.cache.analyze import (
        CacheAnalyzer,
        CacheBreak,
        DiffOp,
        Usage,
        analyze,
        reported_usage,
    )
    from dtl_notebook.cache.audit import (
        CaptureAudit,
        CaptureError,
        audit_capture,
        audit_jsonl,
        detect_provider,
        load_jsonl,
    )
    from dtl_notebook.cache.capture import Exchange, load_capture
    from dtl_notebook.cache.causes import BreakCause
    from dtl_notebook.cache.entries import CacheEntry, CacheReport
    from dtl_notebook.cache.prefix_rules import CacheRule, cache_rule
    from dtl_notebook.cache.prefix_store import PrefixStore

__all__ = [
    "BreakCause",
    "CacheAnalyzer",
    "CacheBreak",
    "CacheEntry",
    "CacheReport",
    "CacheRule",
    "CaptureAudit",
    "CaptureError",
    "DiffOp",
    "Exchange",
    "PrefixStore",
    "Usage",
    "analyze",
    "audit_capture",
    "audit_jsonl",
    "cache_rule",
    "detect_provider",
    "load_capture",
    "load_jsonl",
    "reported_usage",
]

lazy_package(
    __name__,
    {
        **dict.fromkeys(
            ["CacheAnalyzer", "CacheBreak", "DiffOp", "Usage", "analyze", "reported_usage"],
            "dtl_notebook.cache.analyze",
        ),
        **dict.fromkeys(
            ["CaptureAudit", "CaptureError", "audit_capture", "audit_jsonl", "load_jsonl"],
            "dtl_notebook.cache.audit",
        ),
        **dict.fromkeys(
            ["Exchange", "load_capture", "detect_provider"], "dtl_notebook.cache.capture"
        ),
        "BreakCause": "dtl_notebook.cache.causes",
        **dict.fromkeys(["CacheEntry", "CacheReport"], "dtl_notebook.cache.entries"),
        **dict.fromkeys(["CacheRule", "cache_rule"], "dtl_notebook.cache.prefix_rules"),
        "PrefixStore": "dtl_notebook.cache.prefix_store",
    },
)
