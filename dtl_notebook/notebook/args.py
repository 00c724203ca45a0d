"""Magic arguments: argparse checks each option (typed values, choices with the near ones
offered); the one check of how options combine is `wire.modes.check_modes`.

Every mistake on a command line is worded by `errors.usage`: one red line that names the
option, the value and the choices, and no traceback.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Collection
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicHelpFormatter

from dtl_notebook.live.transport import TRANSPORTS
from dtl_notebook.notebook.errors import did_you_mean, usage
from dtl_notebook.wire.modes import ENGINES, LOAD_MODES, PROVIDERS

__all__ = [
    "ENGINES",
    "LOAD_MODES",
    "MAX_STEPS",
    "PROVIDERS",
    "TRANSPORTS",
    "HelpShown",
    "Parser",
    "bounded_int",
    "choice_of",
    "magic_arguments",
    "parse_line",
    "session_name",
    "split_line",
]

MAX_STEPS = (1, 100)  # requests per turn: the bounds of --max-steps and AgentMagics.max_steps


class HelpShown(Exception):
    """`--help` printed its text; nothing else to do."""


class Parser(argparse.ArgumentParser):
    """argparse that raises the product's UsageError instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise usage(self.prog, message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            raise usage(self.prog, message)
        raise HelpShown


def magic_arguments(prog: str) -> Callable[[Any], Any]:
    """IPython's `@magic_arguments()` in the product's wording: the magic's `@argument`s
    become its `parser` (a `Parser`) and its help text (`%%agent?`)."""

    def build(magic: Any) -> Any:
        parser = Parser(
            prog, description=magic.__doc__, formatter_class=MagicHelpFormatter, add_help=False
        )
        for decorator in magic.decorators[::-1]:
            decorator.add_to_parser(parser, None)
        magic.parser, magic.__doc__ = parser, parser.format_help()
        return magic

    return build


def parse_line(magic: Any, line: str) -> argparse.Namespace:
    """A magic's line, parsed by the parser `magic_arguments` gave it."""
    parser: Parser = magic.parser
    return parser.parse_args(split_line(line))


def session_name(value: str) -> str:
    """An argparse type: the name of a session is a Python name in the user namespace."""
    if not value.isidentifier():
        raise argparse.ArgumentTypeError(f"must be a Python name, got {value!r}")
    return value


def choice_of(choices: Collection[str]) -> Callable[[str], str]:
    """An argparse type: one of `choices`; a near miss is offered (`openai`: did you mean
    openai-responses or openai-chat?)."""

    def parse(value: str) -> str:
        if value not in choices:
            raise argparse.ArgumentTypeError(
                f"must be one of {', '.join(choices)}, got {value!r}{did_you_mean(value, choices)}"
            )
        return value

    parse.__name__ = "choice"
    return parse


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
