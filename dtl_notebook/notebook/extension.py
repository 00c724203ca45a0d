"""Loading and unloading the IPython extension (idempotent; `%reload_ext` works)."""

from __future__ import annotations

from typing import Any

from dtl_notebook.notebook import display
from dtl_notebook.notebook.magics import AgentMagics


def load(shell: Any) -> None:
    manager = shell.magics_manager
    if "AgentMagics" not in manager.registry:
        manager.register(AgentMagics(shell))
    display.register(shell)


def unload(shell: Any) -> None:
    manager = shell.magics_manager
    magics = manager.registry.pop("AgentMagics", None)
    for kind, names in (("line", ("agent", "dtl")), ("cell", ("agent",))):
        for name in names:
            manager.magics[kind].pop(name, None)
    if magics is not None:
        magics.commands.proxy.close()  # `%dtl proxy start`'s proxy frees its port
    if magics is not None and magics in shell.configurables:
        shell.configurables.remove(magics)
    display.unregister(shell)
