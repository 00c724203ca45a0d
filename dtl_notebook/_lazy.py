"""Public names of a package imported on first use, so a command imports what it runs.

`python -m dtl_notebook codes` needs the finding table, not the SDKs, pydantic models and
JSON Schema validators behind `Session` or `analyze`: a package whose `__init__` calls
`lazy_package(__name__, {...})` binds each public name when it is first read (PEP 562), and
`from package import name` keeps working as before.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class _LazyPackage(types.ModuleType):
    _exports: dict[str, str]

    def __getattr__(self, name: str) -> Any:
        source = self._exports.get(name)
        if source is None:  # a submodule read as an attribute (`wire.anthropic`)
            return self._submodule(name)
        module, _, attribute = source.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing a submodule binds it on its package under its own name: a public name
        # spelled like its module (`cache.analyze`, the function in `cache/analyze.py`) keeps
        # meaning the public object, as an eager `from .analyze import analyze` made it.
        if isinstance(value, types.ModuleType) and self._exports.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)

    def _submodule(self, name: str) -> types.ModuleType:
        full = f"{self.__name__}.{name}"
        try:
            return importlib.import_module(full)
        except ModuleNotFoundError as exc:
            if exc.name != full:
                raise
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._exports})


def lazy_package(package: str, exports: dict[str, str]) -> None:
    """Make `package` import each public name from its module on first use: name -> module,
    or name -> "module:attribute" where the package renames it."""
    module = sys.modules[package]
    module.__class__ = _LazyPackage
    object.__setattr__(module, "_exports", exports)
