"""`engramory doctor --all`: which stores it finds (autoMemoryDirectory read as the host reads it)
and `store-split`, one project's memory in two folders (another spelling, a move, a rename)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema

from engramory import automemory
from engramory.store import discovery as stores

ROOT = str(Path(__file__).resolve().parents[3])
SCRIPT = os.path.join(ROOT, "tools", "engramory_doctor.py")
with open(os.path.join(ROOT, "schemas", "doctor-report.schema.json"), encoding="utf-8") as _f:
    SCHEMA = json.load(_f)
NOTE = "---\nname: {slug}\ndescription: the build for {slug} needs the cache warmed first\nmetadata:\n  type: user\n---\n\n{body}\n"


def memory(folder: Path, *rels: str, body: str = "A fact worth keeping about the build.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rel in rels:
        (folder / rel).write_text(NOTE.format(slug=rel[:-3], body=body), encoding="utf-8")
    (folder / "MEMORY.md").write_text("".join("- [%s](%s) - about %s\n" % (r, r, r) for r in rels), encoding="utf-8")
    return folder


def project_memory(cfg: Path, name: str, *rels: str, body: str = "A fact worth keeping about the build.") -> Path:
    return memory(cfg / "projects" / name / "memory", *rels, body=body)


def run_all(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return subprocess.run([sys.executable, "-I", "-S", SCRIPT, "--all", *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=str(cwd))


def reports(home: Path, cwd: Path) -> list[dict[str, object]]:
    res = run_all(home, cwd, "--json")
    out = [json.loads(line) for line in res.stdout.splitlines()]
    for r in out:
        jsonschema.validate(r, SCHEMA)
    return out


def split_messages(home: Path, cwd: Path) -> list[str]:
    return [f["message"] for r in reports(home, cwd) for f in r["findings"]  # type: ignore[attr-defined]
            if f["code"] == "store-split"]


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


# -- autoMemoryDirectory: local settings, then user settings, never project settings -------------

def test_all_reads_auto_memory_directory_from_local_settings_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    project = tmp_path / "proj"
    local_dir = memory(tmp_path / "local-mem", "user-local.md")
    user_dir = memory(tmp_path / "user-mem", "user-user.md")
    project_dir = memory(tmp_path / "project-mem", "user-project.md")
    write_json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": str(local_dir)})
    write_json(project / ".claude" / "settings.json", {"autoMemoryDirectory": str(project_dir)})
    write_json(cfg / "settings.json", {"autoMemoryDirectory": str(user_dir)})
    env = {"HOME": str(home)}
    found = stores.known_stores(env, str(project))
    assert (stores.SETTING_LOCAL, str(local_dir)) in found
    assert (stores.SETTING_USER, str(user_dir)) in found  # other projects still use the user setting
    assert all(folder != str(project_dir) for _, folder in found)  # project settings never move it
    res = run_all(home, project)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert any(line.startswith(str(local_dir)) and "autoMemoryDirectory (local settings)" in line for line in lines)
    assert any(line.startswith(str(user_dir)) and "autoMemoryDirectory (user settings)" in line for line in lines)
    assert not any(str(project_dir) in line for line in lines)
    assert lines[-1].startswith("2 stores checked")


def test_all_takes_the_user_setting_when_local_settings_do_not_hold_the_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "proj"
    user_dir = memory(tmp_path / "user-mem", "user-user.md")
    write_json(project / ".claude" / "settings.local.json", {"permissions": {}})
    write_json(home / ".claude" / "settings.json", {"autoMemoryDirectory": "~/../escape"})  # refused, as the host does
    assert stores.known_stores({"HOME": str(home)}, str(project)) == []
    write_json(home / ".claude" / "settings.json", {"autoMemoryDirectory": str(user_dir) + "/"})
    assert stores.known_stores({"HOME": str(home)}, str(project)) == [(stores.SETTING_USER, str(user_dir))]


def test_all_uses_automemory_reader_not_a_second_one() -> None:
    source = Path(stores.__file__).read_text(encoding="utf-8")
    assert "settings.json" not in source.replace("settings.local.json", "")  # no path of its own to a settings file
    assert "automemory.configured_dir" in source


# -- store-split --------------------------------------------------------------------------------

def test_moved_rule_on_sanitized_names() -> None:
    assert stores._moved("-home-u-app", "-home-u-code-app")  # moved into a subfolder
    assert stores._moved("-home-u-old-app", "-home-u-new-app")  # moved between parents
    assert stores._moved("-home-u-code-app", "-home-u-app")
    assert not stores._moved("-home-u-app", "-home-u-other")  # two projects side by side
    assert not stores._moved("-home-u-app", "-home-u-app")
    assert not stores._moved("-home-u-app", "-srv-a-b-c-d-app")  # more than a folder on the way
    assert not stores._moved("-a", "-b-a")  # nothing shared before the project


def test_split_of_a_moved_project_names_both_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    old = project_memory(cfg, "-nowhere-u-app", "user-a.md")
    new = project_memory(cfg, "-nowhere-u-code-app", "user-b.md")
    messages = split_messages(home, tmp_path)
    assert len(messages) == 1, messages
    assert str(old) in messages[0] and str(new) in messages[0] and "moved" in messages[0]
    res = run_all(home, tmp_path)
    assert res.returncode == 0  # a warning: --all exits 0 without --strict
    assert run_all(home, tmp_path, "--strict").returncode == 1
    assert run_all(home, tmp_path, "--skip", "store-split", "--strict").returncode == 0


def test_no_split_when_both_project_folders_still_exist(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    a = tmp_path / "work" / "api"
    b = tmp_path / "work" / "x" / "api"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    for path in (a, b):
        project_memory(cfg, automemory.sanitize_project_path(str(path)), "user-%s.md" % path.parent.name)
    assert split_messages(home, tmp_path) == []
    b.rmdir()  # the project moved away: its old folder's memory is now the stray half
    assert len(split_messages(home, tmp_path)) == 1


def test_transcripts_name_the_project_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    real_a, real_b = tmp_path / "one", tmp_path / "two"
    real_a.mkdir()
    real_b.mkdir()
    for name, real in (("-gone-u-app", real_a), ("-gone-u-web-app", real_b)):
        project_memory(cfg, name, "user-%s.md" % real.name)
        line = {"type": "user", "cwd": str(real), "sessionId": "s"}
        (cfg / "projects" / name / "s.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert split_messages(home, tmp_path) == []  # both sessions' folders exist: two projects
    real_b.rmdir()
    assert len(split_messages(home, tmp_path)) == 1


def test_split_of_a_renamed_project_whose_notes_coincide(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    old = project_memory(cfg, "-nowhere-u-billing", "user-a.md", "user-b.md", "user-c.md")
    new = project_memory(cfg, "-nowhere-u-payments", "user-a.md", "user-b.md", "user-d.md")
    messages = split_messages(home, tmp_path)
    assert len(messages) == 1 and str(old) in messages[0] and str(new) in messages[0]
    assert "coincide" in messages[0]


def test_index_lines_alone_can_show_the_split(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    project_memory(cfg, "-nowhere-u-billing", "user-a.md", "user-b.md", body="old words")
    project_memory(cfg, "-nowhere-u-payments", "user-a.md", "user-b.md", body="new words")  # other bytes
    assert len(split_messages(home, tmp_path)) == 1


def test_one_shared_note_is_not_a_split(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    project_memory(cfg, "-nowhere-u-billing", "user-role.md", "user-b.md")
    project_memory(cfg, "-nowhere-u-payments", "user-role.md", "user-c.md")
    (cfg / "projects" / "-nowhere-u-payments" / "memory" / "MEMORY.md").write_text(
        "- [user-role.md](user-role.md) - about user-role.md\n", encoding="utf-8")
    (cfg / "projects" / "-nowhere-u-payments" / "memory" / "user-c.md").unlink()
    assert split_messages(home, tmp_path) == []


def test_split_reading_never_follows_a_symlink_or_blocks_on_a_fifo(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    secret = tmp_path / "secret.md"
    secret.write_text("outside", encoding="utf-8")
    a = project_memory(cfg, "-nowhere-u-billing", "user-a.md")
    b = project_memory(cfg, "-nowhere-u-payments", "user-b.md")
    (a / "user-x.md").symlink_to(secret)
    (b / "user-x.md").symlink_to(secret)
    os.mkfifo(str(b / "user-fifo.md"))
    os.mkfifo(str(a / "user-fifo.md"))
    before = {p: p.stat().st_mtime_ns for p in (a / "MEMORY.md", b / "MEMORY.md")}
    res = run_all(home, tmp_path, "--json")
    assert res.returncode == 1  # the symlink escapes are errors of each store
    assert "store-split" not in res.stdout
    assert before == {p: p.stat().st_mtime_ns for p in before}


# -- agent-memory: where the CLI keeps it (measured: tests/hosts/claude/test_agent_memory_claude.py) -------

def test_agent_memory_of_every_session_start_folder_and_empty_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    start = tmp_path / "work" / "sub"
    project_mem = memory(start / ".claude" / "agent-memory" / "rev", "feedback-a.md")
    local_mem = start / ".claude" / "agent-memory-local" / "rev"
    local_mem.mkdir(parents=True)  # the CLI creates it before anything is stored
    (tmp_path / "work" / ".claude" / "agent-memory" / "rev").mkdir(parents=True)  # not a start folder
    folder = cfg / "projects" / automemory.sanitize_project_path(str(start))
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(json.dumps({"type": "queue-operation"}) + "\n"
                                    + json.dumps({"type": "user", "cwd": str(start)}) + "\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = stores.known_stores({"HOME": str(home)}, str(elsewhere))
    assert found == [(stores.AGENT_PROJECT, str(project_mem)), (stores.AGENT_LOCAL, str(local_mem))]
    res = run_all(home, elsewhere)
    lines = res.stdout.splitlines()
    assert "%s: agent-memory (local): empty, nothing stored yet" % local_mem in lines
    assert res.returncode == 0, res.stdout  # an empty folder the host made is no missing index
    assert lines[-1].startswith("2 stores checked")


def test_all_reads_the_local_settings_of_every_project_a_transcript_names(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = home / ".claude"
    project = tmp_path / "proj"
    moved = memory(tmp_path / "moved-mem", "user-a.md")
    write_json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": str(moved)})
    folder = cfg / "projects" / automemory.sanitize_project_path(str(project))
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(json.dumps({"type": "user", "cwd": str(project)}) + "\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert stores.known_stores({"HOME": str(home)}, str(elsewhere)) == [(stores.SETTING_LOCAL, str(moved))]


def test_resolving_a_project_name_back_to_a_folder(tmp_path: Path) -> None:
    real = tmp_path / "my.proj" / "sub dir"
    real.mkdir(parents=True)
    assert stores._resolves(automemory.sanitize_project_path(str(real)), [200]) is True
    assert stores._resolves(automemory.sanitize_project_path(str(tmp_path / "gone")), [200]) is False
    assert stores._resolves("-x" * 150, [200]) is None  # a hashed name: cannot tell, so no split is claimed
    assert stores._resolves(automemory.sanitize_project_path(str(real)), [1]) is None  # out of budget
