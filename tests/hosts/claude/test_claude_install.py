"""`engramory install` / `uninstall` / `install --check` and the plugin manifests.

Every test works in a throw-away HOME / CLAUDE_CONFIG_DIR / project folder. The properties
that protect the user's data are tested directly on bytes: foreign keys and hooks kept,
a second install leaves settings.json byte-identical (not even rewritten), install then
uninstall gives back the exact bytes, a malformed file is refused and untouched, the
memory store is never touched.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import engramory
from engramory.commands import install as install_cmd
from engramory.commands import uninstall as uninstall_cmd
from engramory.hosts.claude import install
from engramory.install.bundle import TOP_FILES
from engramory.install.hookcommands import shell_word
from tests.conftest import ROOT, index_text

FOREIGN = (
    b'{\n'
    b'    "$schema": "https://json.schemastore.org/claude-code-settings.json",\n'
    b'    "model": "opus",\n'
    b'    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},\n'
    b'    "env": {"FOO": "caf\xc3\xa9"},\n'
    b'    "hooks": {\n'
    b'        "PreToolUse": [\n'
    b'            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash"}]}\n'
    b'        ],\n'
    b'        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]\n'
    b'    }\n'
    b'}\n'
)


class Env:
    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp / "home"
        self.config = tmp / "config"
        self.project = tmp / "project with space"
        self.home.mkdir()
        self.project.mkdir()
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(self.config))
        monkeypatch.chdir(self.project)
        self.settings = self.config / "settings.json"
        self.skill = self.config / "skills" / "engramory"

    def vars(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE"))}
        env.update(HOME=str(self.home), CLAUDE_CONFIG_DIR=str(self.config))
        return env


@pytest.fixture
def e(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return Env(tmp_path, monkeypatch)


def our_entries(settings: Path) -> dict[str, list[dict[str, Any]]]:
    data = json.loads(settings.read_bytes())
    out: dict[str, list[dict[str, Any]]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for h in group["hooks"]:
                if install.is_our_handler(h):
                    out.setdefault(event, []).append(dict(h, matcher=group.get("matcher")))
    return out


def run_cli(*args: str, env: dict[str, str], cwd: Path | str = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engramory", *args], capture_output=True, text=True, env=env, cwd=str(cwd), timeout=120
    )


# -- install -----------------------------------------------------------------------------


def test_install_user_scope(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert install_cmd.main([]) == 0
    out = capsys.readouterr().out
    assert "Restart Claude Code" in out and str(e.settings) in out
    # The runtime files, and nothing of the development tree.
    assert (e.skill / "engramory" / "__init__.py").is_file()
    assert (e.skill / "engramory" / "hosts" / "claude" / "__init__.py").is_file()
    assert (e.skill / "engramory" / "py.typed").is_file()
    for script in (install.ENTRY,) + install.LEGACY_SCRIPTS:  # the shims too: earlier installs run them
        assert (e.skill / "hooks" / script).is_file()
    assert (e.skill / "tools" / "engramory_check.py").is_file()
    for name in TOP_FILES:
        assert (e.skill / name).is_file() == (ROOT / name).is_file()
    assert not (e.skill / "tests").exists() and not (e.skill / "bench").exists()
    assert not (e.skill / ".git").exists()
    # Bytecode: only what install compiled for the copied files, with this interpreter.
    caches = list(e.skill.rglob("__pycache__"))
    assert caches and (e.skill / "engramory" / "__pycache__") in caches
    for pyc in (p for c in caches for p in c.iterdir()):
        stem, tag, _ = pyc.name.rsplit(".", 2)
        assert tag == sys.implementation.cache_tag and (pyc.parent.parent / (stem + ".py")).is_file(), pyc
    assert not (e.skill / ".claude-plugin").exists()
    manifest = json.loads((e.skill / install.MANIFEST).read_text())
    assert manifest["installer"] == "engramory" and "engramory/hosts/claude/install.py" in manifest["files"]
    # The hook entries.
    entries = our_entries(e.settings)
    assert sorted(entries) == ["PostToolUse", "PreToolUse", "SessionStart", "UserPromptSubmit"]
    matchers = {ev: [h["matcher"] for h in hs] for ev, hs in entries.items()}
    assert matchers == {
        "PreToolUse": ["Edit|Write|MultiEdit|Bash"],
        "PostToolUse": ["^(Bash|PowerShell|Monitor|Read|mcp__.*)$"],
        "SessionStart": [None],
        "UserPromptSubmit": [None],
    }
    entry = e.skill / "hooks" / "engramory_hook.py"  # the generic entry, with `claude <event>` (issue 20)
    for event in ("PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit"):
        (h,) = entries[event]
        assert h["type"] == "command" and h["timeout"] == 10
        assert h["command"] == install.hook_command(sys.executable, str(entry)) + " claude " + event
        assert '-I -S -c' in h["command"] and '"%s" claude %s' % (entry, event) in h["command"]
        assert shlex.split(h["command"]) == [sys.executable, "-I", "-S", "-c", install.LAUNCHER, str(entry), "claude", event]
    assert e.settings.read_bytes().endswith(b"}\n")


def test_installed_guard_runs_as_wired(e: Env, tmp_path: Path) -> None:
    """Run the exact command install wrote, through sh, on a real PreToolUse payload."""
    assert install_cmd.main([]) == 0
    (h,) = our_entries(e.settings)["PreToolUse"]
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(199))
    payload = {
        "session_id": "s", "transcript_path": "/dev/null", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": str(index), "content": index_text(300)}, "tool_use_id": "t",
    }
    proc = subprocess.run(["sh", "-c", h["command"]], input=json.dumps(payload).encode(), capture_output=True,
                          env=e.vars(), cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "300 lines" in out["permissionDecisionReason"]


def test_second_install_changes_nothing(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    e.config.mkdir()
    e.settings.write_bytes(FOREIGN)
    assert install_cmd.main([]) == 0
    first = e.settings.read_bytes()
    st = e.settings.stat()
    backups = sorted(e.config.glob("settings.json.engramory-backup-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == FOREIGN
    manifest = (e.skill / install.MANIFEST).stat()
    capsys.readouterr()
    assert install_cmd.main([]) == 0
    out = capsys.readouterr().out
    assert "already installed: nothing changed" in out and "already present" in out
    assert "Restart" not in out
    assert e.settings.read_bytes() == first
    assert e.settings.stat().st_mtime_ns == st.st_mtime_ns and e.settings.stat().st_ino == st.st_ino
    assert sorted(e.config.glob("settings.json.engramory-backup-*")) == backups
    assert (e.skill / install.MANIFEST).stat().st_mtime_ns == manifest.st_mtime_ns


def test_foreign_keys_and_hooks_kept_and_uninstall_restores_bytes(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    e.config.mkdir()
    e.settings.write_bytes(FOREIGN)
    assert install_cmd.main([]) == 0
    data = json.loads(e.settings.read_bytes())
    before = json.loads(FOREIGN)
    for key in ("$schema", "model", "permissions", "env"):
        assert data[key] == before[key]
    assert data["hooks"]["Stop"] == before["hooks"]["Stop"]
    assert data["hooks"]["PreToolUse"][0] == before["hooks"]["PreToolUse"][0]  # foreign group first, unchanged
    assert "    " in e.settings.read_text() and '"caf\u00e9"' in e.settings.read_text(encoding="utf-8")  # indent, no \\u escapes
    assert uninstall_cmd.main([]) == 0
    assert e.settings.read_bytes() == FOREIGN
    assert not e.skill.exists()
    assert "Restart Claude Code" in capsys.readouterr().out
    # and without any backup to fall back on, the splice alone gives the bytes back
    assert install_cmd.main([]) == 0
    for backup in install.backups_of(str(e.settings)):
        os.unlink(backup)
    assert uninstall_cmd.main([]) == 0
    assert e.settings.read_bytes() == FOREIGN


def test_uninstall_of_a_created_settings_file_removes_it(e: Env) -> None:
    assert install_cmd.main([]) == 0
    assert e.settings.exists()
    assert uninstall_cmd.main([]) == 0
    assert not e.settings.exists() and not e.skill.exists()


def test_uninstall_keeps_changes_made_after_install(e: Env) -> None:
    e.config.mkdir()
    e.settings.write_bytes(FOREIGN)
    assert install_cmd.main([]) == 0
    data = json.loads(e.settings.read_bytes())
    data["theme"] = "dark"  # the user (or Claude Code) changed something since
    e.settings.write_text(json.dumps(data, indent=4) + "\n")
    assert uninstall_cmd.main([]) == 0
    after = json.loads(e.settings.read_bytes())
    expected = json.loads(FOREIGN)
    expected["theme"] = "dark"
    assert after == expected and our_entries(e.settings) == {}


def test_uninstall_keeps_hooks_containers_that_were_there(e: Env) -> None:
    e.config.mkdir()
    original = b'{"hooks": {"PreToolUse": []}}'
    e.settings.write_bytes(original)
    assert install_cmd.main([]) == 0
    for backup in e.config.glob("settings.json.engramory-backup-*"):
        backup.unlink()  # even without the backup, what existed before stays
    assert uninstall_cmd.main([]) == 0
    assert json.loads(e.settings.read_bytes()) == {"hooks": {"PreToolUse": []}}


def test_crlf_tabs_and_bom_style_is_kept(e: Env) -> None:
    e.config.mkdir()
    e.settings.write_bytes(b'\xef\xbb\xbf{\r\n\t"model": "opus"\r\n}\r\n')
    assert install_cmd.main([]) == 0
    raw = e.settings.read_bytes()
    assert raw.startswith(b'\xef\xbb\xbf{\r\n\t"model": "opus",\r\n\t"hooks": {\r\n\t\t"PreToolUse"')
    assert b"\n" not in raw.replace(b"\r\n", b"") and raw.endswith(b"}\r\n")
    assert uninstall_cmd.main([]) == 0
    assert e.settings.read_bytes() == b'\xef\xbb\xbf{\r\n\t"model": "opus"\r\n}\r\n'


def test_settings_kept_as_a_link_stays_a_link(e: Env, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_bytes(FOREIGN)
    e.config.mkdir()
    e.settings.symlink_to(real)
    assert install_cmd.main([]) == 0
    assert e.settings.is_symlink() and our_entries(real)
    assert list(dotfiles.glob("claude-settings.json.engramory-backup-*"))
    assert uninstall_cmd.main([]) == 0
    assert e.settings.is_symlink() and real.read_bytes() == FOREIGN


def test_dangling_settings_link_refused(e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    e.config.mkdir()
    e.settings.symlink_to(tmp_path / "nowhere.json")
    assert install_cmd.main([]) == 1
    assert "which does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nowhere.json").exists() and not e.skill.exists()


def test_unreadable_config_dir_is_a_clear_error(e: Env, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    env = dict(e.vars(), CLAUDE_CONFIG_DIR=str(blocker))
    proc = run_cli("install", env=env)
    assert proc.returncode == 1 and str(blocker) in proc.stderr and "Traceback" not in proc.stderr
    assert blocker.read_text() == "x"


def test_stale_entry_of_ours_is_replaced_foreign_untouched(e: Env) -> None:
    e.config.mkdir()
    old = '/old/python -I -S "%s"' % (e.skill / "hooks" / "engramory_index_guard.py")
    e.settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "my-linter"},
                                            {"type": "command", "command": old}]},
    ]}}))
    assert install_cmd.main([]) == 0
    groups = json.loads(e.settings.read_bytes())["hooks"]["PreToolUse"]
    assert groups[0] == {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "my-linter"}]}
    assert len(our_entries(e.settings)["PreToolUse"]) == 1
    assert sys.executable in our_entries(e.settings)["PreToolUse"][0]["command"]


# -- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{\n  "model": "opus",\n  "hooks": {,}\n}\n', "not valid JSON: expected a key in double quotes at line 3, column 13"),
        (b'{"a": 1,}', "at line 1, column 9"),
        (b'// comment\n{}', "at line 1, column 1"),
        (b"[]", "the top level is an array, not an object"),
        (b'"x"', "the top level is a string, not an object"),
        (b'{"hooks": []}', '"hooks" is an array, not an object'),
        (b'{"hooks": {"PreToolUse": {}}}', '"hooks".PreToolUse is an object, not an array'),
        (b'{"model": "caf\xe9"}', "not UTF-8 text (byte 0xe9 at line 1, column 15)"),
        (b'{"a": 1, "a": 2}', "the key 'a' appears twice"),
        (b'{"a": NaN}', "not valid JSON"),
    ],
)
def test_malformed_settings_refused_untouched(e: Env, capsys: pytest.CaptureFixture[str], raw: bytes, expected: str) -> None:
    e.config.mkdir()
    e.settings.write_bytes(raw)
    assert install_cmd.main([]) == 1
    err = capsys.readouterr().err
    assert str(e.settings) in err and expected in err and "nothing was changed" in err
    assert "Traceback" not in err
    assert e.settings.read_bytes() == raw
    assert not e.skill.exists() and list(e.config.iterdir()) == [e.settings]
    # uninstall refuses what it cannot parse, and leaves alone shapes it has nothing to take from
    assert uninstall_cmd.main([]) == (0 if b"PreToolUse" in raw else 1)
    assert e.settings.read_bytes() == raw


def test_malformed_settings_refused_by_the_cli(e: Env) -> None:
    e.config.mkdir()
    e.settings.write_bytes(b"{oops")
    proc = run_cli("install", env=e.vars())
    assert proc.returncode == 1 and "line 1, column 2" in proc.stderr and "Traceback" not in proc.stderr
    assert e.settings.read_bytes() == b"{oops"


def test_foreign_skill_folder_refused(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    e.skill.mkdir(parents=True)
    (e.skill / "SKILL.md").write_text("someone else's skill\n")
    assert install_cmd.main([]) == 1
    assert "was not installed by engramory" in capsys.readouterr().err
    assert (e.skill / "SKILL.md").read_text() == "someone else's skill\n"
    assert not e.settings.exists()
    assert uninstall_cmd.main([]) == 0  # nothing of ours: the folder stays
    assert (e.skill / "SKILL.md").exists()


@pytest.mark.parametrize(
    ("path", "word"),
    [
        ("/usr/bin/python3", "/usr/bin/python3"),
        ("/opt/My Python/bin/python3", '"/opt/My Python/bin/python3"'),
        ("/x/$HOME/`id`/py\\thon\"", '"/x/\\$HOME/\\`id\\`/py\\\\thon\\""'),
        ("/x/py\\thon", '"/x/py\\\\thon"'),
    ],
)
def test_shell_word_survives_sh(path: str, word: str, tmp_path: Path) -> None:
    if os.name == "nt":
        pytest.skip("POSIX quoting")
    assert shell_word(path) == word
    proc = subprocess.run(["sh", "-c", "printf %s " + word], capture_output=True, text=True, timeout=30)
    assert proc.stdout == path


def test_apply_change_refuses_a_file_changed_meanwhile(tmp_path: Path) -> None:
    p = tmp_path / "settings.json"
    p.write_bytes(b"{}")
    change = install.Change(str(p), b"{}", b'{"a": 1}\n')
    p.write_bytes(b'{"b": 2}')
    with pytest.raises(install.SettingsError, match="changed on disk"):
        install.apply_change(change)
    assert p.read_bytes() == b'{"b": 2}'


# -- dry run -----------------------------------------------------------------------------


def test_dry_run_writes_nothing(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    e.config.mkdir()
    e.settings.write_bytes(FOREIGN)
    assert install_cmd.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "--- %s" % e.settings in out and "+++ %s" % e.settings in out
    assert '+                "matcher": "Edit|Write|MultiEdit|Bash",' in out
    assert "    + engramory/__init__.py" in out and "    + hooks/engramory_index_guard.py" in out
    assert e.settings.read_bytes() == FOREIGN
    assert list(e.config.iterdir()) == [e.settings]
    assert install_cmd.main([]) == 0
    capsys.readouterr()
    assert uninstall_cmd.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would be removed" in out and "-                \"matcher\": \"Edit|Write|MultiEdit|Bash\"," in out
    assert e.skill.exists() and our_entries(e.settings)


# -- the memory store --------------------------------------------------------------------


def test_memory_store_untouched(e: Env) -> None:
    memory = e.config / "projects" / "-home-u-proj" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(index_text(250))
    (memory / "note-1.md").write_text("---\nname: x\n---\nbody\n")
    snapshot = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in memory.iterdir()}
    assert install_cmd.main([]) == 0
    assert install_cmd.main(["--check"]) == 0
    assert uninstall_cmd.main([]) == 0
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in memory.iterdir()} == snapshot


# -- scopes, link, in-place --------------------------------------------------------------


def test_project_and_local_scopes(e: Env) -> None:
    claude = e.project / ".claude"
    assert install_cmd.main(["--scope", "project"]) == 0
    assert (claude / "skills" / "engramory" / "hooks" / "engramory_index_guard.py").is_file()
    assert our_entries(claude / "settings.json")
    assert not e.config.exists()
    assert install_cmd.main(["--scope", "local"]) == 0
    local = our_entries(claude / "settings.local.json")
    assert str(claude / "skills" / "engramory" / "hooks") in local["PreToolUse"][0]["command"]
    # Both settings files use the one skill folder: it stays until the last one goes.
    assert uninstall_cmd.main(["--scope", "local"]) == 0
    assert not (claude / "settings.local.json").exists()
    assert (claude / "skills" / "engramory" / "engramory" / "__init__.py").is_file()
    assert install_cmd.main(["--scope", "project", "--check"]) == 0
    assert uninstall_cmd.main(["--scope", "project"]) == 0
    assert not (claude / "skills" / "engramory").exists() and not (claude / "settings.json").exists()


def test_link_mode(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert install_cmd.main(["--link"]) == 0
    # A folder of links, not one link to the checkout: .claude-plugin/ must stay behind, or
    # Claude Code also loads the folder as a plugin and every hook runs twice.
    assert e.skill.is_dir() and not e.skill.is_symlink()
    assert (e.skill / "engramory").is_symlink() and os.path.samefile(e.skill / "engramory", ROOT / "engramory")
    assert (e.skill / "hooks" / "engramory_index_guard.py").is_file()
    assert not (e.skill / ".claude-plugin").exists() and not (e.skill / "tests").exists()
    assert not (ROOT / install.MANIFEST).exists()
    tracked = sorted(p.relative_to(ROOT) for p in (ROOT / "engramory").glob("*.py"))
    assert install_cmd.main(["--link"]) == 0
    assert "already installed: nothing changed" in capsys.readouterr().out
    assert install_cmd.main(["--check"]) == 0
    # Switching to a copy replaces the link; switching back replaces the copy.
    assert install_cmd.main([]) == 0
    assert e.skill.is_dir() and not e.skill.is_symlink()
    assert install_cmd.main(["--link"]) == 0
    assert (e.skill / "engramory").is_symlink()
    assert uninstall_cmd.main([]) == 0
    assert not os.path.lexists(e.skill)
    assert sorted(p.relative_to(ROOT) for p in (ROOT / "engramory").glob("*.py")) == tracked
    assert not e.settings.exists()


def test_old_whole_folder_link_is_replaced(e: Env) -> None:
    (e.config / "skills").mkdir(parents=True)
    e.skill.symlink_to(ROOT, target_is_directory=True)
    assert install_cmd.main(["--link"]) == 0
    assert not e.skill.is_symlink() and (e.skill / "engramory").is_symlink()
    assert (ROOT / "engramory" / "cli.py").is_file()
    assert uninstall_cmd.main([]) == 0
    assert not os.path.lexists(e.skill) and (ROOT / "engramory" / "cli.py").is_file()


def test_manifest_entries_reached_through_a_link_are_never_deleted(e: Env, tmp_path: Path) -> None:
    assert install_cmd.main([]) == 0
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "engramory").mkdir(parents=True)
    precious = elsewhere / "engramory" / "guard.py"
    precious.write_text("not ours\n")
    import shutil

    shutil.rmtree(e.skill / "engramory")
    (e.skill / "engramory").symlink_to(elsewhere / "engramory", target_is_directory=True)
    assert uninstall_cmd.main([]) == 0
    assert precious.read_text() == "not ours\n"


def test_update_removes_files_the_bundle_dropped(e: Env) -> None:
    assert install_cmd.main([]) == 0
    manifest_path = e.skill / install.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["files"].append("engramory/retired.py")
    manifest_path.write_text(json.dumps(manifest))
    (e.skill / "engramory" / "retired.py").write_text("# old\n")
    (e.skill / "engramory" / "guard.py").write_text("# damaged copy\n")
    mine = e.skill / "my-notes.txt"
    mine.write_text("the user's own file\n")
    assert install_cmd.main([]) == 0
    assert not (e.skill / "engramory" / "retired.py").exists()
    assert (e.skill / "engramory" / "guard.py").read_bytes() == (ROOT / "engramory" / "guard.py").read_bytes()
    assert uninstall_cmd.main([]) == 0
    assert mine.read_text() == "the user's own file\n"  # not ours: kept, folder kept for it
    assert sorted(p.name for p in e.skill.iterdir()) == ["my-notes.txt"]


def test_running_from_the_installed_copy(e: Env) -> None:
    assert install_cmd.main([]) == 0
    proc = run_cli("install", env=e.vars(), cwd=e.skill)
    assert proc.returncode == 0, proc.stderr
    assert "is this bundle itself" in proc.stdout and "already present" in proc.stdout
    assert "every hook would run twice" not in proc.stdout  # a copy has no .claude-plugin/
    assert "copied" not in proc.stdout
    proc = run_cli("install", "--check", env=e.vars(), cwd=e.skill)
    assert proc.returncode == 0, proc.stdout
    proc = run_cli("uninstall", env=e.vars(), cwd=e.skill)
    assert proc.returncode == 0, proc.stderr
    assert not e.skill.exists() and not e.settings.exists()  # still our copy: it goes


def test_checkout_cloned_into_the_skills_folder(e: Env) -> None:
    import shutil

    shutil.copytree(ROOT, e.skill, ignore=shutil.ignore_patterns("tests", ".git", "__pycache__", ".venv*", "node_modules"))
    before = sorted(str(p.relative_to(e.skill)) for p in e.skill.rglob("*"))
    proc = run_cli("install", env=e.vars(), cwd=e.skill)
    assert proc.returncode == 0, proc.stderr
    assert "is this bundle itself" in proc.stdout and "run twice" in proc.stdout and "copied" not in proc.stdout
    proc = run_cli("uninstall", env=e.vars(), cwd=e.skill)
    assert proc.returncode == 0, proc.stderr
    assert "its files stay" in proc.stdout
    after = sorted(str(p.relative_to(e.skill)) for p in e.skill.rglob("*") if "__pycache__" not in p.parts)
    assert after == [p for p in before if "__pycache__" not in p]  # the user's checkout is never emptied
    assert not e.settings.exists()


# -- --check -----------------------------------------------------------------------------


def test_check(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert install_cmd.main(["--check"]) == 1
    assert "the guard (denies over-cap Edit/Write) is not wired" in capsys.readouterr().out
    assert install_cmd.main([]) == 0
    capsys.readouterr()
    assert install_cmd.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert out.count("a smoke run was denied") == 1 and out.count("a smoke run was reported") == 3 and "healthy" in out
    assert "earlier install" not in out
    (e.skill / "hooks" / "engramory_hook.py").unlink()
    assert install_cmd.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "engramory_hook.py does not exist" in out and "the guard is off" in out and "fix: " in out
    assert out.count("engramory_hook.py does not exist") == 4  # every hook runs the one entry
    assert "a smoke run" not in out


def test_install_refuses_an_interpreter_that_cannot_run_the_hooks(e: Env, tmp_path: Path) -> None:
    with pytest.raises(install.WriteError, match="could not run"):
        install.install(install.Target("user"), interpreter=str(tmp_path / "gone" / "python3"))
    assert not e.settings.exists()  # nothing wired


def test_check_missing_interpreter_and_broken_script(e: Env, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert install_cmd.main([]) == 0
    text = e.settings.read_text().replace(json.dumps(sys.executable)[1:-1], str(tmp_path / "gone" / "python3"))
    e.settings.write_text(text)
    capsys.readouterr()
    assert install_cmd.main(["--check"]) == 1
    assert "the interpreter %s does not exist" % (tmp_path / "gone" / "python3") in capsys.readouterr().out
    assert install_cmd.main([]) == 0  # re-wire with this interpreter
    (e.skill / "hooks" / "engramory_hook.py").write_text("raise SystemExit(2)\n")
    capsys.readouterr()
    assert install_cmd.main(["--check"]) == 1
    assert "it exited 2" in capsys.readouterr().out


def test_check_notes_the_plugin_enabled_too(e: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert install_cmd.main([]) == 0
    data = json.loads(e.settings.read_bytes())
    data["enabledPlugins"] = {"engramory@engramory-marketplace": True, "other@x": True}
    e.settings.write_text(json.dumps(data))
    capsys.readouterr()
    assert install_cmd.main(["--check"]) == 0
    # Enabled but never installed: Claude Code runs none of its hooks; the settings hooks act.
    # (Installed as well: tests/hosts/claude/test_claude_install_check.py::test_plugin_and_settings_hooks_both_wired_is_noted.)
    assert "the plugin engramory@engramory-marketplace is enabled (user settings) but Claude Code has no copy" \
        in capsys.readouterr().out


def test_check_by_the_cli(e: Env) -> None:
    proc = run_cli("install", env=e.vars())
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("install", "--check", env=e.vars())
    assert proc.returncode == 0 and "healthy" in proc.stdout
    proc = run_cli("uninstall", env=e.vars())
    assert proc.returncode == 0 and not e.settings.exists()


# -- other hosts -------------------------------------------------------------------------


def test_other_host_missing_module(e: Env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "engramory.hosts.hermes.install", None)  # as if the file were absent
    assert install_cmd.main(["--host", "hermes"]) == 1
    assert "--host hermes is not available" in capsys.readouterr().err
    assert not e.config.exists()


def test_other_host_is_delegated(e: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []
    fake = types.ModuleType("engramory.hosts.cursor.install")
    fake.install = lambda args: calls.append(("install", args)) or 0  # type: ignore[attr-defined]
    fake.uninstall = lambda args: calls.append(("uninstall", args)) or 5  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "engramory.hosts.cursor.install", fake)
    assert install_cmd.main(["--host", "cursor", "--scope", "project", "--dry-run"]) == 0
    assert uninstall_cmd.main(["--host", "cursor"]) == 5
    assert [c[0] for c in calls] == ["install", "uninstall"]
    args = calls[0][1]
    assert (args.host, args.scope, args.dry_run, args.link, args.check) == ("cursor", "project", True, False, False)
    assert not e.config.exists()


def test_usage_errors_exit_64(e: Env) -> None:
    with pytest.raises(SystemExit) as exc:
        install_cmd.main(["--scope", "galaxy"])
    assert exc.value.code == 64
    proc = run_cli("install", "--help", env=e.vars())
    assert proc.returncode == 0 and "--dry-run" in proc.stdout and "--link" in proc.stdout and "--check" in proc.stdout


# -- the plugin --------------------------------------------------------------------------


def test_plugin_manifest_matches_the_package() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["name"] == "engramory"
    assert plugin["version"] == engramory.__version__
    assert "hooks" not in plugin  # hooks/hooks.json is loaded anyway; naming it again is an error
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] not in {
        "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
        "anthropic-marketplace", "anthropic-plugins", "agent-skills",
    }
    assert market["owner"]["name"]
    assert market["plugins"] == [dict(market["plugins"][0], name="engramory", source="./")]
    assert (ROOT / "SKILL.md").is_file() or not (ROOT / "skills").exists()


def test_plugin_hooks_match_the_installer() -> None:
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    for event, matcher, _legacy in install.HOOKS:
        (group,) = hooks[event]
        assert group.get("matcher") == matcher
        (h,) = group["hooks"]
        assert h["type"] == "command" and h["timeout"] == install.HOOK_TIMEOUT
        # through the launcher, like the installer's commands: a missing plugin folder is a
        # hook error (exit 1), never exit 2, which Claude Code reads as a deny of every edit;
        # the generic entry with the event, as the installer writes it (issue 20)
        assert h["command"] == install.hook_command(
            "python3", "hooks/" + install.ENTRY, base_var="CLAUDE_PLUGIN_ROOT") + " claude " + event
    assert (ROOT / "hooks" / install.ENTRY).is_file()
    assert sorted(hooks) == sorted(event for event, _, _ in install.HOOKS)


def test_a_missing_script_fails_open_instead_of_denying(tmp_path: Path) -> None:
    """Python exits 2 on a script it cannot open, and Claude Code reads exit 2 as a deny of
    every Edit/Write. The installed command runs the script through a launcher, so a deleted
    skill folder is a hook error (exit 1), never a lockout."""
    import subprocess

    missing = tmp_path / "gone dir" / "skills" / "engramory" / "hooks" / "engramory_index_guard.py"
    command = install.hook_command(sys.executable, str(missing))
    proc = subprocess.run(["sh", "-c", command], input=b"{}", capture_output=True, timeout=30)
    assert proc.returncode == 1, proc
    plain = subprocess.run([sys.executable, "-I", "-S", str(missing)], input=b"{}", capture_output=True, timeout=30)
    assert plain.returncode == 2  # what the launcher protects against


def test_the_launcher_runs_the_real_script_with_its_file_name(tmp_path: Path) -> None:
    import json
    import subprocess

    from tests.conftest import HOOK, index_text

    index = tmp_path / "MEMORY.md"
    payload = {"tool_name": "Write", "tool_input": {"file_path": str(index), "content": index_text(201)}}
    proc = subprocess.run(["sh", "-c", install.hook_command(sys.executable, str(HOOK))],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=30)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_uninstall_leaves_nothing_behind_in_an_empty_home(e: Env) -> None:
    """No backup of a settings file install created, no folders install made."""
    assert not e.config.exists()
    assert install_cmd.main([]) == 0
    assert uninstall_cmd.main([]) == 0
    assert not e.config.exists()
    assert install_cmd.main(["--scope", "project"]) == 0
    assert uninstall_cmd.main(["--scope", "project"]) == 0
    assert list(e.project.iterdir()) == []
    # folders that were there before stay
    (e.config / "skills").mkdir(parents=True)
    assert install_cmd.main([]) == 0
    assert uninstall_cmd.main([]) == 0
    assert sorted(p.name for p in e.config.rglob("*")) == ["skills"]


# -- an install written before the generic entry (issue 20) -----------------------------------

# settings.json as `engramory install` (user scope, into a new config folder) wrote it before it
# wired hooks/engramory_hook.py, byte for byte; {python} and {skill} stand for the interpreter
# and the skill folder (as JSON holds them).
OLD_SETTINGS = (
    '{\n'
    '  "hooks": {\n'
    '    "PreToolUse": [\n'
    '      {\n'
    '        "matcher": "Edit|Write|MultiEdit",\n'
    '        "hooks": [\n'
    '          {\n'
    '            "type": "command",\n'
    '            "command": "{python} -I -S -c \\"import sys;p=sys.argv[1].replace(chr(92),\'/\');d,_,f=p.rpartition(\'/\');sys.path.insert(0,d or \'.\');__import__(f[:-3])\\" \\"{skill}/hooks/engramory_index_guard.py\\"",\n'
    '            "timeout": 10\n'
    '          }\n'
    '        ]\n'
    '      }\n'
    '    ],\n'
    '    "PostToolUse": [\n'
    '      {\n'
    '        "matcher": "^(Bash|PowerShell|Monitor|mcp__.*)$",\n'
    '        "hooks": [\n'
    '          {\n'
    '            "type": "command",\n'
    '            "command": "{python} -I -S -c \\"import sys;p=sys.argv[1].replace(chr(92),\'/\');d,_,f=p.rpartition(\'/\');sys.path.insert(0,d or \'.\');__import__(f[:-3])\\" \\"{skill}/hooks/engramory_post_tool.py\\"",\n'
    '            "timeout": 10\n'
    '          }\n'
    '        ]\n'
    '      }\n'
    '    ],\n'
    '    "SessionStart": [\n'
    '      {\n'
    '        "hooks": [\n'
    '          {\n'
    '            "type": "command",\n'
    '            "command": "{python} -I -S -c \\"import sys;p=sys.argv[1].replace(chr(92),\'/\');d,_,f=p.rpartition(\'/\');sys.path.insert(0,d or \'.\');__import__(f[:-3])\\" \\"{skill}/hooks/engramory_session_start.py\\"",\n'
    '            "timeout": 10\n'
    '          }\n'
    '        ]\n'
    '      }\n'
    '    ],\n'
    '    "UserPromptSubmit": [\n'
    '      {\n'
    '        "hooks": [\n'
    '          {\n'
    '            "type": "command",\n'
    '            "command": "{python} -I -S -c \\"import sys;p=sys.argv[1].replace(chr(92),\'/\');d,_,f=p.rpartition(\'/\');sys.path.insert(0,d or \'.\');__import__(f[:-3])\\" \\"{skill}/hooks/engramory_post_tool.py\\"",\n'
    '            "timeout": 10\n'
    '          }\n'
    '        ]\n'
    '      }\n'
    '    ]\n'
    '  }\n'
    '}\n'
)


def _old_install(e: Env) -> bytes:
    """A user-scope install as the earlier installer left it: today's bundle, its manifest, and
    the settings file that installer wrote."""
    assert install_cmd.main([]) == 0
    raw = OLD_SETTINGS.replace("{python}", json.dumps(sys.executable)[1:-1]).replace(
        "{skill}", json.dumps(str(e.skill))[1:-1]).encode("utf-8")
    e.settings.write_bytes(raw)
    return raw


def _denied(command: str, e: Env, work: Path) -> bool:
    work.mkdir(exist_ok=True)
    index = work / "MEMORY.md"
    index.write_text(index_text(199))
    payload = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(work), "hook_event_name": "PreToolUse",
               "tool_name": "Write", "tool_input": {"file_path": str(index), "content": index_text(300)}}
    proc = subprocess.run(["sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          env=e.vars(), cwd=str(work), timeout=60)
    answer = json.loads(proc.stdout or b"{}").get("hookSpecificOutput", {})
    return proc.returncode == 0 and answer.get("permissionDecision") == "deny"


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(
    e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _old_install(e)
    record = json.loads((e.skill / install.MANIFEST).read_text())["settings"]
    (old,) = our_entries(e.settings)["PreToolUse"]
    assert old["command"].endswith('/hooks/engramory_index_guard.py"')
    assert _denied(old["command"], e, tmp_path / "work")  # the shim, with today's bundle
    capsys.readouterr()
    assert install_cmd.main(["--check"]) == 0  # healthy, and says a reinstall would move it
    out = capsys.readouterr().out
    assert out.count("wired by an earlier install") == 4 and "problem" not in out and "a reinstall moves it" in out
    assert install_cmd.main([]) == 0
    out = capsys.readouterr().out
    assert out.count("replaced our earlier entry") == 4 and "Restart Claude Code" in out
    entries = our_entries(e.settings)
    assert sorted(entries) == ["PostToolUse", "PreToolUse", "SessionStart", "UserPromptSubmit"]
    for event, handlers in entries.items():
        (h,) = handlers  # replaced, not added beside
        assert h["command"] == install.hook_command(sys.executable, str(e.skill / "hooks" / "engramory_hook.py")) + (
            " claude " + event)
    text = e.settings.read_text()
    assert not any(script in text for script in install.LEGACY_SCRIPTS)
    manifest = json.loads((e.skill / install.MANIFEST).read_text())
    assert manifest["settings"] == record  # what install created is still what uninstall gives back
    copied = sorted(str(p.relative_to(e.skill)) for p in e.skill.rglob("*") if p.is_file()
                    and "__pycache__" not in p.parts and p.name != install.MANIFEST)
    assert copied == sorted(manifest["files"])  # nothing in the folder the manifest does not own
    assert _denied(entries["PreToolUse"][0]["command"], e, tmp_path / "work")
    capsys.readouterr()
    assert install_cmd.main(["--check"]) == 0
    assert "earlier install" not in capsys.readouterr().out
    assert uninstall_cmd.main([]) == 0
    assert not e.settings.exists() and not e.skill.exists()


def test_uninstall_takes_out_an_old_install_and_keeps_foreign_hooks(e: Env) -> None:
    _old_install(e)
    data = json.loads(e.settings.read_bytes())
    data["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check"}]})
    e.settings.write_text(json.dumps(data, indent=2))
    assert uninstall_cmd.main([]) == 0
    assert json.loads(e.settings.read_bytes()) == {
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check"}]}]}}
    assert not e.skill.exists()


@pytest.mark.parametrize("command, ours", [
    ('python3 -I -S -c "L" "${CLAUDE_PROJECT_DIR}/.claude/skills/engramory/hooks/engramory_index_guard.py"', True),
    ('python3 -I -S -c "L" "${CLAUDE_PROJECT_DIR}/.claude/skills/engramory/hooks/engramory_hook.py" claude SessionStart',
     True),
    ('/py -I -S -c "L" "/h/.claude/skills/engramory/hooks/engramory_hook.py" claude UserPromptSubmit', True),
    ('/py -I -S -c "L" "/h/.claude/skills/engramory/hooks/engramory_hook.py" codex PreToolUse', False),
    ('/py -I -S -c "L" "/h/.claude/skills/engramory/hooks/engramory_hook.py" claude', False),
    ('/py "/h/.claude/skills/other/hooks/engramory_hook.py" claude PreToolUse', False),
])
def test_both_forms_are_recognised_as_ours(command: str, ours: bool) -> None:
    assert install.is_our_handler({"type": "command", "command": command}) is ours
