"""Saving and exporting write files as `open()` would, but whole: symlinks, modes, names, kills."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from dtl_notebook import Session
from dtl_notebook.agent import files
from dtl_notebook.agent.files import SUFFIX, write_atomic
from dtl_notebook.live import Agent
from dtl_notebook.notebook.export import export_html
from tests.support.tools import make_tools

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file semantics")


def session(text: str = "hi") -> Session:
    s = Session(tools=make_tools(), active=["tool_search", "read_file"])
    s.user(text)
    return s


def strays(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(SUFFIX))


@posix_only
def test_saving_over_a_symlink_writes_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "data" / "session.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "session.json"
    link.symlink_to(Path("data") / "session.json")
    session("first").save(link)
    assert link.is_symlink() and os.readlink(link) == str(Path("data") / "session.json")
    assert Session.load(real).messages[0].text == "first"  # type: ignore[union-attr]

    agent = Agent(session(), "anthropic", "claude-sonnet-4-6")
    agent.run("What's the weather in Paris?")
    page = tmp_path / "page.html"
    page.symlink_to(real)
    export_html(agent, page)
    assert page.is_symlink() and real.read_text().startswith("<!DOCTYPE html>")
    assert strays(tmp_path) == [] and strays(real.parent) == []


@posix_only
def test_a_new_file_gets_the_umask_mode_and_an_existing_one_keeps_its_mode(
    tmp_path: Path,
) -> None:
    old = os.umask(0o027)
    try:
        session().save(tmp_path / "new.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640

    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o604)
    session().save(kept)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o604


def test_errors_name_the_callers_path_never_a_temporary_one(tmp_path: Path) -> None:
    s = session()
    with pytest.raises(ValueError, match="path must not be empty"):
        s.save("")
    with pytest.raises(IsADirectoryError) as folder:
        s.save(tmp_path)
    assert folder.value.filename == str(tmp_path)
    missing = tmp_path / "no" / "such" / "folder.json"
    with pytest.raises(FileNotFoundError) as nowhere:
        s.save(missing)
    assert nowhere.value.filename == str(missing)
    too_long = tmp_path / ("n" * 256)
    with pytest.raises(OSError) as long_name:
        s.save(too_long)
    assert long_name.value.errno == errno.ENAMETOOLONG
    assert long_name.value.filename == str(too_long) and SUFFIX not in str(long_name.value)
    assert strays(tmp_path) == []


def test_a_path_holding_a_nul_character_is_named(tmp_path: Path) -> None:
    session = Session(tools=make_tools())
    for write in (session.save, lambda p: export_html(session, path=p)):
        with pytest.raises(
            ValueError, match=r"path must not hold a NUL character: '.*/a\\x00b\.json'"
        ):
            write(str(tmp_path / "a\x00b.json"))
    assert list(tmp_path.iterdir()) == []


def test_a_name_of_255_bytes_saves(tmp_path: Path) -> None:
    path = tmp_path / ("é" * 127 + "x")  # 255 bytes in UTF-8: the longest name most systems take
    assert len(path.name.encode()) == 255
    session("long").save(path)
    assert Session.load(path).messages[0].text == "long"  # type: ignore[union-attr]
    assert strays(tmp_path) == []


@posix_only
def test_a_live_writers_temporary_file_stays_a_dead_ones_goes(tmp_path: Path) -> None:
    import fcntl

    live = tmp_path / f".s.json.live0000{SUFFIX}"
    dead = tmp_path / f".s.json.dead0000{SUFFIX}"
    live.write_text("being written")
    dead.write_text("left by a killed save")
    with live.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a writer in another process holds it
        write_atomic(tmp_path / "s.json", "one")
        assert strays(tmp_path) == [live.name]
    write_atomic(tmp_path / "s.json", "two")
    assert strays(tmp_path) == [] and (tmp_path / "s.json").read_text() == "two"


@posix_only
def test_the_folder_is_fsynced_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[tuple[bool, bool]] = []  # (a folder?, the target there yet?) per fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append((stat.S_ISDIR(os.fstat(fd).st_mode), (tmp_path / "s.json").exists()))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    write_atomic(tmp_path / "s.json", "content")
    assert synced == [(False, False), (True, True)]  # the data before the rename, the folder after


@posix_only
def test_saves_killed_at_random_points_leave_old_or_new_and_no_temporary_file(
    tmp_path: Path,
) -> None:
    """A writer killed by SIGKILL (uncatchable) at random points of its saves: the file is
    always one whole version, and the next successful save removes what the killed one left
    behind."""
    path = tmp_path / "session.json"
    big = "x" * 2_000_000  # a save long enough that most kills land inside it
    versions = [
        session("A " + big).to_dict(),
        session("B " + big).to_dict(),
    ]
    texts = [json.dumps(v, ensure_ascii=False, indent=1).encode() for v in versions]
    write_atomic(path, texts[0])
    rng = random.Random(22)
    left_behind = kills = 0
    # at least 30 kills, and on until one lands mid-save: how far a writer gets before its
    # kill depends on the machine's load, so the test waits for it, not for a fixed time
    while kills < 30 or (left_behind == 0 and kills < 300):
        ready, started = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer: saves the two versions in turn until killed
            try:
                os.close(ready)
                write_atomic(path, texts[0])
                os.write(started, b"!")  # one whole save done: the next ones are killed
                for i in range(1_000_000):
                    write_atomic(path, texts[i % 2])
            finally:
                os._exit(0)
        os.close(started)
        assert os.read(ready, 1) == b"!"  # the writer is saving
        os.close(ready)
        time.sleep(rng.uniform(0, 0.02))  # a random point of a save, not a wait
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert path.read_bytes() in texts, f"kill {kills}: a torn file"
        left_behind += len(strays(tmp_path))
        write_atomic(path, texts[kills % 2])
        assert strays(tmp_path) == [], f"kill {kills}: the next save left {strays(tmp_path)}"
        kills += 1
    assert left_behind > 0  # the kills did land mid-save
    last = "AB"[(kills - 1) % 2]  # the version of the last whole save
    assert Session.load(path).messages[0].text.startswith(last + " ")  # type: ignore[union-attr]
