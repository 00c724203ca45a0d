"""The agent-state pane: active tools and where each entered, prompt sections, the transcript."""

from __future__ import annotations

from typing import Any

from dtl_notebook.agent.messages import (
    AssistantMessage,
    SystemUpdate,
    ToolResultMessage,
    UserMessage,
)
from dtl_notebook.cache.causes import BreakCause
from dtl_notebook.context.tokens import encoding_for
from dtl_notebook.notebook import html as markup
from dtl_notebook.notebook.html import (
    badge,
    clip,
    element,
    esc,
    heading,
    key,
    link_classes,
    mark,
)
from dtl_notebook.notebook.panes import (
    HEAD,
    TAIL,
    Bodies,
    hidden_row,
    lp_key,
    names_list,
    recent_loads,
    tool_name,
    windowed,
)
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.notebook.request_pane import carriers
from dtl_notebook.notebook.theme import BREAK, LOAD

LEFT = "text-align:left"  # JupyterLab right-aligns `td`


def state_pane(rec: RequestRecord, bodies: Bodies) -> str:
    if rec.state is None:
        return captured_state(rec, bodies)
    st = rec.state
    entered = rec.entered
    paths = {lp.message_index: lp.path for lp in rec.load_points}
    brk = rec.cache.cache_break
    broken = {n.lstrip("+-") for n in brk.involved} if brk else set()
    rows = []
    active = list(st.active_tools)
    shown = set(range(min(len(active), HEAD // 3))) | set(
        range(max(0, len(active) - TAIL), len(active))
    )
    shown |= {i for i, n in enumerate(active) if n in broken}
    hidden = [n for i, n in enumerate(active) if i not in shown]
    for i, name in enumerate(active):
        if i not in shown:
            continue
        where = entered.get(name)
        keys = [key("tool", name)]
        if where is None:
            at = "in the prefix"
        else:
            at = f"after message #{where}"
            if where in paths:
                keys.append(lp_key(paths[where]))
        if name in broken:
            keys.append(key("brk", "here"))
            at += f" · breaks the cache: {brk.message}" if brk else ""
        rows.append(_tool_row(name, at, keys))
    parts = [
        heading(f"Active tools ({len(st.active_tools)} of {st.registry_size} registered)"),
        element("table", "".join(rows), cls="dtl-table"),
        names_list(hidden, "more active tools") if hidden else "",
        heading("System prompt sections the model holds"),
    ]
    counter = encoding_for(rec.provider, rec.model)
    for name, text in st.sections.items():
        size = f"{counter.count(text):,} tokens, {len(text):,} chars"
        if name == "tool_catalog":
            size += f"; {_catalog_lines(text)}"
        summary = f"{markup.text('code', name)} ({esc(size)})"
        section = bodies.details(summary, f"state:section:{name}")
        if name in broken and brk is not None and brk.cause is BreakCause.SYSTEM_CHANGED:
            section = element(
                "div",
                section + badge("breaks the cache", BREAK),
                cls=link_classes(key("brk", "here"), cls="dtl-row"),
            )
        parts.append(section)
    parts.append(heading(f"Transcript ({len(rec.messages)} messages)"))
    marked = {lp.message_index for lp in recent_loads(rec)}
    for entry in windowed(len(rec.messages), marked):
        if isinstance(entry, tuple):
            parts.append(hidden_row(*entry, "messages", "state:messages"))
            continue
        parts.append(_message_row(entry, rec.messages[entry], paths))
    return "".join(parts)


def captured_state(rec: RequestRecord, bodies: Bodies) -> str:
    """A captured request's own state: the tools it carries and its prompt sections (the
    agent that sent it is not known here, and a capture has no turns)."""
    payload = rec.payload
    tools = [t for t in payload.get("tools") or [] if isinstance(t, dict)]
    deferred = [tool_name(t) for t in tools if t.get("defer_loading")]
    rows = [
        _tool_row(
            tool_name(t),
            "deferred" if t.get("defer_loading") else "immediate",
            [key("tool", tool_name(t))],
        )
        for t in tools[:HEAD]
    ]
    hidden = [tool_name(t) for t in tools[HEAD:]]
    parts = [
        markup.text(
            "p",
            "Captured: what this request itself carries (the agent that sent it is not known "
            "here).",
            cls="dtl-muted",
        ),
        heading(f"Tools in the request ({len(tools)}, {len(deferred)} deferred)"),
        element("table", "".join(rows), cls="dtl-table"),
        names_list(hidden, "more tools") if hidden else "",
        heading(f"Load-point carriers: {carriers(payload)}"),
        heading("Prompt sections"),
    ]
    sections = [
        (name, f"request:{name}") for name in ("system", "instructions") if payload.get(name)
    ]
    for i, message in enumerate(payload.get("messages") or []):
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            sections.append((f"messages[{i}] ({message['role']})", f"request:messages.{i}"))
    for label, ref in sections:
        parts.append(bodies.details(markup.text("code", label), ref))
    if not sections:
        parts.append(markup.text("p", "none", cls="dtl-muted"))
    return "".join(parts)


def _tool_row(name: str, where: str, keys: list[str]) -> str:
    """A tool's row: its name, and where it entered (or how it is sent)."""
    cells = element("td", markup.text("code", name), style=LEFT)
    cells += markup.text("td", where, cls="dtl-muted", style=LEFT)
    return element("tr", cells, cls=link_classes(*keys))


def _catalog_lines(text: str) -> str:
    entries = [line for line in text.splitlines() if line.startswith("- ")]
    grouped = any(" tools)" in line or " tool)" in line for line in entries)
    return f"{len(entries)} {'groups' if grouped else 'tools'} listed"


def _message_row(i: int, message: Any, paths: dict[int, str]) -> str:
    label, body = type(message).__name__, ""
    marked = False
    if isinstance(message, UserMessage):
        label, body = "user", esc(clip(_text(message.content), 160))
    elif isinstance(message, AssistantMessage):
        label = "assistant"
        calls = ", ".join(f"{c.name}({clip(str(c.arguments), 80)})" for c in message.tool_calls)
        body = esc(clip(message.text or "", 160)) + (
            "<br>" + markup.text("code", f"→ {calls}") if calls else ""
        )
    elif isinstance(message, ToolResultMessage):
        label = "tool result" + (" (error)" if message.is_error else "")
        body = esc(clip(_text(message.content), 160))
        if message.added_tool_names:
            keys = [key("tool", n) for n in message.added_tool_names]
            if i in paths:
                keys.insert(0, lp_key(paths[i]))
            where = "" if i in paths else " (no load point on the wire: full list)"
            text = f"load point: + {', '.join(message.added_tool_names)}{where}"
            body += "<br>" + mark(esc(text), LOAD, link_classes(*keys))
            marked = True
    elif isinstance(message, SystemUpdate):
        label = "system update"
        body = esc(", ".join(message.sections))
        if message.tools_registered:  # searchable from here on, not offered
            registered = "registered: " + ", ".join(message.tools_registered)
            body = f"{body}<br>{esc(registered)}" if body else esc(registered)
    style = "border-left:3px solid rgba(255, 190, 40, .9)" if marked else None
    number = markup.text("span", f"#{i}", cls="dtl-muted")
    return element("div", f"{number} {badge(label)} {body}", cls="dtl-row", style=style)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content or []:
        text = getattr(part, "text", None)
        texts.append(text if isinstance(text, str) else "[image]")
    return "".join(texts)


# -- request JSON --------------------------------------------------------------------------------
