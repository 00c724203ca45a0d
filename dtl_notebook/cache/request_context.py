"""The model context the analyzer predicts on: the one the caller gives for the body it sent,
else the one of the whole request (a thread continuation rebuilt with its thread)."""

from __future__ import annotations

from typing import Any

from dtl_notebook.context.model import ModelContext, model_context
from dtl_notebook.wire.request import WireRequest

__all__ = ["request_context"]


def request_context(
    request: WireRequest | dict[str, Any],
    whole: dict[str, Any],
    context: ModelContext | None,
    provider: str | None,
    model: str | None,
) -> ModelContext:
    """The model context of `request`, whose whole body is `whole` (the sent body itself, or
    the thread it continues, rebuilt); `context`: the caller's, of the sent body."""
    sent = request.payload if isinstance(request, WireRequest) else request
    given = _own_context(request, context) if whole is sent else None
    if given is not None:
        return given
    if isinstance(request, WireRequest):
        if whole is request.payload:
            return model_context(request)
        return model_context(whole, request.provider, request.model)
    return model_context(whole, provider, model)


def _own_context(
    request: WireRequest | dict[str, Any], context: ModelContext | None
) -> ModelContext | None:
    """`context`, checked to be one of `request`'s provider and model."""
    if context is None:
        return None
    if not isinstance(context, ModelContext):
        raise TypeError(f"context must be a ModelContext, got {type(context).__name__}")
    if isinstance(request, WireRequest) and (
        context.provider != request.provider or context.model != request.model
    ):
        raise ValueError(
            f"context is for {context.provider} {context.model}, but the request is for "
            f"{request.provider} {request.model}"
        )
    return context
