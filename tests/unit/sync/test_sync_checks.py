"""The doctor's checks of a store shared through git: index-conflict-markers (an error, also
in the SessionStart audit, which runs no git), merge-driver-unset and engramory-state-tracked
(warnings), and store-in-git quiet for a store `sync init` set up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest

from engramory.doctor import run as doctor
from engramory.store import reader as store
from tests.unit.sync.gitkit import Kit


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return Kit(tmp_path)


def codes(kit: Kit, root: Path) -> Dict[str, List[Dict[str, object]]]:
    report = json.loads(kit.engramory("doctor", "--json", str(root)).stdout)
    out: Dict[str, List[Dict[str, object]]] = {}
    for f in report["findings"]:
        out.setdefault(f["code"], []).append(f)
    return out


def test_conflict_markers_are_an_error_with_their_lines(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory Index\n<<<<<<< HEAD\n- [A](a.md)\n=======\n- [A2](a.md)\n"
                                    ">>>>>>> other\n", encoding="utf-8")
    (root / "a.md").write_text("---\nname: a\ndescription: A fact about the build cache\ntype: user\n"
                               "created: 2026-11-01\nupdated: 2026-11-01\n---\nx\n", encoding="utf-8")
    st = store.load(str(root))
    quick = [f for f in doctor.run_checks(st, doctor.Context(git=False, quick=True))
             if f.code == "index-conflict-markers"]
    assert [(f.line, f.severity) for f in quick] == [(2, "error"), (4, "error"), (6, "error")]
    assert "merge-index --resolve" in quick[0].message


def test_a_marker_like_line_that_is_not_one(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory Index\n<<<<<<<<not a marker\n======= not one either\n",
                                    encoding="utf-8")
    st = store.load(str(root))
    assert not [f for f in doctor.run_checks(st, doctor.Context(git=False)) if f.code == "index-conflict-markers"]


def test_driver_unset_and_state_tracked(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    kit.ok("sync", "init", str(repo))
    assert "merge-driver-unset" not in codes(kit, repo)
    kit.git(repo, "config", "--unset", "merge.engramory-index.driver")
    found = codes(kit, repo)
    assert found["merge-driver-unset"][0]["severity"] == "warning"
    assert "engramory sync init" in str(found["merge-driver-unset"][0]["message"])
    kit.ok("new", str(repo), "--type", "user", "--name", "some-fact", "--description",
           "The user formats code with black before committing", "--body", "Black.")
    kit.git(repo, "add", "-f", ".engramory")
    kit.git(repo, "commit", "-q", "-m", "oops, the journal")
    found = codes(kit, repo)
    assert found["engramory-state-tracked"][0]["severity"] == "warning"
    assert "git rm -r --cached .engramory" in str(found["engramory-state-tracked"][0]["message"])


def test_store_in_git_is_an_error_by_accident_and_quiet_once_set_up(kit: Kit) -> None:
    project = kit.repo(kit.tmp / "project", b"# project\n")
    memory = project / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")
    assert codes(kit, memory)["store-in-git"][0]["severity"] == "error"
    kit.ok("sync", "init", str(memory))
    assert "store-in-git" not in codes(kit, memory)
    kit.ok("sync", "init", "--undo", str(memory))
    assert "store-in-git" in codes(kit, memory)


def test_list_checks_names_the_new_codes(kit: Kit) -> None:
    out = kit.ok("doctor", "--list-checks").stdout
    for code in ("index-conflict-markers", "merge-driver-unset", "engramory-state-tracked"):
        assert code in out
