"""engramory.stale: the per-session record of what the agent last saw of an index, and the rule
guard.judge applies with it (issue 22, "Stale writes, per host")."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Optional

import pytest

from engramory import cli, guard, stale
from engramory.store import metadir
from tests.conftest import index_text

SEED = index_text(5)
FOREIGN = "- [foreign](foreign.md) - added by another session\n"
AGENT = "- [mine](mine.md) - the agent's own line\n"
WHO = stale.Session("gemini", "session-1")


def store(tmp_path: Path, text: str = SEED) -> Path:
    index = tmp_path / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(text)
    return index


def judge(index: Path, after: str, who: Optional[stale.Session] = WHO, tool: str = "write_file") -> Optional[guard.Decision]:
    before = index.read_bytes() if index.exists() else None
    return guard.judge(str(index), before, after.encode(), {}, None, tool, who)


def records(index: Path) -> list:
    folder = index.parent / ".engramory" / "seen"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_stale_full_write_that_drops_a_foreign_line_is_denied_with_numbers(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    with index.open("a") as f:
        f.write(FOREIGN)
    d = judge(index, SEED + AGENT)
    assert d is not None and d.action == guard.DENY
    assert d.message == (
        "engramory blocked this write_file: %s changed since this session last read it: another writer added 1 "
        "line (line 6: \"- [foreign](foreign.md) - added by another session\"), and this write_file would drop it. "
        "Read MEMORY.md again and redo your change on what is there now. Nothing was written; compacting is "
        "allowed after that read." % index)
    assert index.read_text() == SEED + FOREIGN  # the guard writes nothing but its record


def test_without_a_record_or_a_session_nothing_changes(tmp_path: Path) -> None:
    index = store(tmp_path, SEED + FOREIGN)
    assert judge(index, SEED + AGENT) is None  # this session never read it: today's behaviour
    stale.note_read(str(index), stale.Session("gemini", "another"))
    assert judge(index, SEED + AGENT) is None
    assert judge(index, SEED + AGENT, who=None) is None
    assert stale.session("gemini", "") is None and stale.session("gemini", None) is None


def test_an_edit_or_a_write_that_keeps_the_foreign_line_is_allowed(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    index.write_text(SEED + FOREIGN)
    assert judge(index, (SEED + FOREIGN).replace("hook 2", "hook 2, revised"), tool="replace") is None
    assert judge(index, SEED + FOREIGN + AGENT) is None


def test_several_lost_lines_are_counted_and_the_first_three_shown(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    extra = "".join("- [f%d](f%d.md) - foreign %d\n" % (i, i, i) for i in range(5))
    index.write_text(SEED + extra)
    d = judge(index, SEED)
    assert d is not None and d.action == guard.DENY
    assert "another writer added 5 lines (line 6: \"- [f0](f0.md) - foreign 0\"; line 7: " in d.message
    assert "line 8: \"- [f2](f2.md) - foreign 2\" and 2 more), and this write_file would drop them." in d.message
    d = judge(index, SEED + extra.split("\n", 1)[1])  # keeps four of the five
    assert d is not None and "another writer added 5 lines, and this write_file would drop 1 of them (line 6:" in d.message


def test_a_compaction_from_a_fresh_read_is_allowed_and_from_a_stale_one_denied_once(tmp_path: Path) -> None:
    big = index_text(40)
    index = store(tmp_path, big)
    stale.note_read(str(index), WHO)
    compacted = index_text(10)
    assert judge(index, compacted, tool="edit") is None  # drops only lines it saw
    index.write_text(big)  # (the compaction did not land: try again from a stale read)
    stale.note_read(str(index), WHO)
    index.write_text(big + FOREIGN)
    d = judge(index, compacted, tool="edit")
    assert d is not None and d.action == guard.DENY and "line 41" in d.message
    stale.note_read(str(index), WHO)  # the read the message asks for
    assert judge(index, compacted, tool="edit") is None  # the same compaction, now seen: allowed


def test_the_agents_own_write_counts_as_seen(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    assert judge(index, SEED + AGENT) is None
    index.write_text(SEED + AGENT)  # the host applied it
    assert judge(index, SEED) is None  # dropping its own line again is no stale write
    edited = SEED.replace("hook 2", "hook 2, revised")
    assert judge(index, edited, tool="edit") is None
    index.write_text(edited + FOREIGN)
    d = judge(index, SEED)
    assert d is not None and d.action == guard.DENY and "added 1 line (line 6: \"- [foreign]" in d.message


def test_a_refused_write_is_not_recorded_as_the_disk(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    index.write_text(SEED + FOREIGN)
    assert judge(index, SEED + AGENT) is not None
    assert judge(index, SEED + AGENT) is not None  # still denied: the deny recorded nothing


def test_engramory_new_as_the_other_writer(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    assert cli.main(["new", str(index.parent), "--type", "user", "--description", "added by another session",
                     "--body", "The other session's fact."]) == 0
    now = index.read_text()
    assert now.startswith(SEED) and now != SEED
    d = judge(index, SEED + AGENT)
    assert d is not None and d.action == guard.DENY
    assert "another writer added 2 lines (line 7: \"## user\"; line 8: \"- [added by another session](" in d.message
    assert records(index) == sorted([WHO.key() + ".json", ".gitignore"])


def test_the_record_holds_hashes_never_text_and_is_ignored_by_git(tmp_path: Path) -> None:
    secret = "- [token](token.md) - ghp_" + "a" * 36 + "\n"
    index = store(tmp_path, SEED + secret)
    stale.note_read(str(index), WHO)
    folder = index.parent / ".engramory" / "seen"
    record = (folder / (WHO.key() + ".json")).read_bytes()
    assert b"ghp_" not in record and b"note" not in record and b"session-1" not in record
    data = json.loads(record)
    assert list(data["indexes"]) == ["MEMORY.md"] and data["v"] == stale.VERSION == 2
    assert len(data["indexes"]["MEMORY.md"]["lines"]) == 6 * stale.HASH_HEX  # six line hashes, end to end
    assert (folder / ".gitignore").read_text().endswith("\n*\n")
    assert os.stat(folder / (WHO.key() + ".json")).st_mode & 0o777 == 0o600
    metadir.check(str(index.parent))  # a known folder of .engramory/


def test_the_deny_masks_a_secret_in_a_lost_line(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    token = "ghp_" + "b" * 36
    index.write_text(SEED + "- [t](t.md) - " + token + "\n")
    d = judge(index, SEED + AGENT)
    assert d is not None and d.action == guard.DENY and token not in d.message and "line 6" in d.message


def test_a_size_deny_and_a_stale_deny_say_both(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    index.write_text(SEED + FOREIGN)
    d = judge(index, index_text(250))
    assert d is not None and d.action == guard.DENY
    assert "changed since this session last read it" in d.message and "Besides: engramory blocked" in d.message
    assert "hard cap 200" in d.message


def test_the_folder_is_pruned_by_count_and_age(tmp_path: Path) -> None:
    index = store(tmp_path)
    for i in range(stale.MAX_FILES + 10):
        stale.note_read(str(index), stale.Session("gemini", "s%d" % i))
    folder = index.parent / ".engramory" / "seen"
    assert len([p for p in folder.iterdir() if p.suffix == ".json"]) <= stale.MAX_FILES
    old = stale.Session("gemini", "s%d" % (stale.MAX_FILES + 9))
    path = folder / (old.key() + ".json")
    assert path.exists()
    past = time.time() - stale.MAX_AGE - 60
    os.utime(path, (past, past))
    stale.prune(str(folder))
    assert not path.exists()
    (folder / "not-ours.txt").write_text("x")
    stale.prune(str(folder), keep=1)
    assert (folder / "not-ours.txt").exists() and (folder / ".gitignore").exists()


def test_a_huge_index_is_not_recorded_so_the_rule_stays_silent(tmp_path: Path) -> None:
    index = store(tmp_path, "- x\n" * (stale.MAX_LINES + 1))
    stale.note_read(str(index), WHO)
    assert records(index) == []
    index = store(tmp_path / "b", "x" * (guard.READ_LIMIT + 1))
    stale.note_read(str(index), WHO)
    assert records(index) == []


def test_a_read_of_an_index_that_became_unreadable_forgets_it(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    index.unlink()
    os.mkfifo(index)
    stale.note_read(str(index), WHO)  # a FIFO is never opened (it would block)
    data = json.loads((index.parent / ".engramory" / "seen" / (WHO.key() + ".json")).read_text())
    assert data["indexes"] == {}


def test_non_utf8_lines_are_hashed_as_bytes(tmp_path: Path) -> None:
    index = tmp_path / "memory" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(SEED.encode() + b"- \xff\xfe latin\r\n")
    stale.note_read(str(index), WHO)
    index.write_bytes(index.read_bytes() + b"- [x](x.md) \xe9t\xe9\n")
    d = guard.judge(str(index), index.read_bytes(), SEED.encode(), {}, None, "write_file", WHO)
    assert d is not None and "another writer added 1 line (line 7: \"- [x](x.md) \ufffdt\ufffd\")" in d.message


def test_a_symlinked_index_keeps_its_record_in_the_targets_store(tmp_path: Path) -> None:
    index = store(tmp_path)
    link = tmp_path / "MEMORY.md"
    link.symlink_to(index)
    stale.note_read(str(link), WHO)
    index.write_text(SEED + FOREIGN)
    assert judge(link, SEED + AGENT) is not None
    assert records(index) and not (tmp_path / ".engramory").exists()


def test_a_record_that_is_not_ours_is_ignored_and_a_symlink_not_followed(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    where = index.parent / ".engramory" / "seen" / (WHO.key() + ".json")
    where.write_text("{not json")
    index.write_text(SEED + FOREIGN)
    assert judge(index, SEED + AGENT) is None  # fails open
    where.unlink()
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    where.symlink_to(outside)
    stale.note_read(str(index), WHO)
    assert outside.read_text() == "{}"


def test_the_seen_folder_in_the_way_is_reported_by_check(tmp_path: Path) -> None:
    index = store(tmp_path)
    (index.parent / ".engramory").mkdir()
    (index.parent / ".engramory" / "seen").write_text("x")
    with pytest.raises(metadir.StoreDamaged, match="what each agent session last saw"):
        metadir.check(str(index.parent))
    stale.note_read(str(index), WHO)  # and the hook records nothing there, silently
    assert (index.parent / ".engramory" / "seen").read_text() == "x"


# -- the read hooks of the wired hosts -------------------------------------------------------------

READS = {
    "gemini": ("respond", lambda path, cwd: {"hook_event_name": "AfterTool", "tool_name": "read_file",
                                             "tool_input": {"file_path": path}, "cwd": cwd, "session_id": "s"}),
    "droid": ("post", lambda path, cwd: {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                         "tool_input": {"file_path": path}, "cwd": cwd, "session_id": "s"}),
    "opencode": ("respond", lambda path, cwd: {"event": "read", "tool": "read", "args": {"filePath": path},
                                               "directory": cwd, "sessionID": "s"}),
    "kilo": ("respond", lambda path, cwd: {"event": "read", "tool": "read", "args": {"filePath": path},
                                           "directory": cwd, "sessionID": "s"}),
    "openclaw": ("respond", lambda path, cwd: {"event": "read", "tool": "read", "params": {"path": path},
                                               "workspace": cwd, "sessionId": "s"}),
    "copilot": ("post", lambda path, cwd: {"toolName": "view", "toolArgs": {"path": path}, "cwd": cwd,
                                           "sessionId": "s"}),
}


@pytest.mark.parametrize("host", sorted(READS))
def test_a_read_hook_records_an_index_and_then_the_hosts_write_is_judged(tmp_path: Path, host: str) -> None:
    import importlib

    index = store(tmp_path)
    entry, payload = READS[host]
    module = importlib.import_module("engramory.hosts." + host)
    getattr(module, entry)(json.dumps(payload("memory/MEMORY.md", str(tmp_path))).encode(), {})
    assert records(index) == sorted([stale.Session(host, "s").key() + ".json", ".gitignore"])
    index.write_text(SEED + FOREIGN)
    assert judge(index, SEED + AGENT, stale.Session(host, "s")) is not None


@pytest.mark.parametrize("host", sorted(READS))
def test_a_read_hook_on_a_file_that_is_not_an_index_imports_and_writes_nothing(tmp_path: Path, host: str) -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    entry, payload = READS[host]
    raw = json.dumps(payload(str(tmp_path / "src" / "main.py"), str(tmp_path)))
    code = ("import sys; sys.path.insert(0, %r); import engramory.hosts.%s as m; before = set(sys.modules); "
            "print(m.%s(%r.encode(), {})); print(sorted(set(sys.modules) - before))" % (str(ROOT), host, entry, raw))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    # nothing of the record or the decision: only what reading any payload loads (the JSON reader,
    # the path rules) and the host's shared dialect, which every call that is not quiet loads
    loaded = set(eval(done.stdout.splitlines()[-1]))  # noqa: S307 - our own printout of a list of names
    assert loaded <= {"engramory.jsonlite", "engramory.scope", "engramory.hosts.claudelike"}, done.stdout
    assert list(tmp_path.iterdir()) == []


def test_the_record_folder_is_spelled_as_the_store_spells_it() -> None:
    # stale names the folder itself so that a deny path without a record loads no metadir
    from engramory.store import metadir

    assert stale.SEEN_DIR == (metadir.DIR, metadir.SEEN)


def test_a_version_1_record_is_still_read_and_rewritten_as_version_2(tmp_path: Path) -> None:
    # an install updated mid-session keeps judging from the record the earlier code wrote
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    where = index.parent / ".engramory" / "seen" / (WHO.key() + ".json")
    data = json.loads(where.read_bytes())
    entry = data["indexes"]["MEMORY.md"]
    hashes = entry["lines"]
    entry["lines"] = [hashes[i:i + stale.HASH_HEX] for i in range(0, len(hashes), stale.HASH_HEX)]
    data["v"] = 1
    where.write_text(json.dumps(data))
    index.write_text(SEED + FOREIGN)
    d = judge(index, SEED + AGENT)
    assert d is not None and d.action == guard.DENY and "another writer added 1 line" in d.message
    stale.note_read(str(index), WHO)
    again = json.loads(where.read_bytes())
    assert again["v"] == 2 and isinstance(again["indexes"]["MEMORY.md"]["lines"], str)
    assert judge(index, SEED + FOREIGN + AGENT) is None


def test_a_record_with_a_broken_hash_string_is_no_record(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    where = index.parent / ".engramory" / "seen" / (WHO.key() + ".json")
    data = json.loads(where.read_bytes())
    data["indexes"]["MEMORY.md"]["lines"] += "abc"  # not a whole number of hashes
    where.write_text(json.dumps(data))
    index.write_text(SEED + FOREIGN)
    assert judge(index, SEED + AGENT) is None  # fails open, as for any record not ours


def test_a_read_of_an_unchanged_index_keeps_the_record_bytes_and_refreshes_its_time(tmp_path: Path) -> None:
    index = store(tmp_path)
    stale.note_read(str(index), WHO)
    where = index.parent / ".engramory" / "seen" / (WHO.key() + ".json")
    before = where.read_bytes()
    os.utime(where, (1_000_000, 1_000_000))
    stale.note_read(str(index), WHO)
    assert where.read_bytes() == before  # no rewrite
    assert where.stat().st_mtime > time.time() - 60  # but pruning sees it as fresh
    index.write_text(SEED + AGENT)
    stale.note_read(str(index), WHO)
    assert where.read_bytes() != before  # a changed index is recorded again


def test_a_read_of_an_index_records_it_without_importing_os(tmp_path: Path) -> None:
    # os costs 15% of a bare start; the record is written through posix (fsutil via scope.calls)
    import subprocess
    import sys

    from tests.conftest import ROOT

    index = store(tmp_path)
    (index.parent / ".engramory").mkdir()  # a store engramory knows: metadir is not needed
    code = ("import sys; sys.path.insert(0, %r); from engramory import stale; "
            "stale.note_read(%r, stale.Session('claude', 's')); stale.note_read(%r, stale.Session('claude', 's')); "
            "print('os' in sys.modules, 'engramory.store.metadir' in sys.modules)" % (str(ROOT), str(index), str(index)))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"], done.stdout + done.stderr
    assert records(index) == sorted([stale.Session("claude", "s").key() + ".json", ".gitignore"])
    index.write_text(SEED + FOREIGN)
    assert judge(index, SEED + AGENT, stale.Session("claude", "s")) is not None
