"""`AgentView`: the live three-pane view of an agent's requests (an anywidget).

Python renders all HTML (the `*_pane.py` modules); the front end (static/view.js) lays it out,
draws the timeline and links hovered items across panes. Updates are incremental: each step
sends its timeline item and the panes of the shown request, never the whole history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.loop import Agent, AgentEvent, Step
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.document import (
    agent_header,
    capture_header,
    panes,
    plain_text,
    static_html,
    timeline_item,
)
from dtl_notebook.notebook.html import token_css
from dtl_notebook.notebook.panes import body_html
from dtl_notebook.notebook.records import (
    RequestRecord,
    from_step,
    preview_record,
    step_records,
)
from dtl_notebook.wire.modes import PROVIDERS

STATIC = Path(__file__).parent / "static"
CHUNK = 200  # timeline items per message when a front end asks for the history


class AgentView(anywidget.AnyWidget):
    """The agent state, the request JSON and the model context of every request, side by side.

    `AgentView(agent)` follows the agent live (every step of `agent.run` appears as it
    completes); `AgentView(records=...)` shows a fixed list, e.g. a captured log.
    """

    _esm = STATIC / "view.js"
    _css = (STATIC / "view.css").read_text(encoding="utf-8") + token_css()

    header = traitlets.Dict().tag(sync=True)
    tail = traitlets.Dict().tag(sync=True)  # {"start": i, "items": [...]}: the newest items
    count = traitlets.Int(0).tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)  # -1 follows the newest request
    panes = traitlets.Dict().tag(sync=True)
    providers = traitlets.List(traitlets.Unicode()).tag(sync=True)
    provider_choice = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        agent: Agent | None = None,
        *,
        records: list[RequestRecord] | None = None,
        title: str = "dtl_notebook",
    ) -> None:
        if agent is None and records is None:
            raise TypeError("AgentView needs an agent or records=[...]")
        super().__init__()
        self.agent = agent
        self.title = title
        self.records: list[RequestRecord] = list(records or [])
        self._committed = len(self.records)
        self._status = "idle"
        self._error: str | None = None
        self.preview: RequestRecord | None = None
        if agent is not None:
            self.records = step_records(agent, agent.steps)
            self._committed = len(self.records)
            agent.listeners.append(self._on_event)
            self.providers = list(PROVIDERS)
        self.on_msg(self._on_message)
        self.observe(self._on_selected, "selected")
        self.observe(self._on_provider_choice, "provider_choice")
        self._sync_all()

    # -- what the front end gets ---------------------------------------------------------------
    def header_data(self) -> dict[str, Any]:
        if self.agent is not None:
            return agent_header(self.agent, self.title, self._status, self._error)
        return capture_header(self.records, self.title, self._status, self._error)

    def _panes_for(self, index: int) -> dict[str, Any]:
        if not self.records:
            return {}
        if index < 0 or index >= len(self.records):
            index = len(self.records) - 1
        return self._lazy_panes(self.records[index], self.records[index - 1] if index else None)

    @staticmethod
    def _lazy_panes(record: RequestRecord, previous: RequestRecord | None) -> dict[str, Any]:
        data = panes(record, previous, lazy=True)
        del data["refs"]  # the front end reads refs from the placeholders themselves
        return data

    def _sync_all(self) -> None:
        with self.hold_sync():
            self.header = self.header_data()
            self.count = len(self.records)
            self.tail = {"start": 0, "items": [timeline_item(r) for r in self.records]}
            self.panes = self._panes_for(self.selected)

    # -- following the agent ------------------------------------------------------------------
    def _on_event(self, event: AgentEvent) -> None:
        if event.kind == "turn_start":
            self._status, self._error = f"running: {redact(event.text)[:80]}", None
            self.header = self.header_data()
        elif event.kind == "step" and event.step is not None:
            self._add_step(event.step)
        elif event.kind == "turn_end":
            self._committed = len(self.records)
            self._status = "idle"
            self.header = self.header_data()
        elif event.kind == "turn_failed":
            del self.records[self._committed :]
            self._status, self._error = "idle", event.error
            with self.hold_sync():
                self.header = self.header_data()
                self.count = len(self.records)
                self.tail = {"start": len(self.records), "items": []}
                self.panes = self._panes_for(self.selected)

    def _add_step(self, step: Step) -> None:
        assert self.agent is not None
        previous = self.records[-1] if self.records else None
        record = from_step(len(self.records), step, self.agent, previous)
        self.records.append(record)
        self.preview = None
        with self.hold_sync():
            self._status = f"running: {len(self.records) - self._committed} step(s) of this turn"
            self.header = self.header_data()
            self.count = len(self.records)
            self.tail = {"start": record.index, "items": [timeline_item(record)]}
            if self.selected < 0:
                self.panes = self._panes_for(-1)

    def refresh(self) -> None:
        """Re-read the agent's steps (after a reset, load or provider switch)."""
        if self.agent is not None:
            self.records = step_records(self.agent, self.agent.steps)
            self._committed = len(self.records)
        self._sync_all()

    # -- what the front end asks ----------------------------------------------------------------
    def _on_selected(self, change: dict[str, Any]) -> None:
        self.panes = self._panes_for(int(change["new"]))

    def _on_provider_choice(self, change: dict[str, Any]) -> None:
        provider = str(change["new"])
        if not provider or self.agent is None:
            return
        try:
            self.switch(provider)
        except Exception as exc:  # shown in the view, the session is untouched
            self._error = redact(f"switch to {provider} failed: {exc}")
            self.header = self.header_data()

    def switch(
        self, provider: str, model: str | None = None, options: dict[str, Any] | None = None
    ) -> RequestRecord:
        """Switch the agent's provider (with `options`, default none) and show its session
        re-serialized (not sent)."""
        assert self.agent is not None
        model = model or DEMO_MODELS.get(provider, self.agent.model)
        options = options or {}
        record = preview_record(self.agent, provider, model, options)  # fails before a change
        self.agent.switch(provider, model, **options)
        self.preview = record
        self._error = None
        with self.hold_sync():
            self.header = self.header_data()
            self.panes = self._lazy_panes(record, None)
        return record

    def _record(self, index: int) -> RequestRecord | None:
        if index == -1 and self.preview is not None:
            return self.preview
        return self.records[index] if 0 <= index < len(self.records) else None

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("type") == "body":
            index = content.get("index")
            record = self._record(index) if isinstance(index, int) else None
            ref = str(content.get("ref", ""))
            html = body_html(record, ref) if record is not None else ""
            self.send({"type": "body", "index": content.get("index"), "ref": ref, "html": html})
        elif content.get("type") == "timeline":
            start, end = content.get("start", 0), content.get("end", len(self.records))
            if not (isinstance(start, int) and isinstance(end, int)):
                return
            start, end = max(0, start), min(len(self.records), end)
            for i in range(start, end, CHUNK):
                chunk = self.records[i : min(end, i + CHUNK)]
                self.send(
                    {"type": "timeline", "start": i, "items": [timeline_item(r) for r in chunk]}
                )

    # -- display ---------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return plain_text(self.records, self.header_data())

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data["text/plain"] = repr(self)
        data["text/html"] = static_html(self.records, self.header_data(), self.selected)
        return data, metadata
