"""The installer steps every host shares (engramory.install.bundle, engramory.install.steps):
the manifest a first install records and a later one keeps, what uninstall does to a bundle
folder and what it leaves, the folders install made, the verbs' first line, the --scope usage
error, the refusal and write-failure reports, and the end of a --check."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pytest

from engramory import __version__
from engramory.install.bundle import (
    LINK_MANIFEST,
    MANIFEST,
    Place,
    SkillPlan,
    bundle_action,
    read_manifest,
    record_install,
    remove_made_dirs,
    runtime_files,
    source_root,
    take_out_bundle,
)
from engramory.install.settings import Change, SettingsError, WriteError
from engramory.install.steps import (
    apply_or_delete,
    finish_problems,
    header,
    interpreter,
    reinstall_step,
    run_verb,
    scope_of,
)


def plan(mode: str = "copy", files: tuple[str, ...] = ("engramory/a.py", "hooks/h.py")) -> SkillPlan:
    p = SkillPlan()
    p.mode = mode
    p.files = list(files)
    return p


def test_record_install_writes_the_first_record_and_keeps_it(tmp_path: Path) -> None:
    path = str(tmp_path / MANIFEST)
    first = {"created_file": True, "created": ["hooks"], "created_base": True}
    record_install(path, "qwen", plan(), "/s.json", first, None, ["hooks"])
    data = json.loads(Path(path).read_text())
    assert data == {"installer": "engramory", "host": "qwen", "version": __version__, "mode": "copy",
                    "files": ["engramory/a.py", "hooks/h.py"], "settings": {"/s.json": first}}
    assert Path(path).read_text() == json.dumps(data, indent=2, sort_keys=True) + "\n"

    # A later install: the file now exists and nothing was made, but the first record stays,
    # with the containers it had not recorded yet added.
    old = read_manifest(path)
    later = {"created_file": False, "created": [], "created_base": False}
    record_install(path, "qwen", plan(), "/s.json", later, old, ["hooks", "hooks/Stop"])
    assert read_manifest(path)["settings"]["/s.json"] == dict(first, created=["hooks", "hooks/Stop"])

    # created=None (a host that records no containers): the first record stays as it is.
    old = read_manifest(path)
    record_install(path, "qwen", plan(), "/s.json", later, old)
    assert read_manifest(path)["settings"]["/s.json"] == dict(first, created=["hooks", "hooks/Stop"])


def test_record_install_keeps_other_records_adds_extra_and_writes_nothing_for_a_no_op(tmp_path: Path) -> None:
    path = str(tmp_path / MANIFEST)
    old = {"installer": "engramory", "files": [], "settings": {"/other.json": {"created_file": False}}}
    record_install(path, "codex", plan("in-place"), "/s.json", {"created_file": True}, old,
                             extra={"trust": {"appended": "x"}})
    data = read_manifest(path)
    assert data is not None
    assert data["files"] == [] and data["mode"] == "in-place" and data["trust"] == {"appended": "x"}
    assert set(data["settings"]) == {"/other.json", "/s.json"}
    os.utime(path, (1, 1))
    record_install(path, "codex", plan("in-place"), "/s.json", {"created_file": False}, data,
                             extra={"trust": {"appended": "x"}})
    assert os.stat(path).st_mtime == 1  # the same manifest: not rewritten


def test_bundle_action_names_what_uninstall_does(tmp_path: Path) -> None:
    dest = tmp_path / "engramory"
    assert bundle_action(str(dest), None) == ""
    dest.mkdir()
    assert bundle_action(str(dest), None) == "foreign"
    assert bundle_action(str(dest), {"mode": "copy", "files": []}) == "remove"
    assert bundle_action(str(dest), {"mode": "in-place", "files": []}) == "manifest-only"
    link = tmp_path / "linked"
    link.symlink_to(dest)
    assert bundle_action(str(link), None) == "unlink"


def test_take_out_bundle_removes_ours_and_names_what_stays(tmp_path: Path) -> None:
    dest = tmp_path / "engramory"
    (dest / "hooks").mkdir(parents=True)
    (dest / "hooks" / "h.py").write_text("x")
    (dest / MANIFEST).write_text("{}")
    manifest = {"files": ["hooks/h.py"]}
    assert take_out_bundle(str(dest), "remove", manifest, "", "") == ""
    assert not dest.exists()

    (dest / "hooks").mkdir(parents=True)
    (dest / "hooks" / "h.py").write_text("x")
    (dest / "mine.txt").write_text("mine")
    line = take_out_bundle(str(dest), "remove", manifest, "", "")
    assert line == "  note: %s still holds files engramory did not install (mine.txt); left in place\n" % dest
    assert (dest / "mine.txt").read_text() == "mine" and not (dest / "hooks").exists()


def test_take_out_bundle_unlinks_a_link_and_its_manifest_and_drops_an_in_place_manifest(tmp_path: Path) -> None:
    source = tmp_path / "checkout"
    source.mkdir()
    (source / "SKILL.md").write_text("s")
    link, beside = tmp_path / "engramory", tmp_path / LINK_MANIFEST
    link.symlink_to(source)
    beside.write_text("{}")
    assert take_out_bundle(str(link), "unlink", None, str(beside), str(beside)) == ""
    assert not os.path.lexists(link) and not beside.exists() and (source / "SKILL.md").exists()

    inside = source / MANIFEST
    inside.write_text("{}")
    assert take_out_bundle(str(source), "manifest-only", {"files": []}, str(inside), "") == ""
    assert not inside.exists() and (source / "SKILL.md").exists()


def test_remove_made_dirs_removes_only_empty_folders(tmp_path: Path) -> None:
    empty, full = tmp_path / "a" / "b", tmp_path / "c"
    empty.mkdir(parents=True)
    full.mkdir()
    (full / "keep").write_text("k")
    remove_made_dirs([str(empty), str(empty.parent), str(full), str(tmp_path / "gone")])
    assert not (tmp_path / "a").exists() and (full / "keep").exists()


def test_place_puts_the_manifest_inside_or_beside_a_link(tmp_path: Path) -> None:
    class Target(Place):
        def __init__(self, skill_dir: str) -> None:
            self.skill_dir = skill_dir

    t = Target(str(tmp_path / "engramory"))
    assert t.manifest_path() == str(tmp_path / "engramory" / MANIFEST)
    (tmp_path / "real").mkdir()
    (tmp_path / "engramory").symlink_to(tmp_path / "real")
    assert t.manifest_path() == t.link_manifest == str(tmp_path / LINK_MANIFEST)


def test_runtime_files_keep_the_package_tools_and_the_named_hooks_only() -> None:
    files, missing = runtime_files(source_root(), ["engramory_qwen_hook.py"])
    assert missing == [] and "hooks/engramory_qwen_hook.py" in files and "engramory/guard.py" in files
    assert "tools/engramory_check.py" in files
    assert not [f for f in files if f.startswith("hooks/") and f != "hooks/engramory_qwen_hook.py"]
    assert "SKILL.md" not in files
    assert "SKILL.md" in runtime_files(source_root(), [], top=["SKILL.md"])[0]
    _, missing = runtime_files(source_root(), ["no_such_hook.py"])
    assert missing and "hooks/no_such_hook.py" in missing[0]


def test_header_names_the_verb_host_scope_and_dry_run() -> None:
    assert header("install", "qwen", "user", False) == "engramory install --host qwen (user scope)\n"
    assert header("uninstall", "x", "project", True) == (
        "engramory uninstall --host x (project scope, dry run: nothing is written)\n")
    assert header("install", "x", None, False) == "engramory install --host x\n"


def test_interpreter_refuses_a_relative_python(monkeypatch: pytest.MonkeyPatch) -> None:
    assert interpreter("/usr/bin/python3") == "/usr/bin/python3"
    monkeypatch.setattr("sys.executable", "")
    with pytest.raises(SettingsError, match="--host cursor"):
        interpreter(None, "cursor")
    with pytest.raises(SettingsError, match="absolute interpreter path"):
        interpreter("python3")


def test_scope_of_reports_a_scope_the_host_does_not_have(capsys: pytest.CaptureFixture[str]) -> None:
    scopes = (("user", "~/.x"), ("project", "./.x"))
    assert scope_of(argparse.Namespace(scope=None), "install", "X", scopes) == "user"
    assert scope_of(argparse.Namespace(scope="project"), "install", "X", scopes) == "project"
    assert scope_of(None, "uninstall", "X", scopes, "project") == "project"
    assert capsys.readouterr().err == ""
    assert scope_of(argparse.Namespace(scope="local"), "check", "X", scopes) is None
    assert capsys.readouterr().err == (
        "engramory install: --scope local is not a X scope; use --scope user (~/.x) or --scope project (./.x)\n")


def test_run_verb_reports_refusals_and_failed_writes(capsys: pytest.CaptureFixture[str]) -> None:
    def refuse() -> int:
        raise SettingsError("no")

    def half() -> int:
        raise WriteError("half")

    def disk() -> int:
        raise PermissionError(13, "Permission denied", "/x/y")

    assert run_verb("install", lambda: 0, "/base") == 0
    assert run_verb("install", refuse, "/base") == 1
    assert capsys.readouterr().err == "engramory install: no\nengramory install: nothing was changed.\n"
    assert run_verb("uninstall", half, "/base") == 1
    assert capsys.readouterr().err == "engramory uninstall: half\n"
    assert run_verb("install", disk, "/base") == 1
    assert capsys.readouterr().err == ("engramory install: could not write /x/y: Permission denied; check the "
                                       "permissions and free space, then run this again\n")


def test_apply_or_delete_deletes_a_created_file_unbacked_unless_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_bytes(b"{}")
    with pytest.raises(SettingsError, match="changed on disk"):
        apply_or_delete(Change(str(path), b"{ }", None))
    assert path.read_bytes() == b"{}"
    assert apply_or_delete(Change(str(path), b"{}", None)) is None
    assert not path.exists() and os.listdir(tmp_path) == []
    path.write_bytes(b"{}")
    saved = apply_or_delete(Change(str(path), b"{}", b'{"a": 1}'))
    assert saved is not None and Path(saved).read_bytes() == b"{}" and path.read_bytes() == b'{"a": 1}'


def test_finish_problems_ends_a_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert finish_problems([], "reinstall", "all good") == 0
    assert capsys.readouterr().out == "  healthy: all good\n"
    assert finish_problems(["a", "b"], "reinstall", "all good") == 1
    assert capsys.readouterr().out == "  problem: a\n  problem: b\n  next step: reinstall\n"
    assert reinstall_step("qwen", "user").endswith(" -m engramory install --host qwen --scope user` "
                                                           "from the engramory checkout")


def test_an_earlier_install_running_the_hosts_own_script_is_still_ours() -> None:
    from engramory.hosts.droid.install import SPEC as droid
    from engramory.hosts.qwen.install import SPEC as qwen
    from engramory.install import settingshooks as core

    old = ("/usr/bin/python3 -I -S -c 'import sys,os;p=sys.argv[1];...' "
           "'/home/u/.qwen/engramory/hooks/engramory_qwen_hook.py' PreToolUse || true")
    new = core.command("/usr/bin/python3", "/home/u/.qwen/engramory/hooks/engramory_hook.py", "qwen", "PreToolUse")
    assert core.is_ours_for(qwen)({"command": old}) and core.is_ours_for(qwen)({"command": new})
    assert not core.is_ours_for(droid)({"command": new})  # another host's generic entry is not
    assert core.runs_guard(new.replace("qwen", "copilot"), "copilot", "engramory_copilot_hook.py")
    assert not core.is_ours_for(qwen)({"command": new.replace(" qwen ", " qwenx ")})
    assert core.follow(old, "engramory_hook.py", "/nowhere")[1][0].endswith(
        "engramory_qwen_hook.py does not exist: the guard is off (tool calls go through unchecked)")


def test_follow_a_true_command_names_what_keeps_the_hook_from_running(tmp_path: Path) -> None:
    from engramory.install import settingshooks as core

    bundle = tmp_path / "engramory"
    script = bundle / "hooks" / "engramory_hook.py"
    cmd = core.command(sys.executable, str(script), "qwen", "PreToolUse")
    assert core.follow(cmd, "engramory_hook.py", str(bundle)) == (
        None, ["the script %s does not exist: the guard is off (tool calls go through unchecked)" % script])
    assert core.follow('"/no/python -I x.py || true', "x.py", str(bundle)) == (
        None, ["the interpreter (none) does not exist or cannot run: no hook runs"])  # unbalanced: not a traceback
    script.parent.mkdir(parents=True)
    script.write_text("")
    exe, problems = core.follow(cmd, "engramory_hook.py", str(bundle))
    assert exe == sys.executable and problems == ["%s holds no engramory bundle (no %s)" % (bundle, MANIFEST)]


@pytest.mark.parametrize("host", ["qwen", "droid", "copilot"])
def test_check_of_an_earlier_install_passes_and_says_a_reinstall_moves_it(host: str, tmp_path: Path) -> None:
    """An install from before the generic entry (its settings run hooks/engramory_<host>_hook.py,
    which its bundle copy still holds) still guards: --check passes it, and says so in a note."""
    import re
    import shutil
    import subprocess

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "COPILOT_"))}
    env.update(HOME=str(home), PYTHONPATH=str(source_root()))

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engramory", "install", "--host", host, "--scope", "project", *extra],
                              cwd=project, env=env, capture_output=True, text=True, timeout=120)

    assert run().returncode == 0
    settings = next(p for p in project.rglob("*.json") if "engramory" not in p.relative_to(project).parts)
    legacy = "engramory_%s_hook.py" % host
    text = settings.read_text(encoding="utf-8")
    older = re.sub(r'engramory_hook\.py\\" %s ' % host, lambda _: '%s\\" ' % legacy, text)
    assert older != text
    settings.write_text(older, encoding="utf-8")
    bundle_hooks = next(p for p in project.rglob("engramory_hook.py")).parent
    shutil.copy(Path(source_root()) / "hooks" / legacy, bundle_hooks / legacy)
    checked = run("--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "written by an earlier install: it runs hooks/%s" % legacy in checked.stdout
    assert "a reinstall moves it to hooks/engramory_hook.py %s" % host in checked.stdout
    assert run().returncode == 0 and legacy not in settings.read_text(encoding="utf-8")
    assert "earlier install" not in run("--check").stdout
