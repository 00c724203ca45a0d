"""`%%agent` and `%dtl`: run turns and look inside them from a notebook.

`%%agent` runs one user turn on a named session (an `Agent` in the user namespace, `agent`
by default) and shows its live view; `%dtl SUBCOMMAND` works on the same session.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument
from IPython.display import display
from traitlets import Enum, Int, Unicode

from dtl_notebook.cache.glance import miss_words
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live.agent import Agent, TurnError
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.args import (
    ENGINES,
    LOAD_MODES,
    MAX_STEPS,
    PROVIDERS,
    TRANSPORTS,
    bounded_int,
    choice_of,
    magic_arguments,
    parse_line,
    session_name,
)
from dtl_notebook.notebook.commands import CommandContext, Commands
from dtl_notebook.notebook.errors import user_errors
from dtl_notebook.notebook.sessions import (
    Sessions,
    Settings,
    make_transport,
    new_agent,
    options_for,
)
from dtl_notebook.notebook.widget import AgentView
from dtl_notebook.wire.modes import LOCAL_ENGINES

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
    """Defaults for `%%agent`: `%config AgentMagics.provider = 'kimi'` and so on."""

    provider = Enum(PROVIDERS, PROVIDERS[0], help="Provider of new sessions.").tag(config=True)
    model = Unicode("", help="Model; empty: the provider's demo model.").tag(config=True)
    transport = Enum(TRANSPORTS, "emulator", help="'emulator' (offline) or 'live'.").tag(
        config=True
    )
    search = Enum(ENGINES, "bm25", help="Search engine of new sessions.").tag(config=True)
    load_mode = Enum(
        LOAD_MODES, None, allow_none=True, help="openai-responses load mode of new sessions."
    ).tag(config=True)
    max_steps = Int(10, min=MAX_STEPS[0], max=MAX_STEPS[1], help="Requests per turn at most.").tag(
        config=True
    )

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        self.sessions = Sessions(lambda: self.shell.user_ns)  # type: ignore[union-attr]
        self.commands = Commands(CommandContext(self.sessions, self.settings, display))

    @property
    def views(self) -> dict[str, AgentView]:
        return self.sessions.views

    def settings(self) -> Settings:
        """The current `%config` values."""
        return Settings(
            provider=self.provider,
            model=self.model,
            transport=self.transport,
            search=self.search,
            load_mode=self.load_mode,
            max_steps=self.max_steps,
        )

    # -- %%agent -----------------------------------------------------------------------------
    @user_errors
    @magic_arguments("%%agent")
    @argument(
        "--session", default="agent", type=session_name, help="Name of the Agent in the namespace."
    )
    @argument("--provider", type=choice_of(PROVIDERS), help=f"One of {', '.join(PROVIDERS)}.")
    @argument("--model", help="Model name (default: the provider's demo model).")
    @argument("--search", type=choice_of(ENGINES), help=f"Search: {', '.join(ENGINES)}.")
    @argument(
        "--load-mode",
        type=choice_of(LOAD_MODES),
        help=f"openai-responses: {', '.join(LOAD_MODES)}.",
    )
    @argument("--live", action="store_true", help="Talk to the real provider (needs a key).")
    @argument(
        "--threads",
        action="store_true",
        help="Anthropic message threads: continuations carry only the new messages.",
    )
    @argument(
        "--max-steps",
        type=bounded_int(*MAX_STEPS),
        help=f"Requests per turn at most ({MAX_STEPS[0]}-{MAX_STEPS[1]}).",
    )
    @argument(
        "--keep-warm",
        action="store_true",
        help="Keep the session's prefix warm while you are idle, where a refresh costs less "
        "than the miss it prevents (each refresh shows in the view; %%dtl status tells).",
    )
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run one user turn: the cell body is the user message ({name} is interpolated).

        The session's live view appears at once and fills in step by step. Defaults come
        from `%config AgentMagics.*`. Provider options change the session's provider from
        this turn on (the same session, re-serialized).
        """
        if cell is None:
            raise UsageError("%%agent is a cell magic: write the user message in the cell body")
        args = parse_line(self.agent, line)
        text = interpolate(cell, self.shell.user_ns).strip()  # type: ignore[union-attr]
        if not text:
            raise UsageError("empty cell: write the user message below the %%agent line")
        agent = self.sessions.find(args.session)
        if agent is None:
            settings = self.settings()
            provider = args.provider or settings.provider
            model = args.model or settings.model_for(provider)
            agent = new_agent(settings, provider, model, args.search, args.load_mode, args.live)
            self.sessions.bind(args.session, agent)
        else:
            self._reconfigure(agent, args)
        if args.threads:
            agent.use_threads()
        if args.max_steps is not None:
            agent.max_steps = args.max_steps
        if args.keep_warm and agent.keep_warm is None:
            agent.set_keep_warm(True)
        view = self.sessions.display_live(args.session, agent, display)
        try:
            result = agent.run(text)
        except TurnError as exc:
            raise AgentTurnError(redact(str(exc))) from None
        finally:
            output = self.sessions.outputs.get(args.session)
            if output is not None and output.view is view and output.handle is not None:
                output.handle.update(view)  # the saved fallback: this cell's requests so far
        answer = result.text if result.text is not None else f"(stopped: {result.stopped})"
        print(redact(f"{agent.provider}: {answer}"))
        for step in result.steps:  # a collapse: a notice under the answer, with its fix
            if step.cache_miss is not None:
                print(
                    f"⚠ request {agent.steps.index(step) + 1}: {miss_words(step.cache_miss)}",
                    file=sys.stderr,
                )

    def _reconfigure(self, agent: Agent, args: Any) -> None:
        """Apply a cell's options to an existing session; nothing changes on an error."""
        provider = args.provider or agent.provider
        if args.search in LOCAL_ENGINES and args.search != agent.session.search:
            raise UsageError(
                f"this session searches with {agent.session.search}; start another with "
                f"--session NAME (or %dtl reset) to use {args.search}"
            )
        options = options_for(agent, provider, args.session, args.search, args.load_mode)
        model = args.model or (agent.model if provider == agent.provider else DEMO_MODELS[provider])
        is_live = agent.transport.name == "live"
        wanted_live = args.live or (is_live and provider == agent.provider)
        transport = None
        if wanted_live != is_live:
            transport = make_transport(provider, wanted_live)  # a missing key changes nothing
        if (provider, model, options) != (agent.provider, agent.model, agent.options):
            agent.switch(provider, model, **options)
        if transport is not None:
            agent.use_transport(transport)

    # -- %dtl --------------------------------------------------------------------------------
    @line_magic
    def dtl(self, line: str) -> Any:
        """Look inside a session: `%dtl SUBCOMMAND --help` for each.

        Subcommands: tools [QUERY], search QUERY, activate NAME..., provider P [--model M],
        compare, show [STEP], diff A B, inspect FILE.jsonl, save PATH, load PATH,
        export PATH.html, reset, status (each takes --session NAME, default: agent); proxy
        start|stop|status (a cache-inspector proxy in this kernel, with its live view).
        """
        return self.commands.run(line)
