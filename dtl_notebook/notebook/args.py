"""Magic arguments: argparse for the syntax, pydantic models for the meaning.

Every user mistake becomes an IPython `UsageError`: one red line that names the option, the
value and the choices, and no traceback.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any, NoReturn

from IPython.core.error import UsageError
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from dtl_notebook.agent.checks import shown
from dtl_notebook.wire import PROVIDERS

LOCAL_ENGINES = ("bm25", "regex", "keyword")
NATIVE_SEARCH = {
    "anthropic": ("native-bm25", "native-regex"),
    "openai-responses": ("hosted", "native-client"),
}
ENGINES = (*LOCAL_ENGINES, *(e for engines in NATIVE_SEARCH.values() for e in engines))
LOAD_MODES = ("additional_tools", "tool_search", "full_list")
TRANSPORTS = ("emulator", "live")


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


def check_name(value: str) -> str:
    if not value.isidentifier():
        raise UsageError(f"--session must be a Python name, got {value!r}")
    return value


def split_line(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"cannot parse the arguments ({exc})") from None


def check_provider(value: str) -> str:
    if value not in PROVIDERS:
        raise ValueError(f"unknown provider {value!r}; choose one of {', '.join(PROVIDERS)}")
    return value


class CellArgs(BaseModel):
    """`%%agent` options, checked together."""

    model_config = ConfigDict(extra="forbid")

    session: str = "agent"
    provider: str | None = None
    model: str | None = None
    search: str | None = None
    load_mode: str | None = None
    live: bool = False
    max_steps: int | None = None

    @field_validator("session")
    @classmethod
    def _session(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"--session must be a Python name, got {value!r}")
        return value

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str | None) -> str | None:
        return None if value is None else check_provider(value)

    @field_validator("search")
    @classmethod
    def _search(cls, value: str | None) -> str | None:
        if value is not None and value not in ENGINES:
            raise ValueError(f"unknown search engine {value!r}; choose one of {', '.join(ENGINES)}")
        return value

    @field_validator("load_mode")
    @classmethod
    def _load_mode(cls, value: str | None) -> str | None:
        if value is not None and value not in LOAD_MODES:
            raise ValueError(f"unknown load mode {value!r}; choose one of {', '.join(LOAD_MODES)}")
        return value

    @field_validator("max_steps")
    @classmethod
    def _max_steps(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 100:
            raise ValueError(f"--max-steps must be between 1 and 100, got {value}")
        return value

    @model_validator(mode="after")
    def _fits_provider(self) -> CellArgs:
        if self.provider is not None:
            check_fits(self.provider, self.search, self.load_mode)
        return self


def check_fits(provider: str, search: str | None, load_mode: str | None) -> None:
    """A native search or a load mode that the provider cannot take is a ValueError."""
    if search not in LOCAL_ENGINES and search is not None:
        fits = NATIVE_SEARCH.get(provider, ())
        if search not in fits:
            raise ValueError(
                f"--search {search} does not apply to {provider}; its native searches: "
                f"{', '.join(fits) or 'none'} (or a local engine: {', '.join(LOCAL_ENGINES)})"
            )
    if load_mode is not None and provider != "openai-responses":
        raise ValueError(f"--load-mode applies to openai-responses only, not {provider}")


def model_from(model: type[BaseModel], values: dict[str, Any]) -> Any:
    """Build an argument model; a validation error becomes one UsageError line."""
    try:
        return model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        option = "--" + "-".join(str(p) for p in first["loc"]).replace("_", "-")
        if first["loc"] and option not in message:
            message = f"{option}: {message} (got {shown(first['input'])})"
        raise UsageError(message) from None
