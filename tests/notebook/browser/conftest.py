"""Browser-test infrastructure: a private JupyterLab server and headless Chromium.

Fixtures: ``chromium_executable``, ``lab`` and ``browser`` (session scope).
Helpers: ``run_notebook(browser, lab, name, workspace=...)`` and
``open_offline_file(browser, path)``.

Chromium comes from ``$DTL_CHROMIUM`` (default ``/usr/bin/chromium``); Playwright never downloads
a browser here. Without Chromium or Playwright the tests skip, or fail when ``CI=true``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, overload
from urllib.parse import quote

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        ConsoleMessage,
        Locator,
        Page,
        Route,
        ViewportSize,
    )
    from playwright.sync_api._generated import LocatorAssertions, PageAssertions

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE.parents[1] / "artifacts"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}
SERVER_START_TIMEOUT_S = 120.0
KERNEL_NAME = "python3"

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
_OPEN_HANDLES: list[PageHandle] = []


# --------------------------------------------------------------------------- pytest plumbing


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "browser: drives JupyterLab or a page in headless Chromium (tests/notebook/browser)",
    )


def _in_this_folder(item: pytest.Item) -> bool:
    return HERE in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _in_this_folder(item):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if _in_this_folder(item):
        item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def _missing_requirement() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    path = os.environ.get("DTL_CHROMIUM", DEFAULT_CHROMIUM)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return f"chromium not found at {path} (set DTL_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"python package 'playwright' cannot be imported ({exc})"
    return None


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Path of the Chromium binary; skips (or fails on CI) when it or Playwright is missing."""
    reason = _missing_requirement()
    if reason is not None:
        _skip_or_fail(
            reason,
            "Install chromium (e.g. `apt-get install chromium`) and the 'playwright' package; "
            "never run `playwright install`.",
        )
    return os.environ.get("DTL_CHROMIUM", DEFAULT_CHROMIUM)


def _skip_or_fail(reason: str, hint: str) -> NoReturn:
    """Fail when ``CI=true`` (a CI box must have the tools), else skip with one line."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run on CI: {reason}. {hint}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture(scope="session", autouse=True)
def _require_browser(chromium_executable: str) -> None:
    """Check requirements before any other session fixture (e.g. the server) starts."""


@pytest.fixture(autouse=True)
def _page_artifacts(request: pytest.FixtureRequest) -> Iterator[None]:
    """Close pages opened by the helpers; on failure save a screenshot and the console log."""
    start = len(_OPEN_HANDLES)
    yield
    handles = _OPEN_HANDLES[start:]
    del _OPEN_HANDLES[start:]
    reports = request.node.stash.get(_REPORTS, {})
    failed = any(r.failed for r in reports.values())
    for i, handle in enumerate(handles):
        if failed:
            stem = f"{_safe(request.node.name)}-{i}-failure"
            with contextlib.suppress(Exception):
                handle.screenshot(stem)
            with contextlib.suppress(Exception):
                handle.save_log(stem)
        handle.close()


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "page"


# --------------------------------------------------------------------------- JupyterLab server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _strip_notebook(nb: Any) -> Any:
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


@dataclass
class LabServer:
    """A running JupyterLab server; ``root`` is its (temporary) root_dir."""

    base: str
    token: str
    root: Path
    log_path: Path
    runtime_dir: Path
    proc: subprocess.Popen[bytes] = field(repr=False)

    def write_notebook(self, name: str, cells: list[str | tuple[str, str]]) -> Path:
        """Write an nbformat v4 notebook; strings are code cells, ("markdown", text) markdown."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        for cell in cells:
            if isinstance(cell, str):
                nb.cells.append(nbformat.v4.new_code_cell(cell))
            elif cell[0] == "markdown":
                nb.cells.append(nbformat.v4.new_markdown_cell(cell[1]))
            elif cell[0] == "code":
                nb.cells.append(nbformat.v4.new_code_cell(cell[1]))
            else:
                raise ValueError(f"unknown cell type {cell[0]!r}")
        nb.metadata["kernelspec"] = {
            "name": KERNEL_NAME,
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        nb.metadata["language_info"] = {"name": "python"}
        return self._save(nb, name)

    def copy_notebook(self, src: Path, name: str | None = None) -> Path:
        """Copy a notebook into the root with outputs and ``metadata.widgets`` stripped."""
        import nbformat

        nb = _strip_notebook(nbformat.read(src, as_version=4))
        return self._save(nb, name or Path(src).name)

    def copy_file(self, src: Path, name: str | None = None) -> Path:
        """Copy a plain file (e.g. data a notebook reads) into the root."""
        dest = self.root / (name or Path(src).name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(Path(src).read_bytes())
        return dest

    def _save(self, nb: Any, name: str) -> Path:
        dest = self.root / name
        import nbformat

        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.validate(nb)
        nbformat.write(nb, dest)
        return dest

    def log_tail(self, lines: int = 60) -> str:
        """Last lines of the server log."""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}"

    def api(self, path: str, method: str = "GET", timeout_s: float = 30) -> Any:
        """Call the REST API with the token header; return the decoded JSON (or None)."""
        request = urllib.request.Request(
            self.url(f"api/{path.lstrip('/')}"),
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=timeout_s) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self, path: str | None = None) -> None:
        """Delete the sessions (and kernels) of ``path``, or all of them."""
        for session in self.api("sessions"):
            if path is None or session.get("path") == path:
                self.api(f"sessions/{session['id']}", method="DELETE")


def _server_env(tmp: Path) -> dict[str, str]:
    settings = tmp / "settings"
    _write_json(
        settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings",
        {"autoStartDefaultKernel": True, "windowingMode": "none"},
    )
    _write_json(
        settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    # A kernelspec that runs this very interpreter; JUPYTER_PATH outranks every other location.
    data = tmp / "data"
    _write_json(
        data / "kernels" / KERNEL_NAME / "kernel.json",
        {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "metadata": {"debugger": True},
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_TOKEN")}
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        JUPYTER_PATH=str(data),
        JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=str(tmp / "ipython"),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    for key in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


def _wait_ready(server: LabServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    request = urllib.request.Request(
        server.url("api/status"), headers={"Authorization": f"token {server.token}"}
    )
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            pytest.fail(
                f"jupyterlab exited with status {server.proc.returncode} during startup; "
                f"log tail:\n{server.log_tail()}",
                pytrace=False,
            )
        with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=5) as resp:
            if resp.status == 200:
                return
        time.sleep(0.25)
    pytest.fail(
        f"jupyterlab not ready after {timeout_s:.0f}s; log tail:\n{server.log_tail()}",
        pytrace=False,
    )


def _stop_server(server: LabServer) -> None:
    proc = server.proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    _kill_orphan_kernels(server.runtime_dir)


def _kill_orphan_kernels(runtime_dir: Path) -> None:
    """Kernels get their own session, so killing the server never reaches them."""
    import psutil  # a dependency of ipykernel

    marker = str(runtime_dir)
    leftovers: list[str] = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if any(marker in part for part in cmdline):
            leftovers.append(f"{proc.pid}: {' '.join(cmdline)}")
            with contextlib.suppress(psutil.Error):
                proc.kill()
    if leftovers:
        warnings.warn(
            "killed kernels left over after the server stopped:\n" + "\n".join(leftovers),
            pytest.PytestWarning,
            stacklevel=1,
        )


def start_lab(tmp: Path) -> LabServer:
    """Start a private JupyterLab server under `tmp` (root, config, settings, kernelspec) and
    wait until it answers; stop it with `stop_lab`."""
    root = tmp / "root"
    root.mkdir()
    env = _server_env(tmp)
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",
        f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    log_path = tmp / "jupyterlab.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = LabServer(
        base=f"http://127.0.0.1:{port}",
        token=token,
        root=root,
        log_path=log_path,
        runtime_dir=Path(env["JUPYTER_RUNTIME_DIR"]),
        proc=proc,
    )
    try:
        _wait_ready(server, SERVER_START_TIMEOUT_S)
    except BaseException:
        _stop_server(server)
        raise
    return server


stop_lab = _stop_server


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """A private JupyterLab server for the whole test session."""
    missing = [
        m for m in ("jupyterlab", "ipykernel", "nbformat") if not importlib.util.find_spec(m)
    ]
    if missing:
        _skip_or_fail(f"missing {', '.join(missing)}", "Install the project's 'test' extra.")
    server = start_lab(tmp_path_factory.mktemp("lab"))
    try:
        yield server
    finally:
        stop_lab(server)


# --------------------------------------------------------------------------- browser and pages


@pytest.fixture(scope="session")
def browser(chromium_executable: str) -> Iterator[Browser]:
    """Headless Debian Chromium through Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        instance = pw.chromium.launch(
            executable_path=chromium_executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield instance
        finally:
            instance.close()
    finally:
        pw.stop()


@dataclass
class PageHandle:
    """A page plus what it tried to fetch and what it logged."""

    page: Page
    external_requests: list[str] = field(default_factory=list)
    console_messages: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def _listen(self) -> None:
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        self.page.on("crash", lambda _page: self.page_errors.append("page crashed"))

    def _on_console(self, msg: ConsoleMessage) -> None:
        loc = msg.location or {}
        line = f"[{msg.type}] {msg.text} ({loc.get('url', '')}:{loc.get('lineNumber', '')})"
        self.console_messages.append(line)
        if msg.type == "error":
            self.console_errors.append(msg.text)

    def _guard(self, allowed: Callable[[str], bool]) -> None:
        def route(route: Route) -> None:
            url = route.request.url
            if allowed(url):
                route.continue_()
            else:
                self.external_requests.append(url)
                route.abort()

        self.page.route("**/*", route)

    def screenshot(self, name: str) -> Path:
        """Save a full-page PNG under tests/artifacts and return its path."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{_safe(name.removesuffix('.png'))}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def log_text(self) -> str:
        parts = [
            "## console",
            *self.console_messages,
            "## page errors",
            *self.page_errors,
            "## blocked external requests",
            *self.external_requests,
        ]
        return "\n".join(parts) + "\n"

    def save_log(self, name: str) -> Path:
        """Write the console log (and page errors, blocked requests) under tests/artifacts."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{_safe(name)}.console.txt"
        path.write_text(self.log_text(), encoding="utf-8")
        return path

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.page.context.close()


@dataclass
class LabRun(PageHandle):
    """A notebook opened in JupyterLab whose cells have all run."""

    lab: LabServer | None = None
    path: str = ""
    dismissed_dialogs: list[str] = field(default_factory=list)

    def close(self) -> None:
        """Close the page and shut the notebook's kernel down."""
        super().close()
        if self.lab is not None and self.path:
            with contextlib.suppress(OSError, ValueError):
                self.lab.shutdown_sessions(self.path)

    def log_text(self) -> str:
        text = super().log_text() + "## dismissed dialogs\n" + "\n".join(self.dismissed_dialogs)
        if self.lab is not None:
            text += f"\n## server log tail ({self.lab.log_path})\n{self.lab.log_tail(80)}\n"
        return text


@overload
def expect(actual: Locator) -> LocatorAssertions: ...
@overload
def expect(actual: Page) -> PageAssertions: ...
def expect(actual: Locator | Page) -> LocatorAssertions | PageAssertions:
    """Playwright's ``expect``, imported lazily so test modules load without Playwright."""
    from playwright.sync_api import expect as pw_expect

    return pw_expect(actual)


def _new_page(browser: Browser) -> Page:
    context = browser.new_context(viewport=VIEWPORT)
    return context.new_page()


def open_offline_file(browser: Browser, path: Path, *, timeout_s: float = 30) -> PageHandle:
    """Open a local HTML file via file:// with every non-file:// request recorded and aborted."""
    handle = PageHandle(_new_page(browser))
    _OPEN_HANDLES.append(handle)
    handle._listen()
    handle._guard(lambda url: url.startswith("file://"))
    handle.page.goto(Path(path).resolve().as_uri(), timeout=timeout_s * 1000)
    return handle


_KERNEL_STATE_JS = """(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return 'no-app';
  const w = app.shell.currentWidget;
  if (!w || !w.sessionContext || !w.context) return 'no-notebook';
  if (w.context.path !== path) return 'current-widget:' + w.context.path;
  if (!w.node.querySelector('.jp-Notebook')) return 'no-notebook-node';
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k) return 'no-kernel';
  return k.status + '/' + k.connectionStatus;
}"""

_FIRE_RUN_ALL_JS = """() => {
  window.__dtlRunAll = 'pending';
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    () => { window.__dtlRunAll = 'done'; },
    (e) => { window.__dtlRunAll = 'error: ' + e; });
}"""

_RUN_STATE_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
  const node = w ? w.node : document;
  const prompts = [...node.querySelectorAll('.jp-InputPrompt')].map((e) => e.textContent);
  const outputs = [...node.querySelectorAll('.jp-OutputArea-output')];
  return {
    command: window.__dtlRunAll || 'not-fired',
    busy: prompts.filter((t) => t.includes('[*]')).length,
    loading: outputs.filter((e) => e.textContent.includes('Loading widget')).length,
    kernel: k ? k.status + '/' + k.connectionStatus : 'no-kernel',
  };
}"""


def _dismiss_dialogs(run: LabRun) -> None:
    dialogs = run.page.locator(".jp-Dialog")
    while dialogs.count():
        dialog = dialogs.first
        run.dismissed_dialogs.append(dialog.inner_text(timeout=5000).strip())
        reject = dialog.locator(".jp-Dialog-button.jp-mod-reject")
        if reject.count():
            reject.first.click(timeout=5000)
        else:
            run.page.keyboard.press("Escape")
        dialog.wait_for(state="detached", timeout=5000)


def _poll(
    run: LabRun, what: str, probe: Callable[[], Any], ok: Callable[[Any], bool], deadline: float
) -> Any:
    """Evaluate ``probe`` until ``ok`` holds twice in a row; dismiss dialogs meanwhile."""
    state: Any = None
    streak = 0
    while time.monotonic() < deadline:
        if run.page.locator(".jp-Dialog").count():
            _dismiss_dialogs(run)
        state = probe()
        streak = streak + 1 if ok(state) else 0
        if streak >= 2:
            return state
        run.page.wait_for_timeout(250)
    raise AssertionError(f"timed out waiting for {what}; last state: {state!r}")


def open_notebook(
    browser: Browser,
    lab: LabServer,
    name: str,
    *,
    workspace: str,
    timeout_s: float = 180,
    kernel: str | None = "idle/connected",
) -> LabRun:
    """Open ``name`` in a private Lab workspace and wait until its kernel's state (as
    ``_KERNEL_STATE_JS`` says it) is ``kernel`` (None: until the notebook is open)."""
    run = LabRun(_new_page(browser), lab=lab, path=name)
    _OPEN_HANDLES.append(run)
    page = run.page
    page.set_default_timeout(60_000)
    run._listen()
    run._guard(lambda url: url.startswith((lab.base, "data:", "blob:")))
    page.add_locator_handler(page.locator(".jp-Dialog"), lambda: _dismiss_dialogs(run))

    deadline = time.monotonic() + timeout_s
    url = (
        f"{lab.base}/lab/workspaces/{quote(workspace, safe='')}/tree/{quote(name)}"
        f"?token={lab.token}&reset"
    )
    page.goto(url, timeout=timeout_s * 1000)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=timeout_s * 1000)
    _poll(
        run,
        f"the kernel to be {kernel}",
        lambda: page.evaluate(_KERNEL_STATE_JS, name),
        lambda s: s == kernel if kernel else not s.startswith(("no-app", "no-notebook", "current")),
        deadline,
    )
    return run


def run_notebook(
    browser: Browser, lab: LabServer, name: str, *, workspace: str, timeout_s: float = 180
) -> LabRun:
    """Open ``name`` in a private Lab workspace, run all cells and wait until outputs settle."""
    deadline = time.monotonic() + timeout_s
    run = open_notebook(browser, lab, name, workspace=workspace, timeout_s=timeout_s)
    run_all(run, deadline)
    return run


def run_all(run: LabRun, deadline: float) -> None:
    """Run every cell of the open notebook and wait until outputs settle."""
    page = run.page
    page.evaluate(_FIRE_RUN_ALL_JS)
    _poll(
        run,
        "run-all to finish",
        lambda: page.evaluate(_RUN_STATE_JS),
        lambda s: (
            s["command"] != "pending"
            and s["busy"] == 0
            and s["loading"] == 0
            and s["kernel"] == "idle/connected"
        ),
        deadline,
    )
