"""Layer 3: what the model context holds, per provider."""

from typing import TYPE_CHECKING

from dtl_notebook._lazy import lazy_package

if TYPE_CHECKING:
    from dtl_notebook.context.model import ModelContext, Segment, model_context
    from dtl_notebook.context.tokens import count_tokens, encoding_for

__all__ = ["ModelContext", "Segment", "count_tokens", "encoding_for", "model_context"]

lazy_package(
    __name__,
    {
        **dict.fromkeys(["ModelContext", "Segment", "model_context"], "dtl_notebook.context.model"),
        **dict.fromkeys(["count_tokens", "encoding_for"], "dtl_notebook.context.tokens"),
    },
)
