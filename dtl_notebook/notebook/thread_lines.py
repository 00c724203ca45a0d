"""One line per pane for an Anthropic message-thread request: the request JSON holds only the
new messages, the model context the whole thread, and the thread has an age and an expiry."""

from __future__ import annotations

from dtl_notebook.cache.thread_events import ThreadFacts
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.html import badge, element, esc, text
from dtl_notebook.notebook.theme import BREAK, NEUTRAL

__all__ = ["context_thread_line", "request_thread_line"]


def request_thread_line(facts: ThreadFacts | None) -> str:
    """The request pane's line: what the wire carries of the thread."""
    if facts is None:
        return ""
    if facts.kind == "create":
        words = f"thread create: the whole conversation sent ({facts.sent} messages)"
    else:
        words = (
            f"thread continue from {text('code', facts.previous_message_id)}: "
            f"{facts.sent} new message(s) sent, no system or tools"
        )
    return _line(words, facts)


def context_thread_line(facts: ThreadFacts | None) -> str:
    """The context pane's line: the whole thread the model sees, and the thread's age."""
    if facts is None or facts.kind != "continue":
        return ""
    if facts.age_seconds is None or facts.expires_in_seconds is None:
        return _line(f"thread not rebuilt: {esc(facts.note)}", facts)
    limit = facts.idle_seconds
    words = (
        f"the whole thread: {facts.whole} messages ({facts.sent} sent with this request) · "
        f"thread age {_span(facts.age_seconds)} · idle limit {_span(limit)}, "
        f"{_span(facts.expires_in_seconds)} left"
    )
    return _line(words, facts)


def _line(words: str, facts: ThreadFacts) -> str:
    event = ""
    if facts.event:
        tint = BREAK if facts.event == "thread_not_found" else NEUTRAL
        event = f" {badge(facts.event, tint)} {element('span', 'ⓘ', title=redact(facts.message))}"
    return element("div", words + event, cls="dtl-muted dtl-thread")


def _span(seconds: float) -> str:
    """`seconds` as people read it: 45 s, 4 min 40 s."""
    whole = max(0, round(seconds))
    minutes, rest = divmod(whole, 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")
