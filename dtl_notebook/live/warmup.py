"""What an Agent prepares when it is built, so that its requests carry only per-request work.

Three kinds of one-time work used to land on the first request of a process or a session:

- per process: the strict validators compiled from the SDK request types and from their list
  items (hundreds of TypedDicts; a few hundred milliseconds for the Anthropic beta types), the
  beta-type walk, the BPE ranks of the token counter and the SDK's response model (its schema
  is built on the first reply it parses);
- per registry: the session's `tool_search` index (rebuilt only when the registry changes),
  and the tool items a request declares, built, validated and written as JSON once and then
  found by identity (a rehearsal builds the next request on a scratch copy of the session
  without sending it: the session itself, its messages and `rewrites`, stay as they were).

Nothing here changes the process beyond these memos (no garbage-collector settings): a plain
`build_request` loop gets the same per-turn costs, doing the same work lazily on its first
request.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.session import Session
from dtl_notebook.context.tokens import count_tokens
from dtl_notebook.live.transport import prepare_response_type
from dtl_notebook.wire import build_request
from dtl_notebook.wire.betas import body_features
from dtl_notebook.wire.incremental import item_fields
from dtl_notebook.wire.modes import Provider, check_provider
from dtl_notebook.wire.schema import schema, schema_of

# the request types a provider's bodies are validated against (the Agent never streams)
ROOTS: dict[Provider, tuple[str, ...]] = {
    "anthropic": ("anthropic", "anthropic-beta"),
    "openai-responses": ("responses",),
    "openai-chat": ("chat",),
    "kimi": ("chat", "chat-tool"),
}

REHEARSAL_TEXT = "(a rehearsal of the next request, never sent)"


def warm_up(
    session: Session, provider: str, model: str, options: Mapping[str, Any] | None = None
) -> float:
    """Prepare everything the first request of `session` for `provider` would otherwise build;
    returns the seconds it took. Each part is built once (per process or per registry
    version), so a second call for the same process and registry costs little."""
    known = check_provider(provider)
    start = time.perf_counter()
    for root in ROOTS[known]:
        schema(root)
        for item_type in item_fields(root).values():  # what incremental validation checks
            schema_of(item_type)
    if provider == "anthropic":
        body_features({})  # the walk over the beta and stable request types, cached
    count_tokens("", provider, model)
    prepare_response_type(provider)
    session.prepare_search()
    rehearse(session, provider, model, options or {})
    return time.perf_counter() - start


def rehearse(session: Session, provider: str, model: str, options: Mapping[str, Any]) -> None:
    """Build, without sending, the request the next user turn would make, and validate it, on
    a scratch copy of `session` (which is never touched). The registry's tool items are built
    and validated here (the first request finds them by identity), not on that request."""
    if session.pending_calls():
        return  # the next request answers those calls; nothing to rehearse
    scratch = session.scratch_copy()
    try:
        scratch.user(REHEARSAL_TEXT)
        build_request(scratch, provider, model, **options).json()  # items' texts too
    except (DtlError, ValueError):
        pass  # the real request reports its own problem
