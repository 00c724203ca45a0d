"""Binder, short of Docker: a fresh venv from binder/requirements.txt alone runs the tour.

repo2docker needs Docker, which these machines lack; this test does what its pip step does
(install the requirements from the repository root, where the `.` line is the package) and
then executes the tour notebook with the venv's own Jupyter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_are_pinned() -> None:
    lines = [
        line.strip()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert "." in lines
    assert all("==" in line for line in lines if line != "."), lines
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")
    readme = (ROOT / "README.md").read_text()
    assert "urlpath=lab/tree/notebooks/01_tour.ipynb" in readme


@pytest.mark.skipif(sys.platform == "win32", reason="venv layout")
def test_fresh_binder_venv_runs_the_tour(tmp_path: Path) -> None:
    env_dir = tmp_path / "binder-venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    out = tmp_path / "tour.ipynb"
    run = subprocess.run(
        [
            str(env_dir / "bin" / "jupyter"),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--ExecutePreprocessor.timeout=300",
            "--output",
            str(out),
            "notebooks/01_tour.ipynb",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    text = out.read_text()
    assert "dtl-view" in text or "AgentView(" in text
    assert '"output_type": "error"' not in text
