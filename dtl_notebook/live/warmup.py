"""What an Agent prepares when it is built, so that its requests carry only per-request work:
per process, the SDK request types' strict validators, the beta-type walk, the BPE ranks and the
SDK's response model; per registry, the `tool_search` index and the tool items, built, validated
and written once by a rehearsal (the next request, built on a scratch copy of the session and
never sent), whose body the emulator also checks as it checks what it receives. Nothing else in
the process changes: a plain `build_request` loop does the same work on its first request.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.session import Session
from dtl_notebook.context.tokens import count_tokens
from dtl_notebook.live.transport import prepare_response_type
from dtl_notebook.wire import WireRequest, build_request
from dtl_notebook.wire.betas import body_features
from dtl_notebook.wire.incremental import item_fields
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.schema import schema, schema_of

REHEARSAL_TEXT = "(a rehearsal of the next request, never sent)"
Options = Mapping[str, Any] | None  # the provider options of `build_request`


def warm_up(
    session: Session, provider: str, model: str, options: Options = None, transport: Any = None
) -> float:
    """Prepare what the first request of `session` for `provider` would otherwise build (and
    an emulator `transport` checks the rehearsed body); returns the seconds it took."""
    row = spec(provider)
    start = time.perf_counter()
    for root in row.request_roots:  # the request types its bodies are validated against
        schema(root)
        for item_type in item_fields(root).values():  # what incremental validation checks
            schema_of(item_type)
    if row.takes_betas:
        body_features({})  # the walk over the beta and stable request types, cached
    count_tokens("", provider, model)
    prepare_response_type(provider)
    session.prepare_search()
    rehearsed = rehearse(session, provider, model, options or {})
    emulator = getattr(transport, "emulator", None)  # an emulator transport's own server
    if rehearsed is not None and emulator is not None:
        emulator.prepare(rehearsed.json().encode())
    return time.perf_counter() - start


def rehearse(
    session: Session, provider: str, model: str, options: Mapping[str, Any]
) -> WireRequest | None:
    """The request the next user turn would make, built and validated on a scratch copy of
    `session` (never touched), never sent; None where there is none to make."""
    if session.pending_calls():
        return None  # the next request answers those calls; nothing to rehearse
    try:
        scratch = session.scratch_copy()
        scratch.user(REHEARSAL_TEXT)
        request = build_request(scratch, provider, model, **options)
        request.json()  # the items' texts too
    except (DtlError, ValueError):
        return None  # the real request reports its own problem
    return request
