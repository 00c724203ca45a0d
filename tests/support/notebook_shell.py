"""A jupysql-style in-process IPython shell for the notebook-layer tests.

One `InteractiveShell` singleton (history off) serves every test: `IPython.display.display`
and `capture_output()` only reach the singleton. Between tests the user namespace is reset,
the extension is (re)loaded if a test unloaded it, and the `AgentMagics` traits and views go
back to their defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from IPython.utils.capture import CapturedIO, capture_output
from traitlets.config import Config

from dtl_notebook.live import Agent, ProviderError, emulator_transport
from dtl_notebook.wire import WireRequest

EXTENSION = "dtl_notebook"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
DEFAULTS: dict[str, Any] = {
    "provider": "anthropic",
    "model": "",
    "transport": "emulator",
    "search": "bm25",
    "load_mode": None,
    "max_steps": 10,
}
_BASELINES: dict[int, set[str]] = {}
ETA = "What is the shipping ETA of order_42?"  # a turn of three requests on the demo catalog
WEATHER = "And the weather in Paris?"


def interactive_shell() -> InteractiveShell:
    """The process-wide shell, created once with its history disabled."""
    if InteractiveShell.initialized():
        return InteractiveShell.instance()
    config = Config()
    config.HistoryManager.enabled = False
    config.HistoryManager.hist_file = ":memory:"
    return InteractiveShell.instance(config=config)


def agent_magics(shell: InteractiveShell) -> Any:
    """The registered AgentMagics instance, or None when the extension is not loaded."""
    return shell.magics_manager.registry.get("AgentMagics")


def ensure_loaded(shell: InteractiveShell) -> Any:
    if agent_magics(shell) is None:
        shell.extension_manager.loaded.discard(EXTENSION)  # a test unloaded it by hand
        shell.run_line_magic("load_ext", EXTENSION)
    return agent_magics(shell)


def reset_namespace(shell: InteractiveShell) -> None:
    """Drop every name a test added (`shell.reset()` would also run a slow `gc.collect()`)."""
    baseline = _BASELINES.setdefault(id(shell), set(shell.user_ns))
    for name in [n for n in shell.user_ns if n not in baseline]:
        del shell.user_ns[name]
    for name in ("_", "__", "___"):
        shell.user_ns[name] = ""
    shell.history_manager.output_hist.clear()


def reset_shell(shell: InteractiveShell) -> Any:
    """A clean namespace, the extension loaded, AgentMagics at its defaults with no views."""
    reset_namespace(shell)
    # `%config AgentMagics.x = ...` stays in the shell's config, a rejected value too: each test
    # starts from the defaults (a reloaded extension would otherwise read what a test left)
    shell.config.pop("AgentMagics", None)
    magics = ensure_loaded(shell)
    magics.views.clear()
    magics.sessions.outputs.clear()
    for name, value in DEFAULTS.items():
        setattr(magics, name, value)
    return magics


def run_cell(shell: InteractiveShell, source: str) -> tuple[ExecutionResult, CapturedIO]:
    """Run a cell as a notebook would, capturing stdout, stderr and rich displays."""
    with capture_output() as captured:
        result = shell.run_cell(source, store_history=False)
    return result, captured


def line_magic(shell: InteractiveShell, line: str) -> tuple[Any, CapturedIO]:
    """`%dtl ...` (or any line magic) called directly: errors propagate, value returned."""
    name, _, rest = line.partition(" ")
    with capture_output() as captured:
        value = shell.run_line_magic(name.removeprefix("%"), rest)
    return value, captured


def mimetypes(captured: CapturedIO) -> list[list[str]]:
    return [sorted(output.data) for output in captured.outputs]


@dataclass
class FlakyTransport:
    """The anthropic emulator, except that request number `fail_at` (from 1) fails."""

    fail_at: int
    message: str = "overloaded_error: the server is busy"
    provider: str = "anthropic"
    name: str = "emulator"

    def __post_init__(self) -> None:
        self.inner = emulator_transport(self.provider)
        self.sent = 0

    def send(self, request: WireRequest) -> dict[str, Any]:
        self.sent += 1
        if self.sent == self.fail_at:
            raise ProviderError(self.provider, self.message, 529)
        return self.inner.send(request)


def write_capture(agent: Agent, path: Path) -> Path:
    """A captured JSONL log (request/response pairs) of everything `agent` sent."""
    lines = [
        json.dumps({"request": s.request.payload, "response": s.response}) for s in agent.steps
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
