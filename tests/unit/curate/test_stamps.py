"""The stamps a warm search lists its notes by (engramory.curate.stamps): split over two
processes past SPLIT_MIN names, always the answer one loop gives, or that loop's OSError, with
no child process left behind, whatever the child does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from engramory.curate import searchrefresh, stamps

pytestmark = pytest.mark.skipif(not stamps._LINUX, reason="the split is for Linux only")


@pytest.fixture()
def folder(tmp_path: Path) -> Iterator[tuple[int, list[str], Path]]:
    for i in range(40):
        (tmp_path / ("n%02d.md" % i)).write_bytes(b"x" * i)
    (tmp_path / "sub.md").mkdir()
    os.symlink("n01.md", tmp_path / "link.md")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd, sorted(os.listdir(fd)), tmp_path
    finally:
        os.close(fd)


def _no_child_left(pids: list[int]) -> bool:
    """Every child stamps forked is reaped (only those: a test run earlier in this worker may
    have left a child of its own, which is not this test's business)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


@pytest.fixture()
def split_always(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    monkeypatch.setattr(stamps, "SPLIT_MIN", 2)
    monkeypatch.setattr(stamps, "_cpus", lambda: 2)  # a one-CPU machine splits here too
    forks: list[int] = []
    real_fork = os.fork

    def counted() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(stamps.os, "fork", counted)
    yield forks
    assert forks, "the split path was not taken"


def test_split_answer_is_the_loops_answer(folder: tuple[int, list[str], Path], split_always: list[int]) -> None:
    fd, names, _ = folder
    got = stamps.stamps(fd, names)
    assert got == stamps.serial(fd, names)
    assert len(got) == stamps.FIELDS * len(names)
    assert _no_child_left(split_always)


def test_a_child_that_dies_or_answers_short_is_replaced_by_this_process(
        folder: tuple[int, list[str], Path], split_always: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    fd, names, _ = folder
    want = stamps.serial(fd, names)

    def dies(fd: int, names: list[str], w: int) -> None:
        os._exit(3)

    def short(fd: int, names: list[str], w: int) -> None:
        os.write(w, stamps.serial(fd, names).tobytes()[:-8])
        os._exit(0)

    def wrong_exit(fd: int, names: list[str], w: int) -> None:  # bytes of the right length, then a failure
        os.write(w, bytes(len(stamps.serial(fd, names).tobytes())))
        os._exit(1)

    for child in (dies, short, wrong_exit):
        monkeypatch.setattr(stamps, "_child", child)
        assert stamps.stamps(fd, names) == want, child.__name__
        assert _no_child_left(split_always)


def test_a_note_gone_before_its_lstat_is_the_loops_oserror(folder: tuple[int, list[str], Path], split_always: list[int]) -> None:
    fd, names, _ = folder
    for gone in (names[:1] + ["gone.md"] + names[1:], names + ["gone.md"]):  # in this process's half, in the child's
        with pytest.raises(FileNotFoundError):
            stamps.stamps(fd, gone)
        assert _no_child_left(split_always)


def test_a_refused_fork_falls_back(folder: tuple[int, list[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    fd, names, _ = folder
    monkeypatch.setattr(stamps, "SPLIT_MIN", 2)
    monkeypatch.setattr(stamps, "_cpus", lambda: 2)

    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(stamps.os, "fork", refused)
    assert stamps.stamps(fd, names) == stamps.serial(fd, names)


def test_never_split_with_other_threads_running_or_one_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setattr(stamps, "_cpus", lambda: 1)
    assert not stamps.split_ok(stamps.SPLIT_MIN)
    monkeypatch.setattr(stamps, "_cpus", lambda: 2)

    assert stamps.split_ok(stamps.SPLIT_MIN)
    assert not stamps.split_ok(stamps.SPLIT_MIN - 1)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not stamps.split_ok(stamps.SPLIT_MIN)
    finally:
        stop.set()
        t.join()


def test_the_listing_is_the_same_split_or_not(folder: tuple[int, list[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, root = folder
    whole = searchrefresh.listing(str(root))
    monkeypatch.setattr(stamps, "SPLIT_MIN", 2)
    monkeypatch.setattr(stamps, "_cpus", lambda: 2)
    split = searchrefresh.listing(str(root))
    assert [(n, s.tobytes()) for n, s, _ in split] == [(n, s.tobytes()) for n, s, _ in whole]
    assert whole[0][0] and "sub.md" not in whole[0][0] and "link.md" not in whole[0][0]
