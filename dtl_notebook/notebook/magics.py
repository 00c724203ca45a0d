"""`%%agent` and `%dtl`: run turns and look inside them from a notebook.

`%%agent` runs one user turn on a named session (an `Agent` in the user namespace, `agent`
by default) and shows its live view; `%dtl SUBCOMMAND` works on the same session.
"""

from __future__ import annotations

import os
import re
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Int, TraitError, Unicode, validate

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.demo import DEMO_MODELS, demo_session
from dtl_notebook.live.agent import Agent, TurnError
from dtl_notebook.live.transport import KEY_VARIABLES, emulator_transport, live_transport, redact
from dtl_notebook.notebook.args import (
    ENGINES,
    LOCAL_ENGINES,
    TRANSPORTS,
    CellArgs,
    check_fits,
    check_provider,
    model_from,
)
from dtl_notebook.notebook.commands import Commands
from dtl_notebook.notebook.widget import AgentView
from dtl_notebook.wire import PROVIDERS

_VARIABLE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class AgentTurnError(Exception):
    """A turn failed at the provider; shown as one red line (`%tb` has the rest)."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{self}\x1b[0m  (%tb shows the full traceback)"]


def interpolate(text: str, namespace: dict[str, Any]) -> str:
    """`{name}` becomes the value of `name` in the namespace; `{{`/`}}` are literal braces."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        return str(namespace[name]) if name in namespace else token

    return _VARIABLE.sub(replace, text)


@magics_class
class AgentMagics(Magics):
    """Defaults for `%%agent`: `%config AgentMagics.provider = "anthropic"` and so on."""

    provider = Unicode("anthropic", help="Provider of new sessions.").tag(config=True)
    model = Unicode("", help="Model; empty: the provider's demo model.").tag(config=True)
    transport = Unicode("emulator", help="'emulator' (offline) or 'live'.").tag(config=True)
    search = Unicode("bm25", help="Search engine of the tool_search tool.").tag(config=True)
    max_steps = Int(10, help="Requests per turn at most.").tag(config=True)

    @validate("provider")
    def _valid_provider(self, proposal: Any) -> str:
        value = str(proposal["value"])
        if value not in PROVIDERS:
            raise TraitError(f"unknown provider {value!r}; choose one of {', '.join(PROVIDERS)}")
        return value

    @validate("transport")
    def _valid_transport(self, proposal: Any) -> str:
        value = str(proposal["value"])
        if value not in TRANSPORTS:
            raise TraitError(f"transport must be one of {', '.join(TRANSPORTS)}, got {value!r}")
        return value

    @validate("search")
    def _valid_search(self, proposal: Any) -> str:
        value = str(proposal["value"])
        if value not in ENGINES:
            raise TraitError(f"unknown search engine {value!r}; choose one of {', '.join(ENGINES)}")
        return value

    @validate("max_steps")
    def _valid_max_steps(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if not 1 <= value <= 100:
            raise TraitError(f"max_steps must be between 1 and 100, got {value}")
        return value

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        self.views: dict[str, AgentView] = {}
        self.commands = Commands(self)

    @property
    def namespace(self) -> dict[str, Any]:
        """The user namespace, where sessions live as Agents."""
        assert self.shell is not None
        return self.shell.user_ns  # type: ignore[no-any-return]

    # -- sessions ---------------------------------------------------------------------------
    def agent_for(self, name: str, create: bool = True) -> Agent:
        """The Agent bound to `name` in the user namespace, created on first use."""
        namespace = self.namespace
        value = namespace.get(name)
        if isinstance(value, Agent):
            return value
        if value is not None:
            raise UsageError(
                f"`{name}` in the namespace is a {type(value).__name__}, not an Agent; "
                "pick another name with --session NAME"
            )
        if not create:
            raise UsageError(f"no session `{name}` yet: run a %%agent cell first")
        agent = self.new_agent(self.provider, self.model or DEMO_MODELS[self.provider])
        namespace[name] = agent
        return agent

    def new_agent(
        self, provider: str, model: str, search: str | None = None, load_mode: str | None = None
    ) -> Agent:
        """A fresh demo session: local engines search in the session, native ones on the wire."""
        engine = search or self.search
        try:
            check_fits(provider, engine, load_mode)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        session = demo_session(search=engine if engine in LOCAL_ENGINES else "bm25")
        options: dict[str, Any] = {"search": engine} if engine not in LOCAL_ENGINES else {}
        if load_mode:
            options["load_mode"] = load_mode
        transport = self._transport(provider, self.transport == "live")
        return Agent(session, provider, model, transport, max_steps=self.max_steps, **options)

    def _transport(self, provider: str, live: bool) -> Any:
        if not live:
            return emulator_transport(provider)
        variable = KEY_VARIABLES[provider]
        if not os.environ.get(variable):
            raise UsageError(f"--live needs an API key: set the {variable} environment variable")
        return live_transport(provider)

    def view_for(self, name: str, agent: Agent) -> AgentView:
        view = self.views.get(name)
        if view is None or view.agent is not agent:
            view = AgentView(agent, title=f"session `{name}`")
            self.views[name] = view
        return view

    # -- %%agent -----------------------------------------------------------------------------
    @magic_arguments()
    @argument("--session", default="agent", help="Name of the Agent in the namespace.")
    @argument("--provider", help=f"One of {', '.join(PROVIDERS)}.")
    @argument("--model", help="Model name (default: the provider's demo model).")
    @argument("--search", help=f"Search: {', '.join(ENGINES)}.")
    @argument("--load-mode", help="openai-responses: additional_tools, tool_search, full_list.")
    @argument("--live", action="store_true", help="Talk to the real provider (needs a key).")
    @argument("--max-steps", type=int, help="Requests per turn at most (1-100).")
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run one user turn: the cell body is the user message ({name} is interpolated).

        The session's live view appears at once and fills in step by step. Defaults come
        from `%config AgentMagics.*`. Provider options change the session's provider from
        this turn on (the same session, re-serialized).
        """
        if cell is None:
            raise UsageError("%%agent is a cell magic: write the user message in the cell body")
        try:
            raw = parse_argstring(self.agent, line)
        except ValueError as exc:  # shlex: an unbalanced quote
            raise UsageError(f"cannot parse the %%agent line ({exc})") from None
        args: CellArgs = model_from(CellArgs, {k: v for k, v in vars(raw).items()})
        text = interpolate(cell, self.namespace).strip()
        if not text:
            raise UsageError("empty cell: write the user message below the %%agent line")
        namespace = self.namespace
        fresh = not isinstance(namespace.get(args.session), Agent)
        if fresh and args.session in namespace:
            self.agent_for(args.session)  # raises the clear error for a non-Agent value
        provider = args.provider or (self.provider if fresh else namespace[args.session].provider)
        check_provider(provider)
        if fresh:
            model = args.model or self.model or DEMO_MODELS[provider]
            agent = self.new_agent(provider, model, args.search, args.load_mode)
            if args.live:
                agent.use_transport(self._transport(provider, True))
            namespace[args.session] = agent
        else:
            agent = namespace[args.session]
            self._reconfigure(agent, args, provider)
        if args.max_steps is not None:
            agent.max_steps = args.max_steps
        view = self.view_for(args.session, agent)
        handle = display(view, display_id=True)
        try:
            result = agent.run(text)
        except TurnError as exc:
            raise AgentTurnError(redact(str(exc))) from None
        finally:
            if handle is not None:
                handle.update(view)
        answer = result.text if result.text is not None else f"(stopped: {result.stopped})"
        print(redact(f"{agent.provider}: {answer}"))

    def _options(self, args: CellArgs, provider: str) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if args.search and args.search not in LOCAL_ENGINES:
            options["search"] = args.search
        if args.load_mode:
            options["load_mode"] = args.load_mode
        return options

    def _reconfigure(self, agent: Agent, args: CellArgs, provider: str) -> None:
        search = args.search or (
            agent.options.get("search") if provider == agent.provider else None
        )
        try:
            check_fits(provider, search, args.load_mode)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.search in LOCAL_ENGINES and args.search != agent.session.search:
            raise UsageError(
                f"this session searches with {agent.session.search}; start another with "
                f"--session NAME (or %dtl reset) to use {args.search}"
            )
        model = args.model or (agent.model if provider == agent.provider else DEMO_MODELS[provider])
        kept = dict(agent.options) if provider == agent.provider else {}
        options = kept | self._options(args, provider)
        wanted_live = args.live or (agent.label == "live" and provider == agent.provider)
        changed = (provider, model, options) != (agent.provider, agent.model, agent.options)
        if changed:
            try:
                agent.switch(provider, model, **options)
            except (DtlError, ValueError) as exc:
                raise UsageError(str(exc)) from None
        if wanted_live != (agent.label == "live"):
            agent.use_transport(self._transport(provider, wanted_live))

    # -- %dtl --------------------------------------------------------------------------------
    @line_magic
    def dtl(self, line: str) -> Any:
        """Look inside a session: `%dtl SUBCOMMAND --help` for each.

        Subcommands: tools [QUERY], search QUERY, activate NAME..., provider P [--model M],
        compare, show [STEP], diff A B, inspect FILE.jsonl, save PATH, load PATH,
        export PATH.html, reset. Every one takes --session NAME (default: agent).
        """
        return self.commands.run(line)
