"""A session's leading part (tools and system) against the one its scope last kept warm.

A new session is never a cache break: it has no earlier request of its own. But where the
scope's latest request, of another session, left a leading part warm that this session's
first request mostly repeats yet departs from before its end (a tool list changed between
two runs of one agent, a system prompt edited), the shared prefix is lost: a finding of its
own (`shared_prefix_lost`). A head that shares little with the new one (a title request, a
subagent with its own prompt) is another prompt, not a loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dtl_notebook.cache.carry import Carried
from dtl_notebook.cache.prefix_rules import CacheRule, cache_namespace
from dtl_notebook.cache.prefix_store import Lifetime, LostPrefix, PrefixStore, Scope, SessionHead
from dtl_notebook.context.model import ModelContext

__all__ = ["HeadCheck", "session_head"]

SHARED_AT_LEAST = 0.5  # of the earlier head's segments, for the new one to repeat that prompt
_PARTS = {"instructions": "system", "system": "system", "tools": "tools"}
_MESSAGES = ("messages", "input")


@dataclass
class HeadCheck:
    """One request's leading part, ready to be judged against its scope's and then kept."""

    scope: Scope
    head: SessionHead

    def lost(self, cached: int, rule: CacheRule) -> LostPrefix | None:
        """What of the scope's warm head this request (reading `cached` tokens) loses."""
        old, new = self.scope.head, self.head
        if old is None or old.conversation == new.conversation:
            return None
        tokens = old.cum[-1] if old.cum else 0
        if tokens < max(rule.min_tokens, 1) or cached >= tokens:
            return None
        if not old.lifetime.alive(new.lifetime.written_at):
            return None
        same = 0
        for a, b in zip(old.keys, new.keys, strict=False):
            if a != b:
                break
            same += 1
        if same == len(old.keys):  # all of it repeated: whatever was not read is not lost here
            return None
        if len(old.texts & new.texts) < SHARED_AT_LEAST * len(old.texts):
            return None
        where = new.sources[same] if same < len(new.sources) else old.sources[same]
        part = _PARTS.get(where.split(".")[0].split("[")[0], "messages")
        return LostPrefix(tokens - cached, where, part)

    def keep(self) -> None:
        """Make this request's head the scope's latest."""
        if self.head.keys:
            self.scope.head = self.head


def session_head(
    ctx: ModelContext,
    facts: Carried,
    payload: dict[str, Any],
    rule: CacheRule,
    store: PrefixStore,
    now: float,
    conversation: int,
) -> HeadCheck:
    """The leading part of `ctx` (everything before the messages), in its scope of `store`."""
    chain, cum = facts.chain, facts.cum
    end = min((facts.starts.get(name, len(chain)) for name in _MESSAGES), default=len(chain))
    segments = facts.segments[:end]
    head = SessionHead(
        tuple(chain[:end]),
        tuple(cum[:end]),
        tuple(s.source for s in segments),
        frozenset(hash(s.text) for s in segments),
        Lifetime(now, rule.ttl_seconds),
        conversation,
    )
    scope = store.scope(rule.provider, ctx.model, cache_namespace(rule, payload))
    return HeadCheck(scope, head)
