"""`AgentView`: the live three-pane view of an agent's requests (an anywidget).

Python renders all HTML (the `*_pane.py` modules); the front end (static/view*.js) lays it
out, draws the timeline and links items across panes. Updates are incremental and
coalesced: each flush sends the timeline items since the last one and the panes of the
newest request, at most every `flush_s` seconds while a turn runs. What a front end asks for
travels as custom messages (`ViewMessages`), each answered to the view that asked, so selection
is per view; a preview and a switch of provider are answered here.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import traitlets

from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.agent import Agent, AgentEvent, Step
from dtl_notebook.notebook.document import (
    agent_header,
    capture_header,
    plain_text,
    static_html,
    timeline_item,
)
from dtl_notebook.notebook.html import token_css
from dtl_notebook.notebook.records import (
    RequestRecord,
    from_step,
    preview_record,
    step_records,
)
from dtl_notebook.notebook.snapshot import snapshot_html
from dtl_notebook.notebook.view_assets import view_css, view_esm
from dtl_notebook.notebook.view_messages import ViewMessages
from dtl_notebook.notebook.view_output import LiveCell
from dtl_notebook.wire.modes import PROVIDERS, check_provider


class AgentView(ViewMessages):
    """The agent state, the request JSON and the model context of every request, side by side.

    `AgentView(agent)` follows the agent live (every step of `agent.run` appears as it
    completes) until it is closed; `AgentView(records=...)` shows a fixed list, e.g. a
    captured log. `selected` (Python only) picks the request the panes and the static
    fallback show; -1 follows the newest. `history`, an earlier view of the same agent, lends
    its records (they are not built again).
    """

    _esm = view_esm(view_css() + token_css())

    header = traitlets.Dict().tag(sync=True)
    tail = traitlets.Dict().tag(sync=True)  # {"start": i, "items": [...]}: the newest items
    count = traitlets.Int(0).tag(sync=True)
    panes = traitlets.Dict().tag(sync=True)  # of the selected (else the newest) request
    # Names the requests' panes the page keeps for this session (static/view_panes.js): the
    # same for every view of these records, so a new cell's view finds what the views before
    # it were sent while the kernel is busy running the cell; new when the records change.
    panes_key = traitlets.Unicode("").tag(sync=True)
    providers = traitlets.List(traitlets.Unicode()).tag(sync=True)
    switched = traitlets.Dict().tag(sync=True)  # the preview after a switch, until a step
    selected = traitlets.Int(-1)
    flush_s = 0.1  # while a turn runs, updates go out at most this often (the rest coalesce)
    built_kept = 4  # panes built and kept in Python, the newest (a new view reuses them)
    panes_settle = True  # a request's record never changes once shown: its panes build once
    # The first request of the cell that shows this view, if a cell does: its saved fallback
    # (text/html) is then that cell's turn alone, as flat in size as the snapshot it becomes.
    cell_start: int | None = None

    def __init__(
        self,
        agent: Agent | None = None,
        *,
        records: list[RequestRecord] | None = None,
        title: str = "dtl_notebook",
        history: AgentView | None = None,
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
        self._sent = 0  # timeline items the front ends have
        self._panes_sent = 0  # requests whose panes the front ends were sent
        self._built: dict[int, dict[str, Any]] = {}  # panes built, by request index
        self._flushed = 0.0
        self.preview: RequestRecord | None = None
        self.previews: dict[str, RequestRecord] = {}
        self._listening = False
        if agent is not None:
            reuse = history is not None and history.agent is agent
            if reuse and history is not None and len(history.records) == len(agent.steps):
                self.records = list(history.records)  # built already: a new view costs O(1)
                self._built, self.panes_key = history._built, history.panes_key
            else:
                self.records = step_records(agent, agent.steps)
            self._committed = len(self.records)
            agent.listeners.append(self._on_event)
            self._listening = True
            self.providers = list(PROVIDERS)
        self.panes_key = self.panes_key or self._new_panes_key()
        self.on_msg(self._on_message)
        self.observe(self._on_selected, "selected")
        self._sync_all()

    def close(self) -> None:
        """Stop following the agent and close the front ends."""
        if getattr(self, "_listening", False):  # not set when __init__ failed early
            assert self.agent is not None
            if self._on_event in self.agent.listeners:
                self.agent.listeners.remove(self._on_event)
            self._listening = False
        super().close()

    @property
    def following(self) -> bool:
        return self._listening

    # -- what the front end gets ---------------------------------------------------------------
    def header_data(self) -> dict[str, Any]:
        if self.agent is not None:
            return agent_header(self.agent, self.title, self._status, self._error)
        return capture_header(self.records, self.title, self._status, self._error)

    def _new_panes_key(self) -> str:
        """A fresh key, or none where panes do not settle (the page keeps them per view)."""
        return secrets.token_hex(8) if self.panes_settle else ""

    def _panes_for(self, index: int) -> dict[str, Any]:
        """The panes of request `index` (out of range: the newest), each built once."""
        if not self.records:
            return {}
        if index < 0 or index >= len(self.records):
            index = len(self.records) - 1
        data = self._built.get(index)
        if data is None:
            previous = self.records[index - 1] if index else None
            data = self._lazy_panes(self.records[index], previous)
            if not self.panes_settle:
                return data
            self._built[index] = data
            for old in [i for i in self._built if i < index - self.built_kept]:
                del self._built[old]
        return data

    def _sync_all(self) -> None:
        with self.hold_sync():
            self.header = self.header_data()
            self.count = len(self.records)
            self.tail = {"start": 0, "items": [timeline_item(r) for r in self.records]}
            self._sent = self._panes_sent = len(self.records)
            self.panes = self._panes_for(self.selected)

    def _send_passed_panes(self) -> None:
        """The panes of the requests a flush passes over (coalesced), so that a view opens
        them while the kernel is still busy with the turn."""
        for index in range(self._panes_sent, len(self.records) - 1):
            self.send({"type": "panes", "index": index, "data": self._panes_for(index)})
        self._panes_sent = len(self.records)

    def _flush(self, shrunk: bool = False) -> None:
        """Send what changed since the last flush: header, new items, the newest panes."""
        with self.hold_sync():
            self.header = self.header_data()
            self.count = len(self.records)
            start = min(self._sent, len(self.records))
            if start < len(self.records) or shrunk:
                items = [timeline_item(r) for r in self.records[start:]]
                self.tail = {"start": start, "items": items}
            self._sent = len(self.records)
            if self.selected < 0:
                self.panes = self._panes_for(-1)
        self._send_passed_panes()
        self._flushed = time.monotonic()

    # -- following the agent ------------------------------------------------------------------
    def _on_event(self, event: AgentEvent) -> None:
        if event.kind == "turn_start":
            self._status, self._error = self._running(), None
            self.header = self.header_data()
        elif event.kind == "step" and event.step is not None:
            self._add_step(event.step)
        elif event.kind == "keep_warm" and event.step is not None:
            self._add_step(event.step)  # sent while idle: a request of its own, shown at once
            self._committed = len(self.records)
            self._status = "idle"
            self._flush()
        elif event.kind == "turn_end":
            self._committed = len(self.records)
            self._status = "idle"
            self._flush()
        elif event.kind == "turn_failed":
            del self.records[self._committed :]
            self._built = {i: d for i, d in self._built.items() if i < len(self.records)}
            self.panes_key = self._new_panes_key()  # the page's panes past here are stale
            self._status, self._error = "idle", event.error
            self._sent = min(self._sent, len(self.records))
            self._panes_sent = min(self._panes_sent, len(self.records))
            self._flush(shrunk=True)

    def _add_step(self, step: Step) -> None:
        assert self.agent is not None
        previous = self.records[-1] if self.records else None
        record = from_step(len(self.records), step, self.agent, previous)
        self.records.append(record)
        self.preview = None
        if self.switched:
            self.switched = {}
        self._status = self._running()
        if time.monotonic() - self._flushed >= self.flush_s:
            self._flush()

    def _running(self) -> str:
        """The status while a turn runs: the same words from its start to its end."""
        assert self.agent is not None
        done = len(self.records) - self._committed
        return f"running turn {self.agent.turns + 1} · {done} request(s) done"

    def refresh(self) -> None:
        """Re-read the agent's steps (after a reset, load or provider switch)."""
        if self.agent is not None:
            self.records = step_records(self.agent, self.agent.steps)
            self._committed = len(self.records)
        self._built = {}
        self.panes_key = self._new_panes_key()
        self._sync_all()

    def snapshot(self, start: int = 0) -> tuple[str, str]:
        """The static HTML and plain text of the requests from `start` on: what a cell's
        output keeps once a newer cell has the live view."""
        header = {**self.header_data(), "status": "idle"}
        records = self.records[start:]
        previous = self.records[start - 1] if 0 < start <= len(self.records) else None
        return snapshot_html(records, header, previous), plain_text(records, header)

    # -- switching provider -----------------------------------------------------------------
    def preview_as(self, provider: str) -> RequestRecord:
        """The session as it stands serialized for `provider` (not sent, nothing switched)."""
        assert self.agent is not None
        check_provider(provider)
        if provider == self.agent.provider:
            model, options = self.agent.model, self.agent.options
        else:
            model = DEMO_MODELS.get(provider, self.agent.model)
            keep = ("search", "load_mode")
            options = {k: v for k, v in self.agent.options.items() if k in keep and v}
        record = preview_record(self.agent, provider, model, options)
        self.previews[provider] = record
        return record

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
        self.preview = self.previews[provider] = record
        self._error = None
        with self.hold_sync():
            self.header = self.header_data()
            data = self._lazy_panes(record, None)
            self.switched = {"provider": provider, "item": timeline_item(record), "panes": data}
            self.panes = data
        return record

    # -- what the front end asks ----------------------------------------------------------------
    def _on_selected(self, change: dict[str, Any]) -> None:
        self.panes = self._panes_for(int(change["new"]))

    def _msg_preview(self, content: dict[str, Any]) -> dict[str, Any]:
        provider = str(content.get("provider", ""))
        if self.agent is None:
            raise ValueError("a captured log has no session to preview")
        record = self.preview_as(provider)
        return {
            "type": "preview",
            "provider": provider,
            "current": provider == self.agent.provider,
            "item": timeline_item(record),
            "data": self._lazy_panes(record, None),
        }

    def _msg_switch(self, content: dict[str, Any]) -> dict[str, Any]:
        provider = str(content.get("provider", ""))
        if self.agent is None:
            raise ValueError("a captured log has no session to switch")
        check_provider(provider)
        before = self.agent.provider
        record = self.preview_as(provider)
        options = {k: v for k, v in self.agent.options.items() if k in ("search", "load_mode")}
        if provider == before:
            options = dict(self.agent.options)
        self.switch(provider, record.model, options)
        return {
            "type": "switched",
            "provider": provider,
            "text": f"session switched: {before} → {provider} ({record.model}); the next "
            "turn is serialized for it and starts cold (each provider keeps its own cache)",
        }

    # -- display ---------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return plain_text(self.records, self.header_data())

    def widget_bundle(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The widget's own mimebundle: the view, and a one-line `text/plain`."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data["text/plain"] = repr(self)
        return data, metadata

    def show_live(self, show: Callable[..., Any]) -> LiveCell:
        """Show the view with `show` (IPython's `display`) as a live cell's two outputs: its
        saved turn, then the widget (`view_output`); the handle updates both."""
        return LiveCell(self, show)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        data, metadata = self.widget_bundle(**kwargs)
        if self.cell_start is not None and self.selected < 0:
            data["text/html"] = self.snapshot(self.cell_start)[0]
        else:
            data["text/html"] = static_html(self.records, self.header_data(), self.selected)
        return data, metadata
