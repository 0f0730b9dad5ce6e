"""`engramory search`'s command line read without argparse (commands/search.quick), held to the
argparse parser, which stays its one definition: every shape quick reads, it reads as argparse
does; every other shape it leaves to argparse (None); and the whole command prints the same
bytes and exits the same either way. Plus: a warm search imports no argparse, typing, shutil or json,
nor the writing commands' modules (datetime it does: sqlite3 imports it)."""

from __future__ import annotations

import io
import itertools
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
import search_fixture as fx
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory.commands import search as cmd
from engramory.curate import searchindex
from tests.conftest import ROOT

FIELDS = ("query", "root", "type", "limit", "live", "json", "no_index")


def by_argparse(argv: List[str]) -> Optional[Tuple[object, ...]]:
    """What argparse makes of `argv` (the limit rule included), or None when it refuses."""
    p = cmd.parser()
    try:
        with redirect_stderr(io.StringIO()), redirect_stdout(io.StringIO()):
            ns = p.parse_args(argv)
    except SystemExit:
        return None
    if ns.limit < 1:
        return None
    return tuple(getattr(ns, f) for f in FIELDS)


def by_quick(argv: List[str]) -> Optional[Tuple[object, ...]]:
    got = cmd.quick(argv)
    return None if got is None else tuple(getattr(got, f) for f in FIELDS)


SHAPES = [
    ["redis"], ["two", "words"], ["redis", "/tmp/x"], ["--live", "redis"], ["redis", "--live"],
    ["--json", "--live", "--no-index", "a", "b"], ["--limit", "3", "a"], ["a", "--limit", "3"], ["--limit=3", "a"],
    ["--limit", " 7 ", "a"], ["--limit", "+2", "a"], ["--limit", "1_0", "a"], ["--limit", "0", "a"],
    ["--limit", "-1", "a"], ["--limit", "x", "a"], ["--limit=", "a"], ["--limit"], ["a", "--limit"],
    ["--root", "r", "a"], ["--root=r", "a"], ["--root=", "a", "./r"], ["--root", "", "a"], ["--root=-r", "a"],
    ["--root", "-r", "a"], ["--type", "user", "a"], ["--type=project", "a"], ["--type", "nope", "a"],
    ["--type=", "a"], ["a", "--live", "b"], ["a", "--root", "r", "b"], ["--live"], [], ["-h"], ["--help", "a"],
    ["--", "a"], ["a", "--", "-b"], ["-"], ["a", "-"], ["-x"], ["a", "-5"], ["--lim", "3", "a"], ["--js", "a"],
    ["--no", "a"], ["--live=1", "a"], ["--json=", "a"], ["--root", "r", "--root", "s", "a"],
    ["--limit", "0", "--limit", "4", "a"], ["--type", "nope", "--type", "user", "a"], ["", "a"], ["a", ""],
    ["-a b", "c"], ["a", "--type", "user", "--limit", "2", "--root", "r", "--json"], ["\udcff", "a"],
]


@pytest.mark.parametrize("argv", SHAPES, ids=[repr(s) for s in SHAPES])
def test_quick_reads_a_shape_as_argparse_does_or_leaves_it(argv: List[str]) -> None:
    quick = by_quick(argv)
    if quick is not None:
        assert quick == by_argparse(argv)


def test_quick_reads_the_usual_shapes_itself() -> None:
    usual = [s for s in SHAPES if by_quick(s) is not None]
    assert ["redis", "/tmp/x"] in usual and ["a", "--type", "user", "--limit", "2", "--root", "r", "--json"] in usual
    assert len(usual) >= 20


TOKENS = ["a", "b", "./r", "--live", "--json", "--no-index", "--root", "--root=r", "--type", "user", "--type=feedback",
          "--limit", "2", "--limit=5", "0", "-1", "--lim", "-h", "--", "", "nope", "-"]


@given(st.lists(st.sampled_from(TOKENS), max_size=7))
@settings(max_examples=1500, deadline=None)
def test_any_command_line_is_read_as_argparse_reads_it(argv: List[str]) -> None:
    quick = by_quick(argv)
    if quick is not None:
        assert quick == by_argparse(argv), argv


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("searchcli") / "mem"
    fx.write(root, distractors=40)
    assert searchindex.build(str(root))
    return root


def run(argv: List[str], force_argparse: bool, monkeypatch: pytest.MonkeyPatch) -> Tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with monkeypatch.context() as m:
        if force_argparse:
            m.setattr(cmd, "quick", lambda argv: None)
        m.setattr(sys, "stdout", out)
        m.setattr(sys, "stderr", err)
        try:
            code = cmd.main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


COMBOS = [list(c) for n in range(4) for c in itertools.combinations(
    (["--live"], ["--json"], ["--no-index"], ["--limit", "3"], ["--type", "feedback"], ["--limit=2"]), n)]


@pytest.mark.parametrize("flags", COMBOS, ids=[" ".join(sum(c, [])) or "none" for c in COMBOS])
@pytest.mark.parametrize("words", [["run", "all", "tests"], ["zzzqqq"]])
@pytest.mark.parametrize("where", ["last", "flag", "flag="])
def test_the_command_prints_and_exits_the_same_either_way(store: Path, flags: List[List[str]], words: List[str],
                                                          where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    flat = sum(flags, [])
    if where == "last":
        argv = flat + words + [str(store)]
    elif where == "flag":
        argv = words + flat + ["--root", str(store)]
    else:
        argv = ["--root=" + str(store)] + flat + words
    assert cmd.quick(argv) is not None, argv
    assert run(argv, False, monkeypatch) == run(argv, True, monkeypatch)


@pytest.mark.parametrize("argv", [["a", "--limit", "0", "."], ["--type", "nope", "a"], ["a", "--live", "b"],
                                  ["a", "/nonexistent/store"], ["--json", "a", "/nonexistent/store"], ["-h"]])
def test_errors_are_argparses_and_the_commands_own(argv: List[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(argv, False, monkeypatch) == run(argv, True, monkeypatch)


def test_a_warm_search_imports_only_what_it_needs(store: Path) -> None:
    # A note changed within RACY_NS of a search is read again and the index state saved (json):
    # wait out that window from the store's newest change, and let one search settle it, so the
    # search measured is the warm one whatever order the tests ran in.
    import os
    import time

    from engramory.curate import searchrefresh

    newest = max(os.lstat(p).st_ctime for p in store.rglob("*"))
    time.sleep(max(0.0, newest + searchrefresh.RACY_NS / 1e9 + 0.2 - time.time()))
    subprocess.run([sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), "search", "settle", str(store)],
                   capture_output=True, check=False, timeout=60)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from engramory import cli; cli.main(sys.argv[2:]); "
            "print(' '.join(sorted(sys.modules)))")
    got = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(ROOT), "search", "run all tests", str(store)],
                         capture_output=True, text=True, check=True, timeout=60)
    loaded = set(got.stdout.splitlines()[-1].split())
    assert "engramory.curate.searchindex" in loaded  # the index answered
    unwanted = {"argparse", "typing", "shutil", "json", "engramory.curate.notes", "engramory.commands.parser",
                "engramory.store.reader", "gettext", "textwrap", "locale"} & loaded
    assert not unwanted, unwanted
