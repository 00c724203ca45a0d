"""The house's layering, read from the source: every import of every module (function-local and
type-only ones too) points to a lower or the same layer, and no two modules import each other
in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dtl_notebook

PACKAGE = Path(dtl_notebook.__file__).parent
# lowest first; a module may import only from its own layer and the ones before it
# `_reuse` (private reuse machinery) sits under every layer; `demo` is an application of
# the layers up to live/, shown by the notebook layer.
LAYERS = ("_reuse", "agent", "wire", "context", "cache", "live", "proxy", "demo", "notebook")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The dtl_notebook modules `path` imports anywhere in its body: `from a.b import c` counts
    as `a.b.c` where that is a module, else as `a.b`."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(path, known) for name, path in known.items()}


def layer(name: str) -> int | None:
    """The layer of a module; None for the package's own entry modules (its `__init__`,
    `__main__`: above every layer)."""
    parts = name.split(".")
    if len(parts) == 1 or not (PACKAGE / parts[1]).is_dir():
        return None
    if parts[1] not in LAYERS:
        pytest.fail(f"{name}: package {parts[1]!r} is in no layer; add it to LAYERS")
    return LAYERS.index(parts[1])


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_function_local_and_relative_imports() -> None:
    edges = graph()
    assert "dtl_notebook.wire.request" in edges["dtl_notebook.wire.arguments"]
    assert "dtl_notebook.agent.session" in edges["dtl_notebook.wire.arguments"]  # in a function
    assert "dtl_notebook.notebook.magics" in edges["dtl_notebook.notebook.extension"]


def test_no_import_circles() -> None:
    assert cycles(graph()) == []


def test_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_import_points_down_the_layers() -> None:
    upward = [
        f"{name} ({LAYERS[low]}) imports {target} ({LAYERS[high]})"
        for name, targets in graph().items()
        if (low := layer(name)) is not None
        for target in sorted(targets)
        if (high := layer(target)) is not None and high > low
    ]
    assert upward == []


def test_ipython_only_in_the_notebook_layer() -> None:
    below = [
        name
        for name, path in modules().items()
        if (found := layer(name)) is not None and found < LAYERS.index("notebook")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            (getattr(node, "module", None) or alias.name).split(".")[0]
            in ("IPython", "ipywidgets", "anywidget", "traitlets")
            for alias in node.names
        )
    ]
    assert below == []
