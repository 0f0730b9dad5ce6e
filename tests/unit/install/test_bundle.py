"""The installer core (engramory.installer, engramory.install.jsonedit): settings edits keep every
byte they do not need to change, files keep their mode (backups too), hook commands are
built and taken apart exactly, and nothing blocks on a FIFO."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory.install import jsonedit
from engramory.install.bundle import bundle_files, bundle_path, is_wheel_layout, missing_required
from engramory.install.hookcommands import LAUNCHER, hook_command, sh_quote, split_command
from engramory.install.settings import (
    BOM,
    MAX_SETTINGS,
    Change,
    JsonDoc,
    SettingsError,
    add_hook_groups,
    apply_change,
    remove_hooks,
)
from engramory.install.smoke import Report

HOOK = {"type": "command", "command": "python3 x.py", "timeout": 10}


def ours(h: Any) -> bool:
    return isinstance(h, dict) and h.get("command") == HOOK["command"]


def install_then_uninstall(raw: bytes, tmp_path: Path) -> tuple[bytes, bytes]:
    path = tmp_path / "settings.json"
    path.write_bytes(raw)
    doc = JsonDoc.load(str(path))
    new, created, _ = add_hook_groups(doc.data, [("PreToolUse", "Edit|Write", HOOK)], ours)
    after = doc.render(new)
    path.write_bytes(after)
    doc2 = JsonDoc.load(str(path))
    back, removed = remove_hooks(doc2.data, ours, created)
    assert removed == 1
    return after, doc2.render(back)


@pytest.mark.parametrize(
    "raw",
    [
        b'{\n  "limit": 1e400,\n  "tiny": 5e-324,\n  "neg": -0.0,\n  "big": 123456789012345678901234567890\n}\n',
        b'{"name": "caf\\u00e9 \\ud83d\\ude00", "lone": "\\ud800"}',
        b'\xef\xbb\xbf{\r\n    "model": "opus"\r\n}\r\n',
        b"{}",
        b'{\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}\n\t\t]\n\t}\n}',
        b'{"hooks": {}}',
        b'{"hooks": {"PreToolUse": []}, "z": [1.50, 2E+3]}',
    ],
)
def test_install_uninstall_keeps_bytes(raw: bytes, tmp_path: Path) -> None:
    after, back = install_then_uninstall(raw, tmp_path)
    assert back == raw
    # numbers as written, escapes kept, the host's strict parser still reads the file
    for token in (b"1e400", b"5e-324", b"\\u00e9", b"\\ud800", b"1.50", b"2E+3"):
        if token in raw:
            assert token in after
    strict_parse(after)


def strict_parse(raw: bytes) -> Any:
    """As strict as JSON.parse: no NaN/Infinity (Python's json accepts them by default)."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    body = raw[3:] if raw.startswith(BOM) else raw
    return json.loads(body.decode("utf-8"), parse_constant=refuse)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    data=st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), json_values, max_size=5),
    indent=st.sampled_from([None, 0, 2, 4, "\t"]),
    ascii_only=st.booleans(),
    crlf=st.booleans(),
)
def test_edit_roundtrip_property(data: dict[str, Any], indent: Any, ascii_only: bool, crlf: bool) -> None:
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    if crlf:
        text = text.replace("\n", "\r\n")
    tree = jsonedit.parse(text)
    assert jsonedit.canonical(tree.value) == jsonedit.canonical(data)
    new = dict(tree.value, hooks={"PreToolUse": [{"matcher": "Edit", "hooks": [HOOK]}]})
    edited = jsonedit.edit(text, new, tree=tree)
    assert jsonedit.canonical(jsonedit.parse(edited).value) == jsonedit.canonical(new)
    assert json.loads(edited) == json.loads(json.dumps(new))
    assert jsonedit.edit(edited, tree.value) == text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": NaN}', "line 1, column 7"),
        ('{"a": 1,}', "line 1, column 9"),
        ("// c\n{}", "line 1, column 1"),
        ('{"a": 01}', "line 1, column 8"),
        ('{"a": "\x01"}', "line 1, column 8"),
        ("[1] 2", "line 1, column 5"),
    ],
)
def test_strict_parse_refuses_what_json_parse_refuses(text: str, where: str) -> None:
    with pytest.raises(jsonedit.JsonError, match=where):
        jsonedit.parse(text)


def test_jsonc_comments_survive_an_edit() -> None:
    text = '{\n  // the model\n  "model": "x", /* keep */\n  "list": [1, 2,],\n}\n'
    tree = jsonedit.parse(text, comments=True)
    edited = jsonedit.edit(text, dict(tree.value, hooks={}), comments=True, tree=tree)
    assert "// the model" in edited and "/* keep */" in edited and "[1, 2,]" in edited
    assert jsonedit.canonical(jsonedit.parse(edited, comments=True).value) == jsonedit.canonical(dict(tree.value, hooks={}))


def test_duplicate_keys_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text('{"a": 1, "a": 2}')
    with pytest.raises(SettingsError, match="appears twice"):
        JsonDoc.load(str(p))


# -- modes --------------------------------------------------------------------------------


def test_change_keeps_mode_and_backup_mode(tmp_path: Path) -> None:
    p = tmp_path / "settings.json"
    p.write_bytes(b'{"token": "secret"}')
    os.chmod(p, 0o600)
    doc = JsonDoc.load(str(p))
    saved = apply_change(Change(str(p), doc.raw, doc.render(dict(doc.data, x=1))))
    assert saved is not None
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert Path(saved).read_bytes() == b'{"token": "secret"}'


def test_symlinked_settings_stay_a_link(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_bytes(b'{"a": 1}')
    os.chmod(real, 0o640)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    doc = JsonDoc.load(str(link))
    saved = apply_change(Change(str(link), doc.raw, doc.render({"a": 1, "b": 2})))
    assert link.is_symlink() and json.loads(real.read_bytes()) == {"a": 1, "b": 2}
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert saved is not None and Path(saved).parent == real.parent


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    with pytest.raises(SettingsError, match="not a regular file"):
        JsonDoc.load(str(fifo))
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_SETTINGS + 1)
    with pytest.raises(SettingsError, match="larger than"):
        JsonDoc.load(str(big))


# -- hook commands ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        "/home/u/.claude/skills/engramory/hooks/engramory_index_guard.py",
        "/tmp/a b/$HOME/`x`/\"q\"/back\\slash/it's/hooks/g.py",
        "/tmp/ünï cödé/hooks/g.py",
    ],
)
def test_hook_command_split_is_exact(script: str) -> None:
    command = hook_command(sys.executable, script)
    parsed = split_command(command, env={})
    assert parsed.interpreter == sys.executable and parsed.launcher and parsed.script == script
    assert parsed.variables == []
    # and sh agrees
    word = command.split(sh_quote(LAUNCHER) + " ", 1)[1]
    out = subprocess.run(["sh", "-c", "printf '%s\\n' " + word], capture_output=True, text=True)
    assert out.stdout.rstrip("\n") == script


def test_hook_command_relative_to_a_variable() -> None:
    command = hook_command("python3", ".claude/skills/engramory/hooks/g.py", base_var="CLAUDE_PROJECT_DIR")
    assert '"${CLAUDE_PROJECT_DIR}/.claude/skills/engramory/hooks/g.py"' in command
    parsed = split_command(command, env={"CLAUDE_PROJECT_DIR": "/p/my $proj"})
    assert parsed.script == "/p/my $proj/.claude/skills/engramory/hooks/g.py"
    assert parsed.variables == ["CLAUDE_PROJECT_DIR"] and parsed.unset == []
    assert split_command(command, env={}).unset == ["CLAUDE_PROJECT_DIR"]


@pytest.mark.parametrize("command", ["a | b", "a; b", "echo $(x)", "a `b`", "'unbalanced"])
def test_split_command_refuses_what_it_cannot_follow(command: str) -> None:
    with pytest.raises(ValueError):
        split_command(command, env={})


def test_launcher_turns_a_missing_script_into_exit_1(tmp_path: Path) -> None:
    command = hook_command(sys.executable, str(tmp_path / "gone" / "hook.py"))
    proc = subprocess.run(["sh", "-c", command], input=b"{}", capture_output=True)
    assert proc.returncode == 1  # never 2: Claude-style hosts read 2 as "deny"


# -- the bundle ---------------------------------------------------------------------------


def test_bundle_files_name_missing_required(tmp_path: Path) -> None:
    (tmp_path / "engramory").mkdir()
    (tmp_path / "engramory" / "__init__.py").write_text("")
    files, notes = bundle_files(str(tmp_path), required=["hooks/engramory_index_guard.py"])
    assert "engramory/__init__.py" in files
    assert missing_required(notes) == [
        "hooks/engramory_index_guard.py is missing from %s: the hook that runs it could not run" % tmp_path
    ]


def test_wheel_layout_maps_package_files(tmp_path: Path) -> None:
    pkg = tmp_path / "site" / "engramory"
    (pkg / "_bundle" / "hooks").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_bundle" / "hooks" / "h.py").write_text("")
    (pkg / "_bundle" / "SKILL.md").write_text("x")
    root = str(pkg / "_bundle")
    assert is_wheel_layout(root)
    files, _ = bundle_files(root)
    assert sorted(files) == ["SKILL.md", "engramory/__init__.py", "hooks/h.py"]
    assert bundle_path(root, "engramory/__init__.py") == str(pkg / "__init__.py")
    assert bundle_path(root, "hooks/h.py") == str(pkg / "_bundle" / "hooks" / "h.py")


def test_report_exit_status() -> None:
    lines: list[str] = []
    r = Report("title")
    r.ok("fine")
    assert r.finish("all good", lines.append) == 0
    r.problem("the guard is off", "do this")
    lines.clear()
    assert r.finish("all good", lines.append) == 1
    assert "  problem: the guard is off\n    fix: do this\n" in lines
