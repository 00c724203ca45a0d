"""The files namespace: a small in-memory workspace of text files."""

from __future__ import annotations

import difflib
import fnmatch
import posixpath
import re

from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.world import _World

MAX_FILE_CHARS = 200_000


def _norm_path(path: str, *, allow_root: bool = False) -> str:
    raw = path.strip().replace("\\", "/") if isinstance(path, str) else ""
    clean = posixpath.normpath("/" + raw).lstrip("/")
    if ".." in raw.split("/"):
        raise ValueError(f"path {path!r} may not contain '..'")
    if clean in ("", ".") and not allow_root:
        raise ValueError("a file path is required")
    return "" if clean == "." else clean


def _files(tool: _Domain, world: _World) -> None:
    files = world.files

    def existing(path: str) -> str:
        key = _norm_path(path)
        if key not in files:
            near = difflib.get_close_matches(key, list(files), n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ValueError(f"no such file {key!r}{hint}")
        return key

    def store(path: str, content: str) -> str:
        key = _norm_path(path)
        if any(f.startswith(key + "/") for f in files):
            raise ValueError(f"{key!r} is a directory")
        if len(content) > MAX_FILE_CHARS:
            raise ValueError(f"content is limited to {MAX_FILE_CHARS} characters")
        files[key] = content
        return key

    @tool
    def list_files(directory: str = "") -> J:
        base = _norm_path(directory, allow_root=True)
        prefix = base + "/" if base else ""
        entries: dict[str, J] = {}
        for path, content in sorted(files.items()):
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

    @tool
    def read_file(path: str) -> str:
        return files[existing(path)]

    @tool
    def read_file_lines(path: str, start_line: int = 1, end_line: int = 50) -> J:
        lines = files[existing(path)].splitlines()
        if start_line < 1 or end_line < start_line:
            raise ValueError("need 1 <= start_line <= end_line")
        chosen = lines[start_line - 1 : end_line]
        return {
            "path": _norm_path(path),
            "total_lines": len(lines),
            "lines": [f"{start_line + i}: {text}" for i, text in enumerate(chosen)],
        }

    @tool
    def write_file(path: str, content: str, overwrite: bool = True) -> J:
        if _norm_path(path) in files and not overwrite:
            raise ValueError(f"file {_norm_path(path)!r} exists and overwrite is false")
        key = store(path, content)
        return {"path": key, "size_bytes": len(content.encode()), "written": True}

    @tool
    def append_to_file(path: str, content: str) -> J:
        key = _norm_path(path)
        store(key, files.get(key, "") + content)
        return {"path": key, "size_bytes": len(files[key].encode())}

    @tool
    def delete_file(path: str) -> J:
        key = existing(path)
        del files[key]
        return {"path": key, "deleted": True}

    @tool
    def move_file(source_path: str, destination_path: str) -> J:
        source = existing(source_path)
        target = store(destination_path, files[source])
        if target != source:
            del files[source]
        return {"from": source, "to": target}

    @tool
    def copy_file(source_path: str, destination_path: str) -> J:
        source = existing(source_path)
        return {"from": source, "to": store(destination_path, files[source])}

    @tool
    def get_file_info(path: str) -> J:
        key = existing(path)
        text = files[key]
        kinds = {".md": "markdown", ".txt": "text", ".csv": "csv", ".json": "json", ".py": "python"}
        return {
            "path": key,
            "size_bytes": len(text.encode()),
            "lines": len(text.splitlines()),
            "words": len(text.split()),
            "type": kinds.get(posixpath.splitext(key)[1], "unknown"),
        }

    @tool
    def search_file_contents(pattern: str, directory: str = "") -> J:
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        base = _norm_path(directory, allow_root=True)
        hits = [
            {"path": path, "line": n, "text": line}
            for path, text in sorted(files.items())
            if not base or path.startswith(base + "/")
            for n, line in enumerate(text.splitlines(), 1)
            if rx.search(line)
        ]
        return {"pattern": pattern, "matches": hits[:100], "truncated": len(hits) > 100}

    @tool
    def find_files(name_pattern: str) -> J:
        hits = [
            p
            for p in sorted(files)
            if fnmatch.fnmatch(p, name_pattern)
            or fnmatch.fnmatch(posixpath.basename(p), name_pattern)
        ]
        return {"pattern": name_pattern, "files": hits}

    @tool
    def diff_files(path_a: str, path_b: str) -> J:
        a, b = existing(path_a), existing(path_b)
        diff = difflib.unified_diff(files[a].splitlines(), files[b].splitlines(), a, b, lineterm="")
        lines = list(diff)
        return {"identical": not lines, "diff": "\n".join(lines)}
