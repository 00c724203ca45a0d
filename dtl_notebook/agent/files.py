"""Writing a file atomically, as a plain `open(path, "w")` would have written it, but whole.

The content goes to a temporary file beside the target, is flushed and fsynced, renamed over
the target, and the folder is fsynced so the rename itself survives a crash. The new file
keeps an existing file's mode, or gets the one `open()` would give (0o666 less the umask). A
symlink is followed: its target is written and the link stays. Errors name the caller's
path, never the temporary one.

A SIGKILL cannot be caught, so a killed writer's temporary file can only be removed by a later
writer. Each writer holds an exclusive `flock` on its temporary file until it has renamed it;
the lock dies with the process, so a later save removes every temporary file of this pattern
whose lock it can take: those are left by dead writers, never a live one's.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from dtl_notebook.agent import checks

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".dtl-tmp"
_STEM = 24  # characters of the target's name kept in a temporary name: short enough for any
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_STALE_SECONDS = 3600  # where there is no flock, a temporary file this old counts as dead


def write_atomic(path: Any, content: str | bytes, param: str = "path") -> Path:
    """Write `content` (text as UTF-8) to `path` atomically; returns the path as given."""
    given = checks.file_path(path, param)
    data = content.encode("utf-8") if isinstance(content, str) else content
    target = Path(os.path.realpath(given))  # a symlink's target is what gets written
    try:
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
        _write(target, data)
    except OSError as exc:
        raise _naming(exc, given) from None
    return given


def _write(target: Path, data: bytes) -> None:
    folder, name = target.parent, target.name
    prefix = f".{name[:_STEM]}."
    remove_stale(folder, prefix)
    fd, tmp = _create(folder, prefix)
    try:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None  # a new file: os.open applied the umask to 0o666, as open() does
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        if fcntl is None:  # pragma: no cover - Windows renames only closed files
            os.close(fd)
            fd = -1
        os.replace(tmp, target)  # still locked: no later writer takes this file for dead
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    _sync_folder(folder)


def _create(folder: Path, prefix: str) -> tuple[int, Path]:
    """A new temporary file in `folder`, opened for writing and locked by this process."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = folder / f"{prefix}{secrets.token_hex(4)}{SUFFIX}"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        if fcntl is None:  # pragma: no cover
            return fd, tmp
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _same_file(fd, tmp):  # not removed by a cleaner between open and lock
                return fd, tmp
        except BlockingIOError:
            pass  # a cleaner holds it and is removing it
        os.close(fd)


def remove_stale(folder: Path, prefix: str = ".") -> list[str]:
    """Remove the temporary files in `folder` left by writers that died; returns their names."""
    removed: list[str] = []
    try:
        entries = [e.name for e in os.scandir(folder) if e.name.endswith(SUFFIX)]
    except OSError:
        return removed  # the write itself will report a missing or unreadable folder
    for entry in entries:
        if entry.startswith(prefix) and _remove_if_dead(folder / entry):
            removed.append(entry)
    return removed


def _remove_if_dead(tmp: Path) -> bool:
    try:
        fd = os.open(tmp, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False  # gone already, or not a plain file of ours
    try:
        if fcntl is None:  # pragma: no cover
            dead = time.time() - os.fstat(fd).st_mtime > _STALE_SECONDS
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # a live writer holds it
            dead = _same_file(fd, tmp)
        if dead:
            tmp.unlink(missing_ok=True)
        return dead
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _sync_folder(folder: Path) -> None:
    """fsync the folder, so the rename is on disk too (where folders can be opened)."""
    directory = getattr(os, "O_DIRECTORY", None)
    if directory is None:  # pragma: no cover - Windows
        return
    try:
        fd = os.open(folder, os.O_RDONLY | directory)
    except PermissionError:
        return  # a folder this process may write but not read: there is nothing to sync it by
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise  # some file systems cannot sync a folder; any other failure is real
    finally:
        os.close(fd)


def _naming(exc: OSError, path: Path) -> OSError:
    """The same kind of error, naming the caller's path."""
    if exc.errno is None:
        return OSError(f"cannot write {str(path)!r}: {exc}")
    return type(exc)(exc.errno, exc.strerror, str(path))
