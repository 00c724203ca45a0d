"""Re-run the teaching notebooks and store their outputs, so they read on GitHub and nbviewer.

Every cell keeps its outputs; cells marked `# NBVAL_CHECK_OUTPUT` are the ones nbval compares.
A view's output keeps its static `text/html` rendering (the snapshot of its turn) and its
one-line `text/plain`, not the widget reference: a saved notebook holds no widget state, and
a reference without state renders nothing in nbconvert and nbviewer (they prefer it to the
HTML) and an error in JupyterLab. Running a cell shows the live view again.

    PYTHONPATH=. python notebooks/data/refresh_outputs.py [NOTEBOOK ...]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from dtl_notebook.agent.files import write_atomic

NOTEBOOKS = Path(__file__).resolve().parent.parent
MARK = "# NBVAL_CHECK_OUTPUT"
WIDGET = "application/vnd.jupyter.widget-view+json"


def refresh(path: Path) -> int:
    """Execute the notebook at `path` and store it with its outputs; the checked cells."""
    notebook = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(notebook, timeout=300, resources=resources).execute()
    checked = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        checked += MARK in cell.source
        cell.outputs = [_static(o) for o in _merged_streams(cell.outputs)]
        cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)
    notebook.metadata.pop("language_info", None)
    write_atomic(path, nbformat.writes(notebook) + "\n")
    return checked


def _static(output: Any) -> Any:
    """A display without its widget reference (its HTML and text stay)."""
    data = output.get("data")
    if data is not None and WIDGET in data:
        del data[WIDGET]
        output.get("metadata", {}).pop(WIDGET, None)
    return output


def _merged_streams(outputs: list[Any]) -> list[Any]:
    """One output per run of same-stream writes, as the notebook shows them."""
    merged: list[Any] = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            last is not None
            and output.get("output_type") == last.get("output_type") == "stream"
            and output.get("name") == last.get("name")
        ):
            last["text"] += output["text"]
        else:
            merged.append(output)
    return merged


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    for path in paths:
        print(f"{path.name}: executed, {refresh(path)} cells checked by nbval")
