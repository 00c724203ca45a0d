"""The `%dtl` subcommands, each an argparse parser in the product's wording.

They run against a `CommandContext` (the sessions, the current settings, a display
function), so they work without an IPython shell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.display import display

from dtl_notebook.agent.tool_search import SessionSearch
from dtl_notebook.live.agent import Agent
from dtl_notebook.notebook.args import HelpShown, split_line
from dtl_notebook.notebook.command_parser import command_parser
from dtl_notebook.notebook.compare import (
    compare_html,
    diff_html,
    mapping_html,
    reserialized,
)
from dtl_notebook.notebook.display import HTML, table
from dtl_notebook.notebook.document import panes
from dtl_notebook.notebook.errors import user_errors
from dtl_notebook.notebook.export import export_html
from dtl_notebook.notebook.health_view import status_text
from dtl_notebook.notebook.html import code, element, esc, mark, static_block, text
from dtl_notebook.notebook.proxy_commands import ProxyControl
from dtl_notebook.notebook.records import (
    RequestRecord,
    from_capture,
)
from dtl_notebook.notebook.sessions import Sessions, Settings, load_agent, new_agent, options_for
from dtl_notebook.notebook.widget import AgentView
from dtl_notebook.wire.modes import check_provider

ROW_LIMIT = 300


@dataclass(frozen=True)
class CommandContext:
    """What the subcommands work with: the sessions, the current `%config` settings (read
    at each command) and how to display a view."""

    sessions: Sessions
    settings: Callable[[], Settings] = Settings
    show: Callable[..., object] = display  # called with display_id=True


class Commands:
    """Runs one `%dtl` line against the sessions of a context."""

    def __init__(self, context: CommandContext) -> None:
        self.context = context
        self.parser, self.parsers = command_parser()
        self.proxy = ProxyControl()

    @user_errors
    def run(self, line: str) -> Any:
        words = split_line(line)
        if not words:
            raise UsageError(f"%dtl needs a subcommand: {', '.join(self.parsers)}")
        if words[0] not in self.parsers and not words[0].startswith("-"):
            raise UsageError(
                f"unknown subcommand {words[0]!r}; choose one of {', '.join(self.parsers)}"
            )
        command = self.parsers.get(words[0])
        try:  # a subcommand's own parser names it in every mistake
            args = command.parse_args(words[1:]) if command else self.parser.parse_args(words)
        except HelpShown:
            return None
        return getattr(self, f"do_{args.command if command is None else words[0]}")(args)

    # -- helpers -----------------------------------------------------------------------------
    def _agent(self, args: Any, create: bool = True) -> Agent:
        sessions = self.context.sessions
        if create:
            return sessions.get_or_create(args.session, self.context.settings())
        return sessions.get(args.session)

    def _view(self, args: Any) -> AgentView:
        return self.context.sessions.view(args.session, self._agent(args))

    def _record(self, view: AgentView, step: int | None) -> RequestRecord:
        if not view.records:
            raise UsageError("no request yet: run a %%agent cell first")
        if step is None:
            return view.records[-1]
        if not 1 <= step <= len(view.records):
            raise UsageError(f"no request {step}: this session has 1 to {len(view.records)}")
        return view.records[step - 1]

    # -- subcommands -------------------------------------------------------------------------
    def do_tools(self, args: Any) -> HTML:
        session = self._agent(args).session
        entered = session.entered()
        needle = (args.query or "").lower()
        active = set(session.active_tools)
        rows, text = [], []
        for tool in session.registry:
            if needle and needle not in f"{tool.name} {tool.description}".lower():
                continue
            where = entered.get(tool.name)
            state = "in the prefix" if tool.name in active else ""
            if where is not None:
                state = f"after message #{where}"
            marked = mark(esc(state)) if where is not None else esc(state)
            rows.append([code(tool.name), marked, esc(tool.description[:120])])
            text.append(f"{'*' if tool.name in active else ' '} {tool.name}  {state}")
        shown = rows[:ROW_LIMIT]
        caption = (
            f"{len(rows)} of {len(session.registry)} tools"
            + (f" (first {ROW_LIMIT} shown)" if len(rows) > ROW_LIMIT else "")
            + f"; {len(active)} active"
        )
        return HTML(table(["tool", "active", "description"], shown, caption), "\n".join(text))

    def do_search(self, args: Any) -> HTML:
        session = self._agent(args).session
        if session.search is None:
            raise UsageError("this session has no local tool_search engine")
        searcher = SessionSearch(session, session.search)
        query = " ".join(args.query)
        hits = searcher.search(query, args.limit)
        if not hits:
            nothing = (
                f"{session.search} search for {query!r}: no tool matches (%dtl tools lists them)"
            )
            return HTML(element("p", esc(nothing)), nothing)
        active = set(session.active_tools)
        rows = [
            [
                str(i + 1),
                code(t.name),
                "active" if t.name in active else "",
                esc(t.description[:120]),
            ]
            for i, t in enumerate(hits)
        ]
        caption = f"{session.search} search for {query!r}: {len(hits)} hit(s), nothing activated"
        text = "\n".join(f"{i + 1}. {t.name}" for i, t in enumerate(hits))
        return HTML(table(["#", "tool", "", "description"], rows, caption), text)

    def do_activate(self, args: Any) -> None:
        session = self._agent(args).session
        unknown = [n for n in args.names if n not in session.registry]
        if unknown:
            raise UsageError(f"not registered: {', '.join(unknown)} (see %dtl tools)")
        added = session.activate(args.names)
        if not added:  # nothing changes in the next request: no break to announce
            print(f"already active: {', '.join(args.names)} (nothing changes)")
            return
        them = "it" if len(added) == 1 else "them"
        print(
            f"activated {', '.join(added)} outside a tool run: no load point is written, so "
            f"the next request carries {them} in the prefix (a visible cache break)"
        )

    def do_provider(self, args: Any) -> None:
        provider = args.provider
        view = self._view(args)
        agent = view.agent
        assert agent is not None
        options = options_for(agent, provider, args.session)
        model = args.model or self.context.settings().model_for(provider)
        record = view.switch(provider, model, options)
        if not self.context.sessions.is_displayed(args.session):
            self.context.sessions.display_live(args.session, agent, self.context.show)
        print(
            f"now {provider} ({record.model}): the same session re-serialized as mode "
            f"{record.mode} with {len(record.load_points)} load point(s)"
        )

    def do_compare(self, args: Any) -> HTML:
        return compare_html(self._agent(args))

    def do_show(self, args: Any) -> HTML:
        view = self._view(args)
        record = self._record(view, args.step)
        data = panes(record, view.records[record.index - 1] if record.index else None)
        sections = "".join(
            element("details", text("summary", label) + data[name], open=name == "context")
            for name, label in (
                ("state", "Agent state"),
                ("request", "Request JSON"),
                ("context", "Model context"),
            )
        )
        # the title is a line of its own: the break and the cost line follow below it
        title = element("div", text("b", data["title"]))
        html = static_block(title + data["break"] + data["summary"] + sections)
        return HTML(html, data["title"])

    def do_diff(self, args: Any) -> HTML:
        view = self._view(args)
        items = args.items
        if len(items) == 2 and all(i.isdigit() for i in items):
            a, b = (self._record(view, int(i)) for i in items)
            title = f"request {a.index + 1} → request {b.index + 1}"
        elif len(items) == 3 and items[0].isdigit():
            step = self._record(view, int(items[0]))
            providers = [check_provider(p) for p in items[1:]]
            if view.agent is None or step.state is None:
                raise UsageError("only requests of a running session can be re-serialized")
            a, b = (reserialized(view.agent, step, p) for p in providers)
            title = f"request {step.index + 1} on {providers[0]} and {providers[1]}"
            return mapping_html([a, b], step.entered, title)
        else:
            raise UsageError(
                "%dtl diff takes two request numbers (3 4) or N P1 P2 (4 anthropic kimi)"
            )
        return diff_html(a, b, title)

    def do_inspect(self, args: Any) -> AgentView:
        path = Path(args.path)
        if not path.is_file():
            raise UsageError(f"no such file: {args.path}")
        records = from_capture(path)
        if not records:
            raise UsageError(f"{args.path}: no requests")
        return AgentView(records=records, title=f"captured: {path.name}")

    def do_save(self, args: Any) -> None:
        agent = self._agent(args, create=False)
        try:
            agent.session.save(args.path)
        except OSError as exc:
            raise UsageError(f"cannot save to {args.path}: {exc.strerror or exc}") from None
        print(f"saved {len(agent.session.messages)} messages to {args.path}")

    def do_load(self, args: Any) -> None:
        sessions = self.context.sessions
        previous = sessions.find(args.session)  # a user's own value is never replaced
        agent = load_agent(args.path, previous, self.context.settings())
        sessions.bind(args.session, agent)
        sessions.display_live(args.session, agent, self.context.show)

    def do_export(self, args: Any) -> None:
        view = self._view(args)
        try:
            path = export_html(view, args.path)
        except OSError as exc:
            raise UsageError(f"cannot write {args.path}: {exc.strerror or exc}") from None
        print(f"wrote {path} ({path.stat().st_size:,} bytes, {len(view.records)} requests)")

    def do_proxy(self, args: Any) -> Any:
        return self.proxy.run(args)

    def do_status(self, args: Any) -> None:
        print(status_text(self._agent(args, create=False), args.session))

    def do_reset(self, args: Any) -> None:
        sessions = self.context.sessions
        sessions.find(args.session)  # a user's own value is never replaced
        settings = self.context.settings()
        agent = new_agent(settings, settings.provider)
        sessions.bind(args.session, agent)
        print(f"new session `{args.session}`: {agent!r}")


__all__ = ["CommandContext", "Commands"]
