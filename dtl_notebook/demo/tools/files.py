"""The workspace file tools every demo session starts with: list, read and write."""

from __future__ import annotations

import difflib
import posixpath

from dtl_notebook.demo.records import J, World

MAX_FILE_CHARS = 200_000


def _norm_path(path: str, *, allow_root: bool = False) -> str:
    raw = path.strip().replace("\\", "/") if isinstance(path, str) else ""
    clean = posixpath.normpath("/" + raw).lstrip("/")
    if ".." in raw.split("/"):
        raise ValueError(f"path {path!r} may not contain '..'")
    if clean in ("", ".") and not allow_root:
        raise ValueError("a file path is required")
    return "" if clean == "." else clean


def list_files(world: World, directory: str = "") -> J:
    base = _norm_path(directory, allow_root=True)
    prefix = base + "/" if base else ""
    entries: dict[str, J] = {}
    for path, content in sorted(world.files.items()):
        if not path.startswith(prefix):
            continue
        head, _, rest = path[len(prefix) :].partition("/")
        if rest:
            entries.setdefault(head + "/", {"name": head + "/", "type": "directory"})
        else:
            entries[head] = {"name": head, "type": "file", "size_bytes": len(content.encode())}
    if base and not entries:
        raise ValueError(f"no such directory {base!r}")
    return {"directory": base or "/", "entries": list(entries.values())}


def read_file(world: World, path: str) -> str:
    key = _norm_path(path)
    if key not in world.files:
        near = difflib.get_close_matches(key, list(world.files), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise ValueError(f"no such file {key!r}{hint}")
    return world.files[key]


def write_file(world: World, path: str, content: str, overwrite: bool = True) -> J:
    key = _norm_path(path)
    if key in world.files and not overwrite:
        raise ValueError(f"file {key!r} exists and overwrite is false")
    if any(f.startswith(key + "/") for f in world.files):
        raise ValueError(f"{key!r} is a directory")
    if len(content) > MAX_FILE_CHARS:
        raise ValueError(f"content is limited to {MAX_FILE_CHARS} characters")
    world.files[key] = content
    return {"path": key, "size_bytes": len(content.encode()), "written": True}


TOOLS = (list_files, read_file, write_file)
