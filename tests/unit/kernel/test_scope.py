"""engramory.scope's path layer must agree with os.path wherever the hot path uses it instead."""

from __future__ import annotations

import os
import posixpath
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import scope as _fs

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the path layer is os.path itself on Windows")

paths = st.lists(st.sampled_from(["", ".", "..", "a", "b", "~", "x y", "\u00e9", "/"]), max_size=6).map("/".join)


@settings(max_examples=500, deadline=None)
@given(paths)
def test_pure_functions_match_posixpath(p: str) -> None:
    for name in ("normpath", "dirname", "basename", "split", "isabs"):
        assert getattr(_fs, name)(p) == getattr(posixpath, name)(p), name
    assert _fs.abspath(p) == posixpath.abspath(p)
    assert _fs.expanduser(p) == posixpath.expanduser(p)


@settings(max_examples=300, deadline=None)
@given(paths, paths)
def test_join_matches_posixpath(a: str, b: str) -> None:
    assert _fs.join(a, b) == posixpath.join(a, b)


def test_realpath_matches_on_links_loops_and_missing_parts(tmp_path: Path) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "l1").symlink_to(tmp_path / "real")
    (tmp_path / "l2").symlink_to("l1/sub")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "real" / "sub" / "up").symlink_to("../../real")
    (tmp_path / "dangling").symlink_to("nowhere/x")
    for p in ["l1/sub", "l2/x", "loop/x", "real/sub/up/sub/up", "l2/../sub", "nope/../l1", "dangling", "dangling/y"]:
        full = str(tmp_path / p)
        assert _fs.realpath(full) == os.path.realpath(full), p
    assert _fs.realpath("relative/x") == os.path.realpath("relative/x")


def test_file_kinds(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "ln").symlink_to(tmp_path / "f")
    os.mkfifo(tmp_path / "fifo")
    for name in ("f", "d", "ln", "fifo", "missing"):
        p = str(tmp_path / name)
        assert (_fs.isfile(p), _fs.isdir(p), _fs.islink(p)) == (os.path.isfile(p), os.path.isdir(p), os.path.islink(p))
    assert _fs.isfile("bad\x00path") is False


def test_environ_is_live_once_os_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAMORY_FS_PROBE", "1")
    assert _fs.environ()["ENGRAMORY_FS_PROBE"] == "1"


def test_environ_without_os_matches_os_environ() -> None:
    import subprocess

    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys; sys.path.insert(0, %r); from engramory import scope; e = dict(scope.environ());"
        "assert 'os' not in sys.modules; import os; print(e == dict(os.environ))" % str(root)
    )
    env = {"PATH": "/usr/bin", "ODD": "caf\u00e9", "EMPTY": ""}
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, env=env, check=True)
    assert proc.stdout.strip() == "True"
