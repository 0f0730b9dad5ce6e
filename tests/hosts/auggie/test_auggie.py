"""Auggie, from Augment's hooks docs (not runnable here: it needs Augment's backend): the guard
on Claude-style payloads of its `save-file` and `str-replace-editor` tools (numbered entries,
paths relative to the workspace), a deny by exit 2 with the reason on stderr, and its installer
(~/.augment/settings.json or .augment/settings.json, byte-exact uninstall)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import contract  # noqa: E402
import pytest
from contract import lines  # noqa: E402

from engramory.hosts import auggie, claudelike  # noqa: E402


def write(path: str, cwd: str, before: str, after: str) -> Dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "conversation_id": "c", "cwd": cwd, "tool_name": "save-file",
            "tool_input": {"path": path, "file_content": after}}


def settings(scope: str, home: Path, proj: Path) -> Path:
    return (home if scope == "user" else proj) / ".augment" / "settings.json"


def bundle(scope: str, home: Path, proj: Path) -> Path:
    return settings(scope, home, proj).parent / "engramory"


CASE = contract.Case("auggie", "exit", write, "PreToolUse", settings, bundle)


def test_a_growing_write_is_denied_by_exit_2_with_the_reason_on_stderr(tmp_path: Path) -> None:
    contract.check_growing_write_denied(CASE, tmp_path)


def test_a_shrinking_write_passes_in_silence(tmp_path: Path) -> None:
    contract.check_shrink_passes_in_silence(CASE, tmp_path)


def test_an_unrelated_file_is_left_alone(tmp_path: Path) -> None:
    contract.check_unrelated_file_silent(CASE, tmp_path)


def test_broken_payloads_fail_open(tmp_path: Path) -> None:
    contract.check_broken_payloads_fail_open(CASE, tmp_path)


FIRST = "- [n0](n0.md) - note 0\n"


def _edit(tmp: Path, text: str, tool_input: Dict[str, Any], env: Dict[str, str] | None = None) -> tuple[str, str, int]:
    (tmp / "MEMORY.md").write_text(text)
    raw = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "str-replace-editor",
                      "tool_input": dict({"path": "MEMORY.md"}, **tool_input)})
    return auggie.respond(raw.encode(), env or {"HOME": str(tmp)})


def test_str_replace_entries_relative_to_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUGMENT_PROJECT_DIR", str(tmp_path))
    entries = {"command": "str_replace", "old_str_1": FIRST, "new_str_1": FIRST + lines(20, "a"),
               "old_str_start_line_number_1": 1, "old_str_end_line_number_1": 1,
               "old_str_2": "- [n9](n9.md) - note 9\n", "new_str_2": lines(20, "b")}
    out, err, code = _edit(tmp_path, lines(200), entries)
    assert (out, code) == ("", 2) and "239 lines" in err
    shrink = {"command": "str_replace", "old_str_1": FIRST, "new_str_1": ""}
    assert _edit(tmp_path, lines(230), shrink) == ("", "", 0)
    insert = {"command": "insert", "insert_line_1": 3, "new_str_1": lines(5, "c")}
    out, err, code = _edit(tmp_path, lines(200), insert)
    assert code == 2 and "by the text it adds" in err
    assert _edit(tmp_path, lines(230), {"command": "view"}) == ("", "", 0)


def test_the_edit_model() -> None:
    assert auggie.predict("write", None, {"file_content": "a"}) == b"a\n"
    assert auggie.predict("write", None, {"file_content": "a", "add_last_line_newline": False}) == b"a"
    assert auggie.predict("edit", b"x y\n", {"command": "str_replace", "old_str_1": "x", "new_str_1": "z"}) == b"z y\n"
    unknown = auggie.predict("edit", b"x\n", {"command": "str_replace", "old_str_1": "q", "new_str_1": "r\n"})
    assert isinstance(unknown, claudelike.Unknown) and unknown.added == "r\n"


@pytest.mark.parametrize("scope, existing", [
    ("user", None),
    ("user", b'{\n    "model": "x",\n    "hooks": {"PreToolUse": [{"matcher": "launch-process", "hooks": '
             b'[{"type": "command", "command": "/etc/augment/hooks/v.sh", "timeout": 5000}]}]}\n}\n'),
    ("project", None),
])
def test_install_check_uninstall_gives_the_bytes_back(tmp_path: Path, scope: str, existing: bytes | None) -> None:
    contract.check_install_round_trip(CASE, tmp_path, scope, existing)


def test_the_installed_group_is_claude_shaped(tmp_path: Path) -> None:
    assert contract.engramory(tmp_path, "install", "--host", "auggie").returncode == 0
    data = json.loads(settings("user", tmp_path / "home", tmp_path / "proj").read_text())
    (group,) = data["hooks"]["PreToolUse"]
    assert group["matcher"] == "str-replace-editor|save-file" and group["hooks"][0]["timeout"] == 10_000
    assert group["hooks"][0]["command"].endswith("engramory_hook.py\" auggie PreToolUse")


def test_check_fails_on_a_deleted_script_or_removed_wiring(tmp_path: Path) -> None:
    def unwire(path: Path) -> None:
        data = json.loads(path.read_text())
        data["hooks"]["PreToolUse"][0]["matcher"] = "launch-process"
        path.write_text(json.dumps(data))

    contract.check_check_fails_when_broken(CASE, tmp_path, unwire)


def auggie_argv(command: str) -> List[str]:
    """The argv Auggie 0.36.0 spawns a hook command as, on Linux and macOS (its npm bundle,
    `augment.mjs`: `spawn(command, args, {shell: false})` after this rewrite): a command that
    starts with `~` or holds one of ``| & ; > < $ ` `` runs as `bash -c <command>`; any other
    holding a space is split on blanks, a "..." or '...' span kept whole, its quotes dropped
    and nothing unescaped; a bare word runs as is. The `.sh` the docs ask for is not required
    there (only on Windows does the extension pick bash.exe, powershell or cmd)."""
    if command.startswith("~") or any(c in command for c in "|&;><$`"):
        return ["bash", "-c", command]
    if " " not in command:
        return [command]
    out: List[str] = []
    for m in re.finditer(r'"([^"]*(?:\\.[^"]*)*)"|\'([^\']*(?:\\.[^\']*)*)\'|(\S+)', command):
        out.append(next(g for g in m.groups() if g is not None))
    return out


def test_auggie_runs_the_installed_command_through_bash_and_it_denies(tmp_path: Path) -> None:
    """The installed command holds `;` (the launcher's Python), so Auggie runs it as
    `bash -c`, as sh would; spawned that way it denies a growing save-file with exit 2. No
    `.sh` wrapper is needed (bash must be on PATH, as it is wherever Auggie's own examples run)."""
    assert auggie_argv("/etc/augment/hooks/v.sh") == ["/etc/augment/hooks/v.sh"]
    assert auggie_argv('python3 "/a b/h.py" x') == ["python3", "/a b/h.py", "x"]
    assert contract.engramory(tmp_path, "install", "--host", "auggie").returncode == 0
    home, proj = tmp_path / "home", tmp_path / "proj"
    (group,) = json.loads(settings("user", home, proj).read_text())["hooks"]["PreToolUse"]
    argv = auggie_argv(group["hooks"][0]["command"])
    assert argv[:2] == ["bash", "-c"], argv
    index = proj / "MEMORY.md"
    index.write_text(lines(200))
    payload = json.dumps(write(str(index), str(proj), lines(200), lines(240))).encode()
    proc = subprocess.run(argv, input=payload, capture_output=True, cwd=str(proj), env=contract.env_for(home),
                          timeout=60)
    assert contract.is_deny(CASE, proc), (proc.returncode, proc.stdout, proc.stderr)
    assert "240" in proc.stderr.decode()
