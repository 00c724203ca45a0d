"""Layer 3: what the model context holds, per provider."""

from dtl_notebook.context.model import ModelContext, Segment, model_context
from dtl_notebook.context.tokens import count_tokens, encoding_for

__all__ = ["ModelContext", "Segment", "count_tokens", "encoding_for", "model_context"]
