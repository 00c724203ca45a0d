"""Re-run the teaching notebooks and store only the outputs nbval compares.

Cells marked `# NBVAL_CHECK_OUTPUT` keep their fresh outputs (nbval checks them); every other
cell is saved without outputs, so the notebooks stay small and diffs stay readable.

    python notebooks/data/refresh_checked_outputs.py [NOTEBOOK ...]
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


def refresh(path: Path) -> int:
    notebook = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(notebook, timeout=300, resources=resources).execute()
    kept = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if MARK in cell.source:
            kept += 1
            cell.outputs = _merged_streams(cell.outputs)  # nbval needs its execution_count
        else:
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)
    notebook.metadata.pop("language_info", None)
    write_atomic(path, nbformat.writes(notebook) + "\n")
    return kept


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
    paths = [Path(p) for p in sys.argv[1:]] or sorted(NOTEBOOKS.glob("0*.ipynb"))
    for path in paths:
        print(f"{path.name}: {refresh(path)} checked cells refreshed")
