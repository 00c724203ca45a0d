"""The sessions of `%%agent` and `%dtl`: Agents by name in the user namespace.

`Sessions` owns the name -> Agent mapping and never replaces a value that is not an Agent (a
user's own `df` stays theirs); a name that holds no session is an error that lists the ones
there are, so a typo never acts on another session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from dtl_notebook.agent.session import Session
from dtl_notebook.demo import DEMO_MODELS, demo_catalog, demo_session
from dtl_notebook.live.agent import Agent
from dtl_notebook.live.recording import Recorder
from dtl_notebook.live.transport import (
    KEY_VARIABLES,
    TRANSPORTS,
    Transport,
    emulator_transport,
    live_transport,
)
from dtl_notebook.notebook.display import HTML
from dtl_notebook.notebook.widget import AgentView
from dtl_notebook.wire.modes import (
    LOCAL_ENGINES,
    PROVIDERS,
    ModeConflictError,
    check_modes,
    search_mode,
)

Namespace = MutableMapping[str, Any]


@dataclass(frozen=True)
class Settings:
    """The `%config AgentMagics.*` values that new sessions are made with."""

    provider: str = PROVIDERS[0]  # the provider table's first row
    model: str = ""
    transport: str = "emulator"
    search: str = "bm25"
    load_mode: str | None = None
    max_steps: int = 10

    def model_for(self, provider: str) -> str:
        return self.model or DEMO_MODELS[provider]


def make_transport(provider: str, live: bool) -> Transport:
    """The emulator, or the provider itself when `live` (its key variable must be set)."""
    if not live:
        return emulator_transport(provider)
    variable = KEY_VARIABLES[provider]
    if not os.environ.get(variable):
        raise UsageError(f"--live needs an API key: set the {variable} environment variable")
    return live_transport(provider)


def new_agent(
    settings: Settings,
    provider: str,
    model: str | None = None,
    engine: str | None = None,
    load_mode: str | None = None,
    live: bool = False,
) -> Agent:
    """A fresh demo session: local engines search in the session, native ones on the wire."""
    engine = engine or settings.search
    load_mode = load_mode or settings.load_mode
    check_modes(provider, search_mode(engine), load_mode)
    session = demo_session(search=engine if engine in LOCAL_ENGINES else "bm25")
    options: dict[str, Any] = {} if engine in LOCAL_ENGINES else {"search": engine}
    if load_mode:
        options["load_mode"] = load_mode
    transport = make_transport(provider, live or settings.transport == "live")
    model = model or settings.model_for(provider)
    return Agent(session, provider, model, transport, max_steps=settings.max_steps, **options)


def options_for(
    agent: Agent, provider: str, name: str, engine: str | None = None, load_mode: str | None = None
) -> dict[str, Any]:
    """The agent's options on `provider`: all of them on the same provider; to another, only
    its search and load modes carry over (the rest are per provider). `engine` and `load_mode`,
    when given, replace the session's. A conflict names where the value came from."""
    if provider == agent.provider:
        options = dict(agent.options)
    else:
        kept = {k: agent.options.get(k) for k in ("search", "load_mode")}
        options = {k: v for k, v in kept.items() if v not in (None, "client")}
    if engine is not None:
        options.pop("search", None)
        if search_mode(engine) is not None:
            options["search"] = engine
    if load_mode is not None:
        options["load_mode"] = load_mode
    try:
        check_modes(provider, options.get("search"), options.get("load_mode"))
    except ModeConflictError as exc:
        given = {"search": engine, "load_mode": load_mode}.get(exc.field)
        if given is not None or exc.field not in agent.options:
            raise
        hint = (
            f"%%agent --provider {provider} --search {agent.session.search or 'bm25'} switches "
            "and searches in the session instead"
            if exc.field == "search"
            else f"%dtl reset --session {name} starts it afresh"
        )
        raise UsageError(
            f"session `{name}` has {exc.field}={exc.value!r}, which {provider} cannot take "
            f"({exc}); {hint}"
        ) from None
    return options


@dataclass
class LiveOutput:
    """The cell output that shows a session's live view, and the first request of its turn."""

    view: AgentView
    handle: Any  # IPython's DisplayHandle (update(obj)), or None where nothing was displayed
    start: int

    def retire(self) -> None:
        """The output keeps the static snapshot of its own turn; the view stops following."""
        if self.handle is not None and hasattr(self.handle, "update"):
            html, text = self.view.snapshot(self.start)
            self.handle.update(HTML(html, text))
        self.view.close()


class Sessions:
    """The Agents of the magics by name in the user namespace, and their views.

    A session has one live view at a time, in the output of its newest `%%agent` cell; the
    output before it becomes the static snapshot of its own turn (`display_live`).
    """

    def __init__(self, namespace: Namespace | Callable[[], Namespace]) -> None:
        self._namespace = namespace
        self.views: dict[str, AgentView] = {}
        self.outputs: dict[str, LiveOutput] = {}

    @property
    def namespace(self) -> Namespace:
        return self._namespace() if callable(self._namespace) else self._namespace

    def names(self) -> list[str]:
        """The names bound to an Agent (IPython's `_`, `_1`... output names left out)."""
        return [n for n, v in self.namespace.items() if isinstance(v, Agent) and n[0] != "_"]

    def find(self, name: str) -> Agent | None:
        """The Agent named `name`, None where the name is free; a name holding anything else
        is an error (the value is the user's: it is never replaced)."""
        namespace = self.namespace
        value = namespace.get(name)
        if isinstance(value, Agent):
            return value
        if name in namespace:
            raise UsageError(
                f"`{name}` in the namespace is a {type(value).__name__}, not an Agent; "
                "pick another name with --session NAME"
            )
        return None

    def get(self, name: str) -> Agent:
        """The existing session `name`; a free name lists the sessions there are."""
        agent = self.find(name)
        if agent is None:
            raise UsageError(self._missing(name))
        return agent

    def get_or_create(self, name: str, settings: Settings) -> Agent:
        """The session `name`; the first session of a kernel is created on first use, later
        ones only by %%agent (so a mistyped name never starts another)."""
        agent = self.find(name)
        if agent is not None:
            return agent
        if self.names():
            raise UsageError(self._missing(name))
        agent = new_agent(settings, settings.provider)
        self.bind(name, agent)
        return agent

    def bind(self, name: str, agent: Agent) -> None:
        """Bind `name` to `agent`: a free name, or one holding an Agent (its view goes)."""
        self.find(name)
        self.namespace[name] = agent
        self.retire(name)
        view = self.views.pop(name, None)
        if view is not None:
            view.close()

    def view(self, name: str, agent: Agent) -> AgentView:
        """The session's live view (made, not displayed, when it has none)."""
        view = self.views.get(name)
        if view is None or view.agent is not agent:
            self.retire(name)
            if view is not None:
                view.close()
            view = AgentView(agent, title=f"session `{name}`")
            self.views[name] = view
        return view

    def display_live(self, name: str, agent: Agent, show: Callable[..., Any]) -> AgentView:
        """Show a new live view of `name` here; the output that had it keeps its turn."""
        self.retire(name)
        old = self.views.pop(name, None)
        if old is not None:
            old.close()
        view = AgentView(agent, title=f"session `{name}`", history=old)
        view.cell_start = len(agent.steps)
        self.views[name] = view
        handle = view.show_live(show)
        self.outputs[name] = LiveOutput(view, handle, len(agent.steps))
        return view

    def is_displayed(self, name: str) -> bool:
        output = self.outputs.get(name)
        return output is not None and output.view is self.views.get(name)

    def retire(self, name: str) -> None:
        output = self.outputs.pop(name, None)
        if output is not None:
            output.retire()

    def _missing(self, name: str) -> str:
        names = self.names()
        if not names:
            return f"no session `{name}` yet: run a %%agent cell first"
        return (
            f"no session `{name}`; the sessions are {', '.join(f'`{n}`' for n in names)} "
            f"(name one with --session NAME, or start `{name}` with %%agent --session {name})"
        )


def load_agent(path: str, previous: Agent | None, settings: Settings) -> Agent:
    """A saved session as an Agent: on the previous session's provider, model and options
    (else the configured ones) and the configured transport; each tool gets the
    implementation of the same definition in the previous session, else in the demo catalog."""
    try:
        session = Session.load(path)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    known = {t.name: t for t in demo_catalog()}
    if previous is not None:
        known.update((t.name, t) for t in previous.session.registry)
    for tool in session.registry:
        source = known.get(tool.name)
        if tool.execute is None and source is not None and source.execute and source == tool:
            session.registry.register(source, replace=True)
    provider = previous.provider if previous else settings.provider
    model = previous.model if previous else settings.model_for(provider)
    options = dict(previous.options) if previous else {}
    transport = transport_like(previous, provider, settings)
    return Agent(session, provider, model, transport, max_steps=settings.max_steps, **options)


def transport_like(previous: Agent | None, provider: str, settings: Settings) -> Transport:
    """The transport a session loaded over `previous` sends through: the previous session's
    own where it is the user's (a replay, a client of theirs: no key is asked for), else a
    fresh emulator or the provider itself (live where either it or the settings were)."""
    kind = previous.transport.name if previous is not None else settings.transport
    if previous is not None and kind not in TRANSPORTS:
        transport = previous.transport
        # the previous agent's recording stays its own: the loaded one starts unrecorded
        return transport.inner if isinstance(transport, Recorder) else transport
    return make_transport(provider, "live" in (kind, settings.transport))


__all__ = [
    "LiveOutput",
    "Sessions",
    "Settings",
    "load_agent",
    "make_transport",
    "new_agent",
    "options_for",
    "transport_like",
]
