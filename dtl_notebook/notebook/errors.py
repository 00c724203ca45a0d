"""The product's errors as IPython `UsageError`s, mapped once at the entries of the magics.

Below the entries, code raises the product's own errors (`DtlError` and its kinds) or a
`UsageError` for a mistake only a notebook can make; `user_errors` turns the first into the
second where a magic or a `%dtl` command starts. A `UsageError` is one red line and no
traceback. Command-line mistakes are worded by `usage` (argparse's wording never reaches the
user), and an unknown value offers the near choices (`did_you_mean`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

from IPython.core.error import UsageError

from dtl_notebook.agent.errors import DtlError

P = ParamSpec("P")
R = TypeVar("R")

# `Agent.switch` refuses a transport it cannot switch with a ValueError; JSON of a saved
# session or a capture that does not parse is one too.
USER_ERRORS = (DtlError, ValueError)

_ARGUMENT = re.compile(r"argument (?P<name>[^:]+): (?P<rest>.*)", re.DOTALL)


def user_errors(entry: Callable[P, R]) -> Callable[P, R]:
    """A magic or command entry whose product errors reach the user as `UsageError`s."""

    @functools.wraps(entry)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return entry(*args, **kwargs)
        except UsageError:
            raise
        except USER_ERRORS as exc:
            raise UsageError(str(exc)) from None

    return run


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """' (did you mean a or b?)' for the choices that start with `value` or contain it."""
    near = [c for c in choices if c.startswith(value) or (len(value) > 2 and value in c)]
    return f" (did you mean {' or '.join(near)}?)" if near and value not in near else ""


def usage(prog: str, message: str) -> UsageError:
    """The one error of a bad command line, in the product's words: `%%agent --max-steps
    must be between 1 and 100, got '0'`, `%dtl show takes no --bogus`."""
    words = message.strip()
    argument = _ARGUMENT.fullmatch(words)
    if argument:
        words = f"{argument['name'].split('/')[0]} {argument['rest']}"
    elif words.startswith("unrecognized arguments: "):
        words = f"takes no {words.removeprefix('unrecognized arguments: ')}"
    elif words.startswith("the following arguments are required: "):
        words = f"needs {words.removeprefix('the following arguments are required: ')}"
    return UsageError(f"{prog} {words}")


__all__ = ["USER_ERRORS", "did_you_mean", "usage", "user_errors"]
