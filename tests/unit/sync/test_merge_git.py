"""The index merge driver inside real git (the git on this machine, 2.39 or later): merge,
rebase and cherry-pick of two branches that each added notes are clean in every one of the
generated cases, where git's own text merge of the same commits conflicts (both shown); a
criss-cross history; a merged index over its cap exits non-zero and drops nothing; a clone
without the driver is reported by the doctor and repaired by `merge-index --resolve`; a
`merge=union` result with a duplicate pointer is repaired after its merge commit."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import List, Tuple

import pytest

from tests.unit.sync.gitkit import Kit, note

CASES = 12


def version(kit: Kit) -> Tuple[int, ...]:
    text = kit.git(kit.tmp, "--version").stdout.split()[-1]
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    k = Kit(tmp_path)
    assert version(k) >= (2, 39), "these tests need git 2.39 or later"
    return k


def base_index(n: int) -> List[str]:
    lines = ["# Memory Index", "", "## user"]
    lines += ["- [Fact %d about the store](n%d.md)" % (i, i) for i in range(n // 2)]
    lines += ["", "## project"]
    lines += ["- [Fact %d about the store](n%d.md)" % (i, i) for i in range(n // 2, n)]
    return lines


def write(repo: Path, lines: List[str], names: List[str]) -> None:
    (repo / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in names:
        (repo / (name + ".md")).write_bytes(note(name))


def setup_repo(kit: Kit, n: int = 40) -> Path:
    repo = kit.repo(kit.tmp / "store", ("\n".join(base_index(n)) + "\n").encode())
    for i in range(n):
        (repo / ("n%d.md" % i)).write_bytes(note("n%d" % i))
    kit.ok("sync", "init", str(repo))
    kit.git(repo, "add", "-A")
    kit.git(repo, "commit", "-q", "-m", "notes and sync init")
    kit.git(repo, "tag", "base")
    return repo


def side(rng: random.Random, lines: List[str], prefix: str, count: int, spot: int) -> Tuple[List[str], List[str]]:
    """`lines` with `count` new pointers: the first at `spot` (where the other side adds too),
    the rest anywhere among the entries."""
    out = list(lines)
    names = ["%s%d" % (prefix, i) for i in range(count)]
    out.insert(spot, "- [New fact %s](%s.md)" % (names[0], names[0]))
    for name in names[1:]:
        entries = [i for i, line in enumerate(out) if line.startswith("- [")]
        out.insert(rng.choice(entries) + 1, "- [New fact %s](%s.md)" % (name, name))
    return out, names


def commit_side(kit: Kit, repo: Path, branch: str, lines: List[str], names: List[str]) -> None:
    kit.git(repo, "checkout", "-q", "-B", branch, "base")
    write(repo, lines, names)
    kit.git(repo, "add", "-A")
    kit.git(repo, "commit", "-q", "-m", branch)


def pointers(repo: Path) -> List[str]:
    return re.findall(r"^- \[[^\]]*\]\(([^)]+)\)", (repo / "MEMORY.md").read_text(encoding="utf-8"), re.M)


def text_merge_conflicts(kit: Kit, repo: Path, a: str, b: str) -> bool:
    """Git's own line merge of the same two branches (the attribute overridden in .git/info)."""
    info = repo / ".git" / "info" / "attributes"
    info.parent.mkdir(exist_ok=True)
    info.write_text("/MEMORY.md merge=text\n", encoding="utf-8")
    try:
        kit.git(repo, "checkout", "-q", "-B", "text-" + a, a)
        done = kit.git(repo, "merge", "-q", "--no-edit", b, check=False)
        conflicted = done.returncode != 0 and "MEMORY.md" in done.stdout + done.stderr
        kit.git(repo, "merge", "--abort", check=False)
        return conflicted
    finally:
        info.unlink()


def test_merge_rebase_and_cherry_pick_of_disjoint_additions_are_clean(kit: Kit) -> None:
    repo = setup_repo(kit)
    base = base_index(40)
    rng = random.Random(24)
    results = {"merge": 0, "rebase": 0, "cherry-pick": 0, "text merge conflicts": 0}
    for case in range(CASES):
        spot = rng.choice([i + 1 for i, line in enumerate(base) if line.startswith("- [")])
        lines_a, names_a = side(rng, base, "a%d-" % case, rng.randint(1, 4), spot)
        lines_b, names_b = side(rng, base, "b%d-" % case, rng.randint(1, 4), spot)
        commit_side(kit, repo, "a%d" % case, lines_a, names_a)
        commit_side(kit, repo, "b%d" % case, lines_b, names_b)
        want = sorted(["n%d.md" % i for i in range(40)] + [n + ".md" for n in names_a + names_b])
        results["text merge conflicts"] += text_merge_conflicts(kit, repo, "a%d" % case, "b%d" % case)
        for op, start, args in (("merge", "a", ["merge", "-q", "--no-edit", "b%d" % case]),
                                ("rebase", "b", ["rebase", "-q", "a%d" % case]),
                                ("cherry-pick", "a", ["cherry-pick", "b%d" % case])):
            kit.git(repo, "checkout", "-q", "-B", "%s%d" % (op, case), "%s%d" % (start, case))
            done = kit.git(repo, *args, check=False)
            assert done.returncode == 0, (op, case, done.stdout, done.stderr)
            assert sorted(pointers(repo)) == want, (op, case)
            results[op] += 1
    assert results == {"merge": CASES, "rebase": CASES, "cherry-pick": CASES, "text merge conflicts": CASES}


def test_criss_cross_history(kit: Kit) -> None:
    repo = setup_repo(kit, 10)
    base = base_index(10)

    def add(branch: str, name: str, start: str) -> None:
        kit.git(repo, "checkout", "-q", branch) if start == "" else kit.git(repo, "checkout", "-q", "-B", branch, start)
        lines = (repo / "MEMORY.md").read_text(encoding="utf-8").rstrip("\n").split("\n")
        lines.insert(lines.index("## project") - 1, "- [New fact %s](%s.md)" % (name, name))
        write(repo, lines, [name])
        kit.git(repo, "add", "-A")
        kit.git(repo, "commit", "-q", "-m", name)

    assert base
    add("A", "x1", "base")
    add("B", "y1", "base")
    kit.git(repo, "tag", "a1", "A")
    kit.git(repo, "checkout", "-q", "A")
    kit.git(repo, "merge", "-q", "--no-edit", "B")  # A2: A1 + B1
    kit.git(repo, "checkout", "-q", "B")
    kit.git(repo, "merge", "-q", "--no-edit", "a1")  # B2: B1 + A1, the criss-cross
    add("A", "x2", "")
    add("B", "y2", "")
    kit.git(repo, "checkout", "-q", "A")
    bases = kit.git(repo, "merge-base", "--all", "A", "B").stdout.split()
    assert len(bases) == 2  # two merge bases: git merges them into a virtual one, with the driver too
    done = kit.git(repo, "merge", "--no-edit", "B", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(pointers(repo)) == sorted(["n%d.md" % i for i in range(10)] + ["x1.md", "y1.md", "x2.md", "y2.md"])


def test_an_over_cap_merge_exits_non_zero_and_drops_nothing(kit: Kit) -> None:
    repo = setup_repo(kit, 194)  # 199 lines
    base = base_index(194)
    commit_side(kit, repo, "a", base + ["- [A%d](a%d.md)" % (i, i) for i in range(3)], ["a%d" % i for i in range(3)])
    commit_side(kit, repo, "b", base + ["- [B%d](b%d.md)" % (i, i) for i in range(3)], ["b%d" % i for i in range(3)])
    kit.git(repo, "checkout", "-q", "a")
    done = kit.git(repo, "merge", "--no-edit", "b", check=False)
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "the merged index is 205 lines" in said and "by 5 lines" in said and "engramory compact" in said
    got = pointers(repo)
    assert len(got) == 200 and len(set(got)) == 200  # every line, none twice
    assert (repo / "MEMORY.md").read_bytes().count(b"\n") == 205


def test_a_clone_without_the_driver_is_reported_and_repaired(kit: Kit) -> None:
    repo = setup_repo(kit, 10)
    base = base_index(10)
    commit_side(kit, repo, "a", base + ["- [A](a.md)"], ["a"])
    commit_side(kit, repo, "b", base + ["- [B](b.md)"], ["b"])
    kit.git(repo, "checkout", "-q", "a")
    kit.git(repo, "config", "--unset", "merge.engramory-index.driver")
    kit.git(repo, "config", "--unset", "merge.engramory-index.name")
    doctor = json.loads(kit.engramory("doctor", "--json", str(repo)).stdout)
    assert "merge-driver-unset" in {f["code"] for f in doctor["findings"]}
    done = kit.git(repo, "merge", "--no-edit", "b", check=False)
    assert done.returncode != 0 and b"<<<<<<<" in (repo / "MEMORY.md").read_bytes()  # git's line merge
    doctor = json.loads(kit.engramory("doctor", "--json", str(repo)).stdout)
    markers = [f for f in doctor["findings"] if f["code"] == "index-conflict-markers"]
    assert markers and markers[0]["severity"] == "error"
    fixed = kit.ok("merge-index", "--resolve", str(repo / "MEMORY.md"))
    assert "three-way merge of the merge in progress" in fixed.stdout
    assert sorted(pointers(repo)) == sorted(["n%d.md" % i for i in range(10)] + ["a.md", "b.md"])
    assert b"<<<<<<<" not in (repo / "MEMORY.md").read_bytes()
    kit.git(repo, "add", "MEMORY.md")
    kit.git(repo, "commit", "-q", "--no-edit")
    undo = re.search(r"`engramory undo (\d+)`", fixed.stdout)
    assert undo is not None  # the repair is a journal entry


def test_a_union_merge_duplicate_is_repaired_from_the_merge_commit(kit: Kit) -> None:
    """`update x` on one side and `new y` after x on the other: merge=union keeps both versions
    of x's line, a duplicate pointer; --resolve after the merge commit gives x's new line once."""
    repo = setup_repo(kit, 4)
    base = base_index(4)
    last = base.index("- [Fact 3 about the store](n3.md)")
    a = list(base)
    a[last] = "- [Fact 3, reworded](n3.md)"
    b = list(base)
    b.insert(last + 1, "- [Y](y.md)")
    commit_side(kit, repo, "a", a, [])
    commit_side(kit, repo, "b", b, ["y"])
    info = repo / ".git" / "info" / "attributes"
    info.parent.mkdir(exist_ok=True)
    info.write_text("/MEMORY.md merge=union\n", encoding="utf-8")
    kit.git(repo, "checkout", "-q", "a")
    kit.git(repo, "merge", "-q", "--no-edit", "b")
    assert pointers(repo).count("n3.md") == 2  # union: both versions of the line
    fixed = kit.ok("merge-index", "--resolve", str(repo), "--json")
    report = json.loads(fixed.stdout)
    assert report["how"].startswith("the three-way merge of the merge commit's two parents")
    assert report["duplicates"] == ["n3.md"] and report["conflicts"] == []
    text = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [Fact 3, reworded](n3.md)\n- [Y](y.md)\n" in text and "Fact 3 about" not in text
