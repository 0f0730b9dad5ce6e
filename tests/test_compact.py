"""`engramory compact`: every invariant on every plan, byte-identical re-runs, apply then undo
byte for byte, refusal on a changed store, and the result within the caps whenever the plan
says so; on the repository's fixture stores and on generated over-cap stores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings

from engramory import exitcodes, guard
from engramory.commands import compact as compact_cmd
from engramory.compact import apply as compact
from engramory.compact import plan as compactplan
from engramory.doctor import run as doctor
from engramory.hosts import claude
from engramory.store import journal, review
from engramory.store import reader as store_mod
from tests.compact_stores import build, snapshot, store_spec
from tests.conftest import ROOT

WINDOW = claude.window()
FIXTURES = ROOT / "tests" / "fixtures" / "stores"
STORES = sorted(p.name for p in FIXTURES.iterdir() if (p / "MEMORY.md").is_file())
TARGETS = (None, "3/100", "1/1")
PROFILE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def run(argv: List[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = compact_cmd.main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def plan_json(root: Path, target: str | None = None) -> Dict[str, Any]:
    lines = nbytes = None
    if target:
        lines, nbytes = compact.parse_target(target)
    plan = compact.plan_for(str(root), lines, nbytes)
    assert not plan.recounted  # the running count agreed with the host window's whole count
    return compact.plan_dict(plan, str(root))


def findings(root: Path, code: str) -> set[str]:
    _, found = doctor.audit(str(root), doctor.Context(git=False))
    return {f.path for f in found if f.code == code}


def count(root: Path, code: str) -> int:
    _, found = doctor.audit(str(root), doctor.Context(git=False))
    return sum(1 for f in found if f.code == code)


def reach_of(root: Path) -> set[str]:
    """Notes the index points to or a live note [[links]] (the doctor's reach), read afresh."""
    st = store_mod.load(str(root))
    index = {p.rel for p in st.pointers if p.exists and not p.escapes and p.rel}
    texts = {n.rel: n.text for n in st.notes if n.text is not None}
    return compactplan.reachable(st, index, texts, {n.rel for n in st.live})


def check_store(root: Path, target: str | None) -> None:
    """The whole contract on one store: plan twice, check, apply, check on disk, undo."""
    first = plan_json(root, target)
    again = plan_json(root, target)
    assert json.dumps(first) == json.dumps(again), "the plan is not the same on a re-run"
    for unit in ("lines", "bytes", "units"):  # each operation's effect adds up to the whole
        assert sum(o["effect"][unit] for o in first["operations"]) == first["after"][unit] - first["before"][unit]
    inv = {i["name"]: i["ok"] for i in first["invariants"]}
    assert inv["reachable"], first["invariants"]
    assert inv["no-text-lost"], first["invariants"]
    if not inv["within-hard-caps"]:
        assert first["status"] == "refused" and first["exit"] == 2
        return
    if first["status"] in ("nothing-to-do",):
        assert not first["changes"] and first["exit"] == 0
        return
    before = snapshot(root)
    texts_before = {rel: (root / rel).read_bytes() for rel in before}
    reach_before = reach_of(root)
    orphans_before = findings(root, "note-orphan")
    broken_before = count(root, "pointer-broken")
    saved = root.parent / (root.name + "-plan.json")
    saved.write_text(json.dumps(first), encoding="utf-8")
    code = compact_cmd.main([str(root), "--apply", str(saved)])
    assert code == first["exit"]
    # on disk: sizes as planned, within the target when the plan says so
    index = (root / "MEMORY.md").read_bytes()
    lines, units = WINDOW.measure(index)  # as the guard counts it
    assert (lines, units, len(index)) == (first["after"]["lines"], first["after"]["units"], first["after"]["bytes"])
    if first["within_target"]:
        assert lines <= first["target"]["lines"] and units <= first["target"]["bytes"]
    if first["status"] != "refused":
        caps = guard.caps_for(str(root / "MEMORY.md"), None, WINDOW)[0]
        assert lines <= caps.hard_lines and units <= caps.hard_bytes
    # no note unreachable that was reachable, unless it sits in archive/
    reach_after = reach_of(root)
    for rel in reach_before:
        if rel in reach_after:
            continue
        moved = [c for c in first["changes"] if c["path"] == rel and c["action"] == "move"]
        assert moved and (root / moved[0]["to"]).is_file(), rel
    assert findings(root, "note-orphan") <= orphans_before
    assert count(root, "pointer-broken") <= broken_before
    # no text lost: every note's words are still there, at its place or in archive/
    for rel, data in texts_before.items():
        if not rel.endswith(".md") or rel == "MEMORY.md":
            continue
        moved = [c["to"] for c in first["changes"] if c["path"] == rel and c["action"] == "move"]
        now = (root / (moved[0] if moved else rel)).read_bytes().decode("utf-8", "replace")
        old = compactplan.text_tokens(data.decode("utf-8", "replace"))
        assert compactplan.text_tokens(now)[:len(old)] == old, rel
    # the journal holds one entry; undo puts every byte back
    entries = journal.entries(str(root))
    if not first["changes"]:
        assert entries == [] and snapshot(root) == before
        return
    assert entries[-1].command == "compact"
    journal.undo(str(root), entries[-1].id)
    assert snapshot(root) == before


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", STORES)
def test_fixture_stores(tmp_path: Path, name: str, target: str | None) -> None:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, symlinks=True)
    check_store(root, target)


@PROFILE
@given(store_spec())
def test_generated_stores(spec: Dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        build(root, spec)
        check_store(root, None)


@settings(max_examples=25, deadline=None)
@given(store_spec())
def test_changed_store_makes_apply_refuse(spec: Dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        build(root, spec)
        plan = plan_json(root)
        if not plan["changes"] or plan["status"] == "refused":
            return
        saved = Path(tmp) / "plan.json"
        saved.write_text(json.dumps(plan), encoding="utf-8")
        victim = sorted(p for p in root.glob("*.md"))[-1]
        victim.write_bytes(victim.read_bytes() + b"\nedited by someone else\n")
        before = snapshot(root)
        assert compact_cmd.main([str(root), "--apply", str(saved)]) == exitcodes.EX_DATAERR
        assert snapshot(root) == before
        assert journal.entries(str(root)) == []


# -- the operations, one at a time ------------------------------------------------------


def note(root: Path, slug: str, body: str, type_: str = "user", updated: str = "2026-01-10", extra: str = "") -> None:
    (root / (slug + ".md")).write_text(
        "---\nname: %s\ndescription: About %s\ntype: %s\ncreated: 2026-01-01\nupdated: %s\n%s---\n\n%s\n"
        % (slug, slug, type_, updated, extra, body), encoding="utf-8")


def ops(plan: Dict[str, Any]) -> List[str]:
    return [o["op"] for o in plan["operations"]]


def test_pointerify_moves_the_text_into_the_note(tmp_path: Path) -> None:
    note(tmp_path, "user-a", "Short.")
    long = "the user explained at length why this matters " * 5
    (tmp_path / "MEMORY.md").write_text("- [A](user-a.md) \u2014 %s\n" % long.strip(), encoding="utf-8")
    plan = plan_json(tmp_path, "5/100")
    assert ops(plan) == ["pointerify"]
    after = {c["path"]: c["after"] for c in plan["changes"]}
    assert after["MEMORY.md"] == "- [A](user-a.md) \u2014 the user explained at length why this matters the user\n"
    assert after["user-a.md"].endswith("\n## From the index\n\n%s\n" % long.strip())
    assert plan["exit"] == 1 and plan["within_target"]


def test_pointerify_keeps_a_note_that_already_says_it(tmp_path: Path) -> None:
    long = "deploys go through the staging queue first and then wait for a review " * 3
    note(tmp_path, "user-a", long)
    (tmp_path / "MEMORY.md").write_text("- [A](user-a.md) \u2014 %s\n" % long.strip(), encoding="utf-8")
    plan = plan_json(tmp_path, "5/100")
    assert [c["path"] for c in plan["changes"]] == ["MEMORY.md"]


def test_duplicate_and_dead_pointers(tmp_path: Path) -> None:
    note(tmp_path, "user-a", "A.")
    (tmp_path / "MEMORY.md").write_text(
        "- [A](user-a.md) \u2014 a\n- [A again](user-a.md) \u2014 a\n- [Gone](gone.md) \u2014 was here\n", encoding="utf-8")
    plan = plan_json(tmp_path, "1/1000")
    assert ops(plan) == ["drop-duplicate-pointer", "drop-dead-pointer"]
    assert plan["changes"][0]["after"] == "- [A](user-a.md) \u2014 a\n"


def test_merge_identical_archives_the_older_and_repoints_links(tmp_path: Path) -> None:
    note(tmp_path, "user-old", "Same fact, same words.", updated="2026-01-01")
    note(tmp_path, "user-new", "Same fact,   same words.\n", updated="2026-02-01")
    note(tmp_path, "user-hub", "See [[user-old|the fact]] and [[user-old#why]].")
    (tmp_path / "MEMORY.md").write_text(
        "- [Old](user-old.md) \u2014 x\n- [New](user-new.md) \u2014 x\n- [Hub](user-hub.md) \u2014 x\n", encoding="utf-8")
    plan = plan_json(tmp_path, "2/1000")
    assert ops(plan) == ["merge-identical"]
    changes = {c["path"]: c for c in plan["changes"]}
    assert changes["user-old.md"]["action"] == "move" and changes["user-old.md"]["to"] == "archive/user-old.md"
    assert "See [[user-new|the fact]] and [[user-new#why]]." in changes["user-hub.md"]["after"]


def test_archive_cold_by_score_never_pinned_never_orphaning(tmp_path: Path) -> None:
    note(tmp_path, "user-fresh", "u", updated="2026-06-01")
    note(tmp_path, "project-old", "p\n\n**Why:** w\n\n**How to apply:** h", type_="project", updated="2025-01-01",
         extra="pinned: 'true'\n")
    note(tmp_path, "reference-old", "r [[user-leaf]]", type_="reference", updated="2025-06-01")
    note(tmp_path, "user-leaf", "leaf")
    note(tmp_path, "feedback-mid", "f\n\n**Why:** w\n\n**How to apply:** h", type_="feedback", updated="2026-03-01")
    (tmp_path / "MEMORY.md").write_text(
        "".join("- [%s](%s.md) \u2014 x\n" % (s, s) for s in ("user-fresh", "project-old", "reference-old", "feedback-mid")),
        encoding="utf-8")
    plan = plan_json(tmp_path, "3/1000")
    assert ops(plan) == ["archive-cold"]
    assert plan["operations"][0]["paths"] == ["feedback-mid.md", "archive/feedback-mid.md"]
    kinds = {d["kind"] for d in plan["decisions"]}
    assert not kinds  # the target was met
    plan = plan_json(tmp_path, "1/1000")
    moved = [o["paths"][0] for o in plan["operations"] if o["op"] == "archive-cold"]
    assert "project-old.md" not in moved and "reference-old.md" not in moved
    assert plan["status"] == "decisions-needed" and plan["exit"] == 2
    kinds = {d["kind"] for d in plan["decisions"]}
    assert {"pinned", "keeps-others-reachable", "over-target"} <= kinds


def test_propose_merge_is_listed_never_applied(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "near-duplicates", tmp_path / "s")
    plan = plan_json(tmp_path / "s", "100/100000")
    assert plan["status"] == "nothing-to-do" and plan["exit"] == 0
    pairs = [p["paths"] for p in plan["proposals"]]
    assert ["feedback-focused-commits.md", "feedback-small-commits.md"] in pairs or \
        ["feedback-small-commits.md", "feedback-focused-commits.md"] in pairs
    assert not plan["changes"]


def test_crlf_and_bom_survive(tmp_path: Path) -> None:
    (tmp_path / "user-a.md").write_bytes(
        b"---\r\nname: user-a\r\ndescription: About a\r\ntype: user\r\ncreated: 2026-01-01\r\nupdated: 2026-01-01\r\n"
        b"---\r\n\r\nCaf\xc3\xa9.\r\n")
    long = ("caf\u00e9 \U0001f600 " * 30).strip()
    (tmp_path / "MEMORY.md").write_bytes(("\ufeff# Index\r\n- [A](user-a.md) \u2014 %s\r\n" % long).encode("utf-8"))
    plan = plan_json(tmp_path, "5/200")
    assert ops(plan) == ["pointerify"]
    after = {c["path"]: c["after"].encode("utf-8") for c in plan["changes"]}
    assert after["MEMORY.md"].startswith(b"\xef\xbb\xbf# Index\r\n- [A](user-a.md)")
    assert after["MEMORY.md"].endswith(b"\r\n") and b"\n" not in after["MEMORY.md"].replace(b"\r\n", b"")
    assert after["user-a.md"].endswith(("\r\n## From the index\r\n\r\n%s\r\n" % long).encode("utf-8"))
    assert plan["before"]["units"] != plan["before"]["bytes"]  # the host's unit is not bytes here


# -- the command ------------------------------------------------------------------------


def over_cap_store(root: Path, n: int = 230) -> None:
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        note(root, "project-n%d" % i, "fact %d" % i, type_="project", updated="2026-%02d-01" % (1 + i % 12))
        lines.append("- [n%d](project-n%d.md) \u2014 hook %d\n" % (i, i, i))
    (root / "MEMORY.md").write_text("".join(lines), encoding="utf-8")


def test_cli_plan_apply_undo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "mem"
    over_cap_store(root)
    before = snapshot(root)
    code, out, _ = run([str(root)], capsys)
    assert code == 1 and "Plan: 80 operations (80 archive-cold); 81 files change." in out and "archive-cold" in out
    assert snapshot(root) == before  # the plan writes nothing
    code2, out2, _ = run([str(root)], capsys)
    assert (code2, out2) == (code, out)
    code, out, _ = run([str(root), "--apply", "-"], capsys)
    assert code == 1 and "as journal entry 1" in out
    assert WINDOW.measure((root / "MEMORY.md").read_bytes())[0] == 150
    code, out, _ = run([str(root)], capsys)
    assert code == 0 and "Nothing to do" in out
    journal.undo(str(root), 1)
    assert snapshot(root) == before


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(tmp_path / "nope")], capsys)[0] == 66
    tmp_path.joinpath("empty").mkdir()
    code, _, err = run([str(tmp_path / "empty")], capsys)
    assert code == 66 and "index-missing" in err
    assert run([str(tmp_path), "--target", "x/y"], capsys)[0] == 64
    assert run([str(tmp_path), "--target", "0/5"], capsys)[0] == 64
    assert run([str(tmp_path), "--apply", str(tmp_path / "missing.json")], capsys)[0] == 66
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert run([str(tmp_path), "--apply", str(bad)], capsys)[0] == 65
    bad.write_text(json.dumps({"kind": "something else"}), encoding="utf-8")
    assert run([str(tmp_path), "--apply", str(bad)], capsys)[0] == 65
    (tmp_path / "MEMORY.md").write_bytes(b"\xff\xfe not utf-8\n")
    assert run([str(tmp_path)], capsys)[0] == 66


def test_json_output_is_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over_cap_store(tmp_path, 160)
    code, out, _ = run([str(tmp_path), "--json"], capsys)
    obj = json.loads(out)
    assert code == obj["exit"] == 1 and obj["kind"] == "engramory-compact-plan"
    assert obj["within_target"] and obj["after"]["lines"] <= 150
    assert all(i["ok"] for i in obj["invariants"])


def test_plan_for_another_root_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over_cap_store(tmp_path / "a", 160)
    over_cap_store(tmp_path / "b", 160)
    code, out, _ = run([str(tmp_path / "a"), "--json"], capsys)
    (tmp_path / "plan.json").write_text(out, encoding="utf-8")
    assert run([str(tmp_path / "b"), "--apply", str(tmp_path / "plan.json")], capsys)[0] == 65


def test_same_output_under_other_hash_seeds(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "pointers", tmp_path / "s")
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-m", "engramory", "compact", str(tmp_path / "s"), "--target", "2/50"],
                              capture_output=True, env=env, timeout=60)
        assert done.returncode in (1, 2), done.stderr
        outs.add(done.stdout)
    assert len(outs) == 1


def test_hostile_stores_never_crash_and_touch_nothing_they_cannot_keep(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "user-bin.md").write_bytes(b"---\nname: user-bin\n---\n\xff\xfe not text\n")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: outside\ntype: user\n---\nout\n", encoding="utf-8")
    (root / "user-link.md").symlink_to(outside)
    (root / "user-sub").mkdir()
    note(root / "user-sub", "user-deep", "deep")
    long = "x" * 300
    (root / "MEMORY.md").write_text(
        "---\ntitle: index with frontmatter\n---\n<!-- a comment with a [fake](user-bin.md) pointer -->\n"
        "- [Bin](user-bin.md) \u2014 %s\n- [Link](user-link.md) \u2014 %s\n- [Deep](user-sub/user-deep.md) \u2014 %s\n"
        % (long, long, long), encoding="utf-8")
    plan = plan_json(root, "1/10")
    touched = {c["path"] for c in plan["changes"]}
    assert "user-bin.md" not in touched and "user-link.md" not in touched
    assert all(i["ok"] for i in plan["invariants"] if i["name"] != "within-hard-caps")
    check_store(root, "1/10")
    assert outside.read_text(encoding="utf-8") == "---\nname: outside\ntype: user\n---\nout\n"


def test_a_symlinked_index_is_refused_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "real"
    over_cap_store(real, 160)
    root = tmp_path / "mem"
    root.mkdir()
    for p in real.iterdir():
        (root / p.name).write_bytes(p.read_bytes())
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").symlink_to(real / "MEMORY.md")
    before = (real / "MEMORY.md").read_bytes()
    code, _, err = run([str(root), "--apply", "-"], capsys)
    assert code == exitcodes.EX_NOINPUT and "symlink" in err and "Traceback" not in err
    assert (real / "MEMORY.md").read_bytes() == before


def test_a_tampered_plan_is_refused_and_the_journal_is_not_part_of_the_digest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over_cap_store(tmp_path, 160)
    code, out, _ = run([str(tmp_path), "--json"], capsys)
    plan = json.loads(out)
    tampered = dict(plan, changes=plan["changes"][:-1])
    (tmp_path.parent / "t.json").write_text(json.dumps(tampered), encoding="utf-8")
    before = snapshot(tmp_path)
    code, _, err = run([str(tmp_path), "--apply", str(tmp_path.parent / "t.json")], capsys)
    assert code == exitcodes.EX_DATAERR and "differ" in err and snapshot(tmp_path) == before
    # something engramory keeps beside the notes (the manifest, the journal) does not make a plan stale
    review.reconcile(str(tmp_path))
    (tmp_path.parent / "p.json").write_text(out, encoding="utf-8")
    code, _, _ = run([str(tmp_path), "--apply", str(tmp_path.parent / "p.json")], capsys)
    assert code == 1


def test_merge_identical_never_moves_a_pinned_note_for_an_unpinned_copy(tmp_path: Path) -> None:
    note(tmp_path, "user-old", "Same fact, same words.", updated="2026-01-01", extra="pinned: 'true'\n")
    note(tmp_path, "user-new", "Same fact, same words.", updated="2026-02-01")
    (tmp_path / "MEMORY.md").write_text("- [Old](user-old.md) \u2014 x\n- [New](user-new.md) \u2014 x\n", encoding="utf-8")
    plan = plan_json(tmp_path, "1/1000")
    assert "merge-identical" not in ops(plan)
    assert all(o["paths"][0] != "user-old.md" for o in plan["operations"])


def test_an_index_past_the_read_limit_or_not_utf8_is_refused_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store reader keeps only the first MiB of an index and decodes a non-UTF-8 one
    leniently; compacting either would write back less, or other bytes, than the file holds."""
    from engramory.store import reader as store_mod

    for name, data in (
        ("huge", b"- [a](a.md) - x\n" * (store_mod.INDEX_READ_MAX // 16 + 10)),
        ("latin1", b"- [caf\xe9](cafe.md) - hook\n" * 300),
    ):
        root = tmp_path / name
        root.mkdir()
        (root / "MEMORY.md").write_bytes(data)
        code, _, err = run([str(root), "--apply", "-"], capsys)
        assert code == exitcodes.EX_NOINPUT and "Traceback" not in err, err
        assert (root / "MEMORY.md").read_bytes() == data
