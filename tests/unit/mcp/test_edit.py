"""memory_edit's five commands over the curation library: a create held to `engramory new`'s
rules with its pointer under its type's heading, edits that keep a note valid, rename and
delete (an archive with its undo id), the index judged by the guard's rule, and a receipt for
every change."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engramory.store import journal
from tests.unit.mcp.mcpkit import Client, make_store, note_text, text

GOOD = note_text("rerun-flaky", "Rerun the flaky checkout test once before debugging it", "feedback",
                 "It races the payment mock under load.")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_store(tmp_path / "store")


def create(c: Client, name: str, body: str) -> dict:  # type: ignore[type-arg]
    return c.call("memory_edit", command="create", path="/memories/%s.md" % name, file_text=body)


def test_create_saves_the_note_with_its_pointer_and_a_receipt(root: Path) -> None:
    r = create(Client(root), "rerun-flaky", GOOD)
    assert not r["isError"], text(r)
    data = (root / "rerun-flaky.md").read_bytes()
    assert data == GOOD.encode()
    s = r["structuredContent"]
    assert s["sha256"] == hashlib.sha256(data).hexdigest() and s["path"] == "/memories/rerun-flaky.md"
    index = (root / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    line = "- [Rerun the flaky checkout test once before debugging it](rerun-flaky.md)"
    assert index[s["index"]["line"] - 1] == line and s["index"]["text"] == line
    assert index[s["index"]["line"] - 2] == "## feedback" or "## feedback" in index
    assert s["index"]["sha256"] == hashlib.sha256((root / "MEMORY.md").read_bytes()).hexdigest()
    assert s["entry"] and s["undo"] == "engramory undo %d" % s["entry"]
    assert "journal entry %d" % s["entry"] in text(r) and "UTF-16 units" in text(r)


@pytest.mark.parametrize("body, words", [
    (GOOD.replace("**Why:**", "Why"), ["Why:", "How to apply:"]),
    (GOOD.replace("name: rerun-flaky", "name: other-name"), ["name: rerun-flaky"]),
    (GOOD.replace("type: feedback", "type: trivia"), ["trivia"]),
    (GOOD.replace("updated: 2026-11-02", "updated: 2026-13-40"), ["updated"]),
    (GOOD.replace("It races", "The token is ghp_" + "a1B2" * 9 + ". It races"), ["GitHub token", "masked"]),
    (note_text("rerun-flaky", "Release freeze of the payments API", "project", "Frozen until next week."),
     ["absolute dates", "next week"]),
    (GOOD.replace("It races", "x" * 9000), ["8,192-byte cap"]),
    ("no frontmatter at all\n", ["frontmatter"]),
])
def test_create_refuses_what_new_refuses_and_writes_nothing(root: Path, body: str, words: list) -> None:  # type: ignore[type-arg]
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    r = create(Client(root), "rerun-flaky", body)
    assert r["isError"], text(r)
    for w in words:
        assert w in text(r), text(r)
    assert "ghp_" + "a1B2" * 9 not in json.dumps(r)
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == before


def test_create_refuses_a_bad_name_a_taken_one_and_a_near_duplicate(root: Path) -> None:
    c = Client(root)
    assert "lowercase" in text(create(c, "Bad_Name", GOOD))
    assert not create(c, "rerun-flaky", GOOD)["isError"]
    assert "exists already" in text(create(c, "rerun-flaky", GOOD))
    twin = GOOD.replace("name: rerun-flaky", "name: rerun-flaky-again")
    r = create(c, "rerun-flaky-again", twin)
    assert r["isError"] and "nearly the same" in text(r) and "/memories/rerun-flaky.md" in text(r)


def test_create_past_the_cap_is_refused_with_the_guards_numbers(tmp_path: Path) -> None:
    root = make_store(tmp_path / "full", notes=196)  # 3 header lines + 196 pointers = 199 lines
    c = Client(root)
    assert not create(c, "first-extra", note_text("first-extra", "One more reference that still fits")).get("isError")
    r = create(c, "second-extra", note_text("second-extra", "A reference past the window"))
    assert r["isError"]
    t = text(r)
    for needle in ("grow from 200 to 201 lines", "hard cap 200", "memory_edit delete", "Nothing was written"):
        assert needle in t, t
    assert not (root / "second-extra.md").exists()


def test_str_replace_and_insert_keep_the_note_valid_and_its_pointer_in_step(root: Path) -> None:
    c = Client(root)
    create(c, "rerun-flaky", GOOD)
    ok = c.call("memory_edit", command="str_replace", path="/memories/rerun-flaky.md",
                old_str="under load", new_str="under load on CI")
    assert not ok["isError"], text(ok)
    body = (root / "rerun-flaky.md").read_text(encoding="utf-8")
    assert "under load on CI" in body and "updated: 2026-11-02" not in body  # updated is bumped
    bad = c.call("memory_edit", command="str_replace", path="/memories/rerun-flaky.md",
                 old_str="**How to apply:**", new_str="Then:")
    assert bad["isError"] and "How to apply:" in text(bad)
    assert (root / "rerun-flaky.md").read_text(encoding="utf-8") == body
    moved = c.call("memory_edit", command="str_replace", path="/memories/rerun-flaky.md",
                   old_str="type: feedback", new_str="type: reference")
    assert not moved["isError"], text(moved)
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert index.index("(rerun-flaky.md)") > index.index("## reference")
    assert "## feedback\n- [Rerun" not in index
    ins = c.call("memory_edit", command="insert", path="/memories/rerun-flaky.md", insert_line=8,
                 insert_text="Seen on 2026-11-20.")
    assert not ins["isError"], text(ins)
    assert (root / "rerun-flaky.md").read_text(encoding="utf-8").split("\n")[8] == "Seen on 2026-11-20."
    far = c.call("memory_edit", command="insert", path="/memories/rerun-flaky.md", insert_line=99, insert_text="x")
    assert far["isError"] and "[0, " in text(far)


def test_str_replace_names_the_lines_of_a_repeated_old_str(root: Path) -> None:
    c = Client(root)
    r = c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md", old_str="Reference", new_str="R")
    assert r["isError"] and "occurs 3 times" in text(r) and "lines 4, 5, 6" in text(r)
    r = c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md", old_str="nowhere", new_str="R")
    assert r["isError"] and "does not appear verbatim" in text(r)


def test_the_name_changes_only_by_rename_which_moves_the_pointer(root: Path) -> None:
    c = Client(root)
    create(c, "rerun-flaky", GOOD)
    r = c.call("memory_edit", command="str_replace", path="/memories/rerun-flaky.md",
               old_str="name: rerun-flaky", new_str="name: other")
    assert r["isError"] and "rename" in text(r)
    r = c.call("memory_edit", command="rename", old_path="/memories/rerun-flaky.md", new_path="/memories/flaky-checkout.md")
    assert not r["isError"], text(r)
    assert not (root / "rerun-flaky.md").exists()
    assert "name: flaky-checkout\n" in (root / "flaky-checkout.md").read_text(encoding="utf-8")
    assert "](flaky-checkout.md)" in (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "(rerun-flaky.md)" not in (root / "MEMORY.md").read_text(encoding="utf-8")
    taken = c.call("memory_edit", command="rename", old_path="/memories/flaky-checkout.md", new_path="/memories/ref-000.md")
    assert taken["isError"] and "taken" in text(taken)


def test_delete_archives_with_the_undo_id_and_the_undo_restores(root: Path) -> None:
    start = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    c = Client(root)
    r = c.call("memory_edit", command="delete", path="/memories/ref-001.md")
    assert not r["isError"], text(r)
    assert (root / "archive" / "ref-001.md").is_file() and not (root / "ref-001.md").exists()
    assert "(ref-001.md)" not in (root / "MEMORY.md").read_text(encoding="utf-8")
    entry = r["structuredContent"]["entry"]
    assert "engramory undo %d" % entry in text(r)
    journal.undo(str(root), entry)
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == start
    assert "cannot be deleted" in text(c.call("memory_edit", command="delete", path="/memories/MEMORY.md"))
    c.call("memory_edit", command="delete", path="/memories/ref-002.md")
    assert "archived already" in text(c.call("memory_edit", command="delete", path="/memories/archive/ref-002.md"))
    back = c.call("memory_edit", command="rename", old_path="/memories/archive/ref-002.md", new_path="/memories/ref-002.md")
    assert not back["isError"], text(back)
    assert "(ref-002.md)" in (root / "MEMORY.md").read_text(encoding="utf-8")


def test_index_edits_are_judged_by_the_guards_rule(tmp_path: Path) -> None:
    root = make_store(tmp_path / "full", notes=197)  # 200 lines: exactly at the cap
    c = Client(root)
    grow = c.call("memory_edit", command="insert", path="/memories/MEMORY.md", insert_line=200,
                  insert_text="- one more line")
    assert grow["isError"] and "grow from 200 to 201 lines" in text(grow)
    shrink = c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md",
                    old_str="- [Reference 010](ref-010.md)", new_str="- [R10](ref-010.md)")
    assert not shrink["isError"], text(shrink)
    orphan = c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md",
                    old_str="- [R10](ref-010.md)\n", new_str="")
    assert orphan["isError"] and "only way recall reaches" in text(orphan) and "delete" in text(orphan)
    # (an unclosed <!-- hides nothing: the host loads it and what follows, as layout says)
    first = "- [Reference 000](ref-000.md)"
    for was, bad, why in (("# Memory Index", "- [Ghost](ghost.md)", "no live note"),
                          ("# Memory Index", "<<<<<<< ours", "conflict marker"),
                          ("# Memory Index", "- [Out](../x.md)", "outside the store"),
                          (first, "<!-- %s -->" % first, "only way recall")):
        r = c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md", old_str=was, new_str=bad)
        assert r["isError"] and why in text(r), (bad, text(r))
    secret = c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md", old_str="# Memory Index",
                    new_str="# Memory Index ghp_" + "Zz09" * 9)
    assert secret["isError"] and "secret" in text(secret)


def test_the_store_config_and_the_journal_are_out_of_reach(root: Path) -> None:
    c = Client(root)
    for path in ("/memories/.engramory.json", "/memories/.engramory/journal.jsonl", "/etc/passwd",
                 "/memories/../x.md", "memories/x.md", "/memories//x.md"):
        for args in ({"command": "create", "path": path, "file_text": GOOD},
                     {"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"}):
            r = c.call("memory_edit", **args)
            assert r["isError"], (path, text(r))
        assert c.call("memory_view", path=path)["isError"]
    assert not (root / ".engramory.json").exists()


def test_a_symlink_out_of_the_store_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(GOOD, encoding="utf-8")
    (root / "leak.md").symlink_to(outside)
    c = Client(root)
    assert "symlink" in text(c.call("memory_view", path="/memories/leak.md"))
    r = c.call("memory_edit", command="str_replace", path="/memories/leak.md", old_str="races", new_str="ran")
    assert r["isError"] and outside.read_text(encoding="utf-8") == GOOD


def test_a_read_only_note_stays_as_it_is(root: Path) -> None:
    (root / ".engramory.json").write_text('{"version": 1, "readOnly": ["ref-000.md"]}', encoding="utf-8")
    before = (root / "ref-000.md").read_bytes()
    r = Client(root).call("memory_edit", command="str_replace", path="/memories/ref-000.md",
                          old_str="Where", new_str="Here")
    assert r["isError"] and "read-only" in text(r)
    assert (root / "ref-000.md").read_bytes() == before


def test_create_warns_in_its_receipt_what_the_doctor_would_warn_of_the_description(root: Path) -> None:
    weak = note_text("payments-freeze", "payments freeze", "project", "Frozen until 2026-12-20.")
    r = create(Client(root), "payments-freeze", weak)
    assert not r["isError"], text(r)
    assert "description-weak" in text(r) and "says nothing the file name does not" in text(r)
    r = create(Client(root), "rerun-flaky", GOOD)
    assert not r["isError"] and "description-weak" not in text(r), text(r)
