"""`%dtl compare` and `%dtl diff`: one session in four wire formats; two requests side by side."""

from __future__ import annotations

import copy
import difflib
import json
from typing import Any

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.agent.session import Session
from dtl_notebook.cache.analyze import CacheAnalyzer
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.loop import Agent
from dtl_notebook.notebook.display import HTML
from dtl_notebook.notebook.html import esc, pre
from dtl_notebook.notebook.panes import Bodies
from dtl_notebook.notebook.records import RequestRecord, from_request, preview_record
from dtl_notebook.notebook.request_pane import request_pane
from dtl_notebook.wire import build_request
from dtl_notebook.wire.modes import PROVIDERS


def compare_html(agent: Agent) -> HTML:
    """The neutral load points, then the request each provider would get, side by side."""
    columns, text = [], []
    for provider in PROVIDERS:
        model = DEMO_MODELS[provider]
        try:
            record = preview_record(agent, provider, model)
        except (DtlError, ValueError) as exc:
            columns.append((provider, f"<p>{esc(exc)}</p>"))
            text.append(f"{provider}: {exc}")
            continue
        loads = "; ".join(f"{', '.join(lp.tools)} at {lp.path}" for lp in record.load_points)
        head = (
            f"<p><b>{esc(provider)}</b> · {esc(model)} · mode <code>{esc(record.mode)}</code>"
            f" · {record.cache.total_tokens:,} tokens<br>load points: "
            f"<mark>{esc(loads or 'none')}</mark></p>"
        )
        columns.append((provider, head + request_pane(record, Bodies(record, lazy=False))))
        text.append(f"{provider:>16}  {record.mode:<16} load points: {loads or 'none'}")
    markers = entered_at(agent.session)
    truth = ", ".join(f"{n} after message #{i}" for n, i in markers.items()) or "none yet"
    cells = "".join(
        f'<td style="vertical-align:top;width:25%;border:1px solid #d0d7de;padding:4px">'
        f'<div style="max-height:640px;overflow:auto">{body}</div></td>'
        for _, body in columns
    )
    html = (
        f"<div><p><b>One neutral truth</b>: tools entered {esc(truth)}. "
        "<b>Four wire formats</b>:</p>"
        f'<table style="border-collapse:collapse;width:100%;table-layout:fixed"><tr>{cells}'
        "</tr></table></div>"
    )
    return HTML(html, f"neutral load points: {truth}\n" + "\n".join(text))


def diff_html(a: RequestRecord, b: RequestRecord, title: str) -> HTML:
    """A JSON diff of two request bodies, with the cache verdict when one provider sent both."""
    analyzer = CacheAnalyzer(a.provider, a.model)
    analyzer.add(a.payload)
    entry = analyzer.add(b.payload) if a.provider == b.provider else None
    cause = ""
    if entry is not None:
        brk = entry.cache_break
        cause = f"cache: {brk}" if brk else "cache: the second request extends the first"
    lines = _json_diff(a.payload, b.payload)
    html = (
        f"<div><b>{esc(title)}</b><p>{esc(cause)}</p>"
        + pre("".join(lines) or esc("(identical)"))
        + "</div>"
    )
    return HTML(html, f"{title}\n{cause}".strip())


def reserialized(agent: Agent, record: RequestRecord, provider: str) -> RequestRecord:
    """The session as it was at `record`, serialized for another provider (not sent)."""
    clone = _session_at(agent.session, record)
    request = build_request(clone, provider, DEMO_MODELS[provider])
    return from_request(request, label="re-serialized", index=record.index, turn=record.turn)


def entered_at(session: Session) -> dict[str, int]:
    """Tool name -> index of the tool result after which it entered."""
    entered: dict[str, int] = {}
    for i, message in enumerate(session.messages):
        for name in getattr(message, "added_tool_names", None) or []:
            entered.setdefault(name, i)
    return entered


def _session_at(session: Session, record: RequestRecord) -> Session:
    """A shallow copy of the session as it was when `record` was built."""
    assert record.state is not None
    clone = copy.copy(session)
    clone.messages = list(session.messages[: record.state.message_count])
    clone._active = list(record.state.active_tools)
    return clone


def _json_diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    old = json.dumps(a, indent=1, ensure_ascii=False).splitlines()
    new = json.dumps(b, indent=1, ensure_ascii=False).splitlines()
    out = []
    for line in difflib.unified_diff(old, new, "A", "B", n=2, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            out.append(f"<b>{esc(line)}</b>\n")
        elif line.startswith("-"):
            out.append(f'<del style="background:#ffd7d5">{esc(line)}</del>\n')
        elif line.startswith("+"):
            out.append(f'<ins style="background:#ccffd8">{esc(line)}</ins>\n')
        else:
            out.append(esc(line) + "\n")
    return out[:2000]
