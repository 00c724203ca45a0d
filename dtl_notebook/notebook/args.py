"""Magic arguments: argparse checks each option (`choices`, typed values); the one check of
how options combine is `wire.modes.check_modes`, turned into a `UsageError` here.

Every user mistake becomes an IPython `UsageError`: one red line that names the option, the
value and the choices, and no traceback.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import NoReturn

from IPython.core.error import UsageError

from dtl_notebook.agent.errors import DtlError
from dtl_notebook.live.transport import TRANSPORTS
from dtl_notebook.wire.modes import ENGINES, LOAD_MODES, PROVIDERS, check_modes, search_mode

__all__ = [
    "ENGINES",
    "LOAD_MODES",
    "MAX_STEPS",
    "PROVIDERS",
    "TRANSPORTS",
    "HelpShown",
    "Parser",
    "bounded_int",
    "check_options",
    "session_name",
    "split_line",
]

MAX_STEPS = (1, 100)  # requests per turn: the bounds of --max-steps and AgentMagics.max_steps


class HelpShown(Exception):
    """`--help` printed its text; nothing else to do."""


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            raise UsageError(message.strip())
        raise HelpShown


def session_name(value: str) -> str:
    """An argparse type: the name of a session is a Python name in the user namespace."""
    if not value.isidentifier():
        raise argparse.ArgumentTypeError(f"must be a Python name, got {value!r}")
    return value


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high`."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            number = low - 1
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value!r}")
        return number

    parse.__name__ = f"integer {low}-{high}"
    return parse


def split_line(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"cannot parse the arguments ({exc})") from None


def check_options(provider: str, engine: str | None, load_mode: str | None) -> None:
    """`wire.modes.check_modes` for a search engine (local or native), as a UsageError."""
    try:
        check_modes(provider, search_mode(engine) if engine else None, load_mode)
    except DtlError as exc:
        raise UsageError(str(exc)) from None
