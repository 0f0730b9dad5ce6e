"""`engramory install --host cursor`: the hooks.json merge, the bundle copy, idempotence,
refusals, dry runs and an uninstall that takes out exactly what install put in. Every test
runs against a temporary HOME and a temporary project folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engramory import cli
from engramory.hosts.claude import install
from engramory.hosts.cursor import install as install_cursor
from tests.conftest import ROOT, index_text


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    return h


def run(*argv: str) -> int:
    return cli.main(list(argv))


def snapshot(folder: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out


def expected_command(base: Path) -> str:
    return '%s -I -S -c "%s" "%s" cursor' % (
        sys.executable, install.LAUNCHER, base / "engramory" / "hooks" / "engramory_hook.py"
    )


def test_fresh_user_install_writes_one_entry_and_copies_the_runtime(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor") == 0
    hooks = home / ".cursor" / "hooks.json"
    data = json.loads(hooks.read_text())
    assert data == {"version": 1, "hooks": {"preToolUse": [{"command": expected_command(home / ".cursor"), "timeout": 10}]}}
    copied = home / ".cursor" / "engramory"
    assert (copied / "hooks" / "engramory_hook.py").is_file()
    assert not (copied / "hooks" / "engramory_cursor_guard.py").exists()  # only old installs run it
    assert (copied / "engramory" / "hosts" / "cursor" / "__init__.py").is_file()
    assert (copied / "tools" / "engramory_check.py").is_file()
    assert not (copied / "hooks" / "engramory_index_guard.py").exists()  # the Claude hook is not Cursor's
    assert "preToolUse: added" in capsys.readouterr().out


def test_second_install_is_byte_identical_and_writes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor") == 0
    before = snapshot(home)
    mtimes = {p: p.stat().st_mtime_ns for p in home.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert run("install", "--host", "cursor") == 0
    assert snapshot(home) == before
    assert {p: p.stat().st_mtime_ns for p in home.rglob("*") if p.is_file()} == mtimes
    assert "already installed: nothing changed." in capsys.readouterr().out


FOREIGN = (
    '{\n    "version": 1,\n    "hooks": {\n        "preToolUse": [\n'
    '            {"command": "./audit.sh", "matcher": "Shell"}\n        ],\n'
    '        "afterFileEdit": [{"command": "./fmt.sh"}]\n    },\n    "x-note": "mine"\n}\n'
)


def test_merge_puts_the_guard_first_keeps_the_rest_and_backs_up(home: Path) -> None:
    hooks = home / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(FOREIGN)
    assert run("install", "--host", "cursor") == 0
    data = json.loads(hooks.read_text())
    pre = data["hooks"]["preToolUse"]
    assert pre[0]["command"] == expected_command(home / ".cursor")
    assert pre[1:] == [{"command": "./audit.sh", "matcher": "Shell"}]
    assert data["hooks"]["afterFileEdit"] == [{"command": "./fmt.sh"}]
    assert data["x-note"] == "mine"
    assert hooks.read_text().startswith('{\n    "version"')  # the file's own indent is kept
    backups = list(hooks.parent.glob("hooks.json.engramory-backup-*"))
    assert [b.read_text() for b in backups] == [FOREIGN]


def test_an_entry_of_ours_that_is_not_first_is_moved_to_the_front(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor") == 0
    hooks = home / ".cursor" / "hooks.json"
    data = json.loads(hooks.read_text())
    ours = data["hooks"]["preToolUse"][0]
    data["hooks"]["preToolUse"] = [{"command": "./first.sh"}, ours]
    hooks.write_text(json.dumps(data))
    capsys.readouterr()
    assert run("install", "--host", "cursor") == 0
    assert json.loads(hooks.read_text())["hooks"]["preToolUse"] == [ours, {"command": "./first.sh"}]
    assert "moved to the front" in capsys.readouterr().out


def test_an_older_entry_of_ours_is_replaced_not_duplicated(home: Path) -> None:
    hooks = home / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    old = {"command": '/old/python -I -S "/old/place/engramory/hooks/engramory_cursor_guard.py"', "timeout": 5}
    hooks.write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [{"command": "./a.sh"}, old]}}))
    assert run("install", "--host", "cursor") == 0
    pre = json.loads(hooks.read_text())["hooks"]["preToolUse"]
    assert [e["command"] for e in pre] == [expected_command(home / ".cursor"), "./a.sh"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"version": 1, "hooks": {', "not valid JSON"),
        ("[]", "not an object"),
        ('{"version": 2, "hooks": {}}', '"version" is 2'),
        ('{"version": "1"}', '"version" is "1"'),
        ('{"hooks": []}', '"hooks" is an array'),
        ('{"hooks": {"preToolUse": {"command": "x"}}}', '"hooks".preToolUse is an object'),
        ('{"hooks": {}, "hooks": {}}', "appears twice"),
    ],
)
def test_a_malformed_hooks_json_is_refused_and_left_untouched(
    home: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    hooks = home / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(text)
    assert run("install", "--host", "cursor") == 1
    err = capsys.readouterr().err
    assert says in err and "nothing was changed" in err
    assert hooks.read_text() == text
    assert sorted(p.name for p in hooks.parent.iterdir()) == ["hooks.json"]  # no copy, no backup
    assert run("uninstall", "--host", "cursor") == 1
    assert hooks.read_text() == text


def test_dry_run_shows_the_diff_and_writes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "+++ %s" % (home / ".cursor" / "hooks.json") in out
    assert '+    "preToolUse": [' in out
    assert "would copy" in out
    assert not (home / ".cursor").exists()
    assert run("install", "--host", "cursor") == 0
    before = snapshot(home)
    assert run("uninstall", "--host", "cursor", "--dry-run") == 0
    assert "-    \"preToolUse\": [" in capsys.readouterr().out
    assert snapshot(home) == before


def test_project_scope_uses_the_current_folder(home: Path) -> None:
    project = Path.cwd()
    assert run("install", "--host", "cursor", "--scope", "project") == 0
    data = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert data["hooks"]["preToolUse"][0]["command"] == expected_command(project / ".cursor")
    assert not (home / ".cursor").exists()


def test_local_scope_is_not_a_cursor_scope(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor", "--scope", "local") == 64
    assert "--scope user (~/.cursor) or --scope project" in capsys.readouterr().err
    assert not (home / ".cursor").exists()


def test_uninstall_after_a_fresh_install_leaves_nothing_behind(home: Path) -> None:
    assert run("install", "--host", "cursor") == 0
    (home / ".cursor" / "engramory" / "engramory" / "__pycache__").mkdir(exist_ok=True)
    assert run("uninstall", "--host", "cursor") == 0
    assert list(home.iterdir()) == []


def test_uninstall_gives_back_the_users_own_bytes(home: Path) -> None:
    hooks = home / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(FOREIGN)
    (hooks.parent / "other.txt").write_text("keep")
    assert run("install", "--host", "cursor") == 0
    assert run("uninstall", "--host", "cursor") == 0
    assert hooks.read_text() == FOREIGN
    assert (hooks.parent / "other.txt").read_text() == "keep"
    assert not (hooks.parent / "engramory").exists()


def test_uninstall_keeps_files_it_did_not_install(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor") == 0
    mine = home / ".cursor" / "engramory" / "my-notes.txt"
    mine.write_text("mine")
    assert run("uninstall", "--host", "cursor") == 0
    assert mine.read_text() == "mine"
    assert "still holds files engramory did not install (my-notes.txt)" in capsys.readouterr().out
    assert not (home / ".cursor" / "hooks.json").exists()


def test_a_folder_that_is_not_ours_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = home / ".cursor" / "engramory"
    foreign.mkdir(parents=True)
    (foreign / "x").write_text("x")
    assert run("install", "--host", "cursor") == 1
    assert "was not installed by engramory" in capsys.readouterr().err
    assert not (home / ".cursor" / "hooks.json").exists()


def test_the_installed_command_denies_growth_and_passes_the_rest(home: Path, tmp_path: Path) -> None:
    assert run("install", "--host", "cursor") == 0
    command = json.loads((home / ".cursor" / "hooks.json").read_text())["hooks"]["preToolUse"][0]["command"]
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(8))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    env["ENGRAMORY_HARD"] = "10"
    grow = {"hook_event_name": "preToolUse", "tool_name": "Write", "tool_input": {"path": str(index), "contents": index_text(12)}}
    proc = subprocess.run(command, shell=True, input=json.dumps(grow).encode(), capture_output=True, env=env, cwd="/", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert json.loads(proc.stdout)["permission"] == "deny"
    shell = {"hook_event_name": "preToolUse", "tool_name": "Shell", "tool_input": {"command": "ls"}}
    proc = subprocess.run(command, shell=True, input=json.dumps(shell).encode(), capture_output=True, env=env, cwd="/", timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"{}\n", b"")


def test_check_reports_healthy_then_a_missing_script(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor", "--check") == 1
    assert "does not exist" in capsys.readouterr().out
    assert run("install", "--host", "cursor") == 0
    assert run("install", "--host", "cursor", "--check") == 0
    assert "healthy" in capsys.readouterr().out
    (home / ".cursor" / "engramory" / "hooks" / "engramory_hook.py").unlink()
    assert run("install", "--host", "cursor", "--check") == 1
    assert "the script" in capsys.readouterr().out


def test_link_mode_points_at_this_checkout(home: Path) -> None:
    assert run("install", "--host", "cursor", "--link") == 0
    folder = home / ".cursor" / "engramory"
    script = folder / "hooks" / "engramory_hook.py"
    assert script.resolve() == ROOT / "hooks" / "engramory_hook.py"
    assert run("install", "--host", "cursor", "--check") == 0
    checkout = snapshot(ROOT / "hooks"), snapshot(ROOT / "engramory")
    assert run("uninstall", "--host", "cursor") == 0
    assert list(home.iterdir()) == []
    assert (snapshot(ROOT / "hooks"), snapshot(ROOT / "engramory")) == checkout  # the checkout is untouched


def test_a_claude_install_beside_it_is_pointed_out(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"PreToolUse": [{"hooks": [{"command": "py hooks/engramory_index_guard.py"}]}]}}')
    assert run("install", "--host", "cursor", "--dry-run") == 0
    assert "judged twice" in capsys.readouterr().out


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_a_claude_install_of_today_beside_it_is_pointed_out(
    home: Path, scope: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `engramory install` writes now (the generic entry, `engramory_hook.py" claude
    PreToolUse`), in each Claude settings file Cursor may load, is seen as the Claude guard."""
    assert run("install", "--scope", scope) == 0
    settings = json.loads(Path(install.Target(scope).settings).read_text())
    (group,) = settings["hooks"]["PreToolUse"]
    assert 'engramory_hook.py" claude PreToolUse' in group["hooks"][0]["command"]
    capsys.readouterr()
    assert run("install", "--host", "cursor", "--dry-run") == 0
    assert "judged twice" in capsys.readouterr().out
    assert run("uninstall", "--scope", scope) == 0
    capsys.readouterr()
    assert run("install", "--host", "cursor", "--dry-run") == 0
    assert "judged twice" not in capsys.readouterr().out


def test_the_claude_check_honours_claude_config_dir(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wired = '{"hooks": {"PreToolUse": [{"hooks": [{"command": "py hooks/engramory_index_guard.py"}]}]}}'
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(wired)  # not read: CLAUDE_CONFIG_DIR wins
    config = tmp_path / "conf"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert run("install", "--host", "cursor", "--dry-run") == 0
    assert "judged twice" not in capsys.readouterr().out
    (config / "settings.json").write_text(wired)
    assert run("install", "--host", "cursor", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "%s also runs engramory's Claude Code guard" % (config / "settings.json") in out


def test_the_console_command_in_a_subprocess(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    env.update(HOME=str(tmp_path / "h"), PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "engramory", "install", "--host", "cursor", "--scope", "project"]
    first = subprocess.run(cmd, cwd=project, env=env, capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    hooks = (project / ".cursor" / "hooks.json").read_bytes()
    second = subprocess.run(cmd, cwd=project, env=env, capture_output=True, timeout=120)
    assert second.returncode == 0 and (project / ".cursor" / "hooks.json").read_bytes() == hooks


def test_install_and_uninstall_take_a_plain_namespace(home: Path) -> None:
    import argparse

    assert install_cursor.install(argparse.Namespace(scope="project", dry_run=False)) == 0
    assert (Path.cwd() / ".cursor" / "hooks.json").is_file()
    assert install_cursor.uninstall(argparse.Namespace(scope="project", dry_run=False)) == 0
    assert not (Path.cwd() / ".cursor").exists()


def test_a_missing_bundle_fails_open_instead_of_denying_every_tool(home: Path) -> None:
    # Plain `python script.py` exits 2 for a missing file, which Cursor reads as a deny.
    assert run("install", "--host", "cursor") == 0
    command = json.loads((home / ".cursor" / "hooks.json").read_text())["hooks"]["preToolUse"][0]["command"]
    import shutil

    shutil.rmtree(home / ".cursor" / "engramory")
    shell = {"hook_event_name": "preToolUse", "tool_name": "Shell", "tool_input": {"command": "ls"}}
    proc = subprocess.run(command, shell=True, input=json.dumps(shell).encode(), capture_output=True, timeout=60)
    assert proc.returncode not in (0, 2)
    assert proc.stdout == b""


def test_the_command_runs_from_a_path_with_spaces_and_quotes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / 'my "home" $x'
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert run("install", "--host", "cursor") == 0
    command = json.loads((home / ".cursor" / "hooks.json").read_text())["hooks"]["preToolUse"][0]["command"]
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(8))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    env["ENGRAMORY_HARD"] = "10"
    grow = {"tool_name": "Write", "tool_input": {"path": str(index), "contents": index_text(12)}}
    proc = subprocess.run(command, shell=True, input=json.dumps(grow).encode(), capture_output=True, env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert run("install", "--host", "cursor", "--check") == 0


def test_check_catches_a_guard_that_starts_but_would_not_act(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor") == 0
    capsys.readouterr()
    assert run("install", "--host", "cursor", "--check") == 0
    (home / ".cursor" / "engramory" / "engramory" / "edits.py").unlink()  # the guard fails open, exit 0
    assert run("install", "--host", "cursor", "--check") == 1
    out = capsys.readouterr().out
    assert "engramory/edits.py is missing" in out and "the guard would allow every edit" in out


# -- an install written before the generic entry (issue 20) -----------------------------------

# What `install --host cursor` wrote before it wired hooks/engramory_hook.py (kept byte for byte
# from that installer's output): the shared launcher and Cursor's own script.
OLD_COMMAND = ('{python} -I -S -c "import sys;p=sys.argv[1].replace(chr(92),\'/\');d,_,f=p.rpartition(\'/\');'
               'sys.path.insert(0,d or \'.\');__import__(f[:-3])" "{bundle}/hooks/engramory_cursor_guard.py"')


def _old_install(home: Path) -> Path:
    """Turn a fresh install into the one the earlier installer left: its hooks.json entry, the
    bundle's hooks/ holding only the old script, the manifest listing it."""
    assert run("install", "--host", "cursor") == 0
    bundle = home / ".cursor" / "engramory"
    hooks = home / ".cursor" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["preToolUse"][0]["command"] = OLD_COMMAND.format(python=sys.executable, bundle=bundle)
    hooks.write_text(json.dumps(data, indent=2) + "\n")
    hooks_dir = bundle / "hooks"
    for p in sorted(hooks_dir.rglob("*"), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    (hooks_dir / "engramory_cursor_guard.py").write_bytes((ROOT / "hooks" / "engramory_cursor_guard.py").read_bytes())
    manifest_path = bundle / ".engramory-install.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"] = [f for f in manifest["files"] if not f.startswith("hooks/")] + ["hooks/engramory_cursor_guard.py"]
    manifest_path.write_text(json.dumps(manifest))
    return hooks


def _denies(command: str, work: Path) -> bool:
    index = work / "MEMORY.md"
    index.write_text("".join("- [n%d](n%d.md) x\n" % (i, i) for i in range(200)))
    payload = {"hook_event_name": "preToolUse", "tool_name": "Write",
               "tool_input": {"path": str(index), "contents": "".join("- [n%d](n%d.md) x\n" % (i, i) for i in range(260))}}
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          cwd=str(work), timeout=60)
    return json.loads(proc.stdout or b"{}").get("permission") == "deny"


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hooks = _old_install(home)
    work = tmp_path / "work"
    work.mkdir()
    assert _denies(json.loads(hooks.read_text())["hooks"]["preToolUse"][0]["command"], work)
    capsys.readouterr()
    assert run("install", "--host", "cursor", "--check") == 0  # healthy, and says a reinstall would move it
    assert "wired by an earlier install" in capsys.readouterr().out
    assert run("install", "--host", "cursor") == 0
    assert json.loads(hooks.read_text()) == {
        "version": 1, "hooks": {"preToolUse": [{"command": expected_command(home / ".cursor"), "timeout": 10}]}}
    bundle = home / ".cursor" / "engramory"
    left = sorted(str(p.relative_to(bundle / "hooks")) for p in (bundle / "hooks").rglob("*"))
    assert "engramory_hook.py" in left and [p for p in left if "cursor" in p] == []
    manifest = json.loads((bundle / ".engramory-install.json").read_text())
    assert [f for f in manifest["files"] if f.startswith("hooks/")] == ["hooks/engramory_hook.py"]
    assert _denies(expected_command(home / ".cursor"), work)
    capsys.readouterr()
    assert run("install", "--host", "cursor", "--check") == 0
    assert "earlier install" not in capsys.readouterr().out


def test_uninstall_takes_out_an_old_install(home: Path) -> None:
    _old_install(home)
    assert run("uninstall", "--host", "cursor") == 0
    assert list(home.iterdir()) == []
