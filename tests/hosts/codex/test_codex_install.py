"""install_codex in process: the trust records in config.toml (edited as text, the user's bytes
kept), the hooks.json entries, uninstall giving back the exact bytes, and --check."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engramory.hosts.codex import install as install_codex
from engramory.install.settings import SettingsError


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> install_codex.Target:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "codex").mkdir()
    (tmp_path / "work").mkdir()
    return install_codex.Target("user", cwd=str(tmp_path / "work"))


def _install(target: install_codex.Target, python: str = sys.executable) -> None:
    assert install_codex.install_to(target, interpreter=python) == 0


def _tables(text: str) -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib")
    state = tomllib.loads(text).get("hooks", {}).get("state", {})
    return {k: v["trusted_hash"] for k, v in state.items()}


CONFIGS = [
    b"",
    b"model = \"gpt-5.5\"",  # no final newline
    b"# comment\r\nmodel = \"x\"\r\n\r\n[tui]\r\nnotifications = true\r\n",  # CRLF
    b"[hooks]\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"true\"\n",
    b"[hooks.state.\"/elsewhere/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
    "name = \"caf\u00e9\"\n".encode(),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_install_adds_exactly_our_trust_records_and_uninstall_restores_bytes(
    target: install_codex.Target, config: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(target.config)
    path.write_bytes(config)
    _install(target)
    text = path.read_bytes().decode("utf-8")
    assert text.startswith(config.decode())
    data = json.loads(Path(target.settings).read_text())
    entries = install_codex.trust_entries(target.trust_file, data)
    assert len(entries) == 3
    tables = _tables(text)
    for _, key, digest in entries:
        assert tables[key] == digest
    _install(target)  # a second install changes nothing
    assert path.read_bytes().decode("utf-8") == text
    assert install_codex.uninstall_from(target) == 0
    assert path.read_bytes() == config
    assert not Path(target.settings).exists()


def test_no_config_before_means_none_after(target: install_codex.Target) -> None:
    _install(target)
    assert Path(target.config).exists()
    install_codex.uninstall_from(target)
    assert not Path(target.config).exists()


def test_reinstall_with_another_interpreter_replaces_the_block(target: install_codex.Target, tmp_path: Path) -> None:
    Path(target.config).write_bytes(b"model = \"x\"\n")
    _install(target)
    other = tmp_path / "py"
    other.symlink_to(sys.executable)
    _install(target, str(other))
    text = Path(target.config).read_text()
    assert text.count(install_codex.BLOCK_HEAD) == 1
    data = json.loads(Path(target.settings).read_text())
    assert all(d in text for _, _, d in install_codex.trust_entries(target.trust_file, data))
    install_codex.uninstall_from(target)
    assert Path(target.config).read_bytes() == b"model = \"x\"\n"


def test_uninstall_without_the_manifest_still_takes_the_block_out(target: install_codex.Target) -> None:
    import shutil

    Path(target.config).write_bytes(b"model = \"x\"\n")
    _install(target)
    shutil.rmtree(target.skill_dir)  # the bundle (and its manifest) deleted by hand
    install_codex.uninstall_from(target)
    assert Path(target.config).read_bytes() == b"model = \"x\"\n"


@pytest.mark.parametrize("config", [
    b"hooks = { state = {} }\n",
    b"[hooks]\nstate = { }\n",
    b"hooks.state = {}\n",
])
def test_inline_hooks_are_refused_untouched(target: install_codex.Target, config: bytes) -> None:
    Path(target.config).write_bytes(config)
    with pytest.raises(SettingsError, match="inline"):
        install_codex.install_to(target, interpreter=sys.executable)
    assert Path(target.config).read_bytes() == config
    assert not Path(target.settings).exists()


def test_a_foreign_trust_record_for_our_key_is_refused(target: install_codex.Target) -> None:
    key = "%s:pre_tool_use:0:0" % target.trust_file
    config = ('[hooks.state."%s"]\ntrusted_hash = "sha256:abc"\n' % key).encode()
    Path(target.config).write_bytes(config)
    with pytest.raises(SettingsError):
        install_codex.install_to(target, interpreter=sys.executable)
    assert Path(target.config).read_bytes() == config


def test_not_utf8_config_is_refused(target: install_codex.Target) -> None:
    Path(target.config).write_bytes(b"model = \"\xff\"\n")
    with pytest.raises(SettingsError, match="UTF-8"):
        install_codex.install_to(target, interpreter=sys.executable)


def test_foreign_hooks_are_kept_and_come_back_byte_for_byte(target: install_codex.Target) -> None:
    hooks = b'{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}]}}\n'
    Path(target.settings).write_bytes(hooks)
    _install(target)
    data = json.loads(Path(target.settings).read_text())
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "mine"
    keys = [k for _, k, _ in install_codex.trust_entries(target.trust_file, data)]
    assert "%s:pre_tool_use:1:0" % target.trust_file in keys  # our group comes after the user's
    install_codex.uninstall_from(target)
    assert Path(target.settings).read_bytes() == hooks


def test_trust_hash_matches_the_value_codex_computed() -> None:
    # currentHash that `codex app-server` hooks/list reported on 0.171.0 for this hook
    item = {"type": "command", "command": "python3 /abs/guard.py", "timeout": 30}
    digest = install_codex.trust_hash("PreToolUse", "apply_patch|Bash", item)
    assert digest == "sha256:ce6b73a0777014f4b72581a0f4970d35493c37e21a0a6928b120dc83518c6e84"
    assert install_codex.trust_hash("SessionStart", None, {"type": "command", "command": "x"}) == (
        "sha256:c9eb9044e230d9483968744da9be0fd56b4b2e8581433bca61135f5e0008ebb8"  # default timeout 600
    )
    assert digest != install_codex.trust_hash("PreToolUse", None, item)
    assert digest != install_codex.trust_hash("PreToolUse", "apply_patch|Bash", dict(item, timeout=31))
    assert install_codex.trust_hash("SessionStart", None, {"type": "command", "command": "x"}) == \
        install_codex.trust_hash("SessionStart", None, {"type": "command", "command": "x", "timeout": 600})


def test_check_reports_untrusted_and_changed(target: install_codex.Target, capsys: pytest.CaptureFixture[str]) -> None:
    _install(target)
    assert install_codex.run_check(target) == 0
    capsys.readouterr()
    Path(target.config).write_text("")
    assert install_codex.run_check(target) == 1
    assert "is not trusted" in capsys.readouterr().out
    _install(target)
    data = json.loads(Path(target.settings).read_text())
    data["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 5
    Path(target.settings).write_text(json.dumps(data))
    assert install_codex.run_check(target) == 1
    assert "SessionStart (engramory_hook.py) changed since it was trusted" in capsys.readouterr().out


def test_project_scope_says_what_to_do_when_the_project_is_untrusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / "proj").mkdir()
    target = install_codex.Target("project", cwd=str(tmp_path / "proj"))
    assert install_codex.install_to(target, interpreter=sys.executable) == 0
    out = capsys.readouterr().out
    assert "action needed" in out and "codex exec --trust" in out
    assert Path(target.settings) == tmp_path / "proj" / ".codex" / "hooks.json"
    assert str(target.settings) in Path(target.config).read_text()  # trust lives in the user's config
    install_codex.uninstall_from(target)
    assert not (tmp_path / "proj" / ".codex").exists()


# -- an install written before the generic entry (issue 20) -----------------------------------

# What `install --host codex` wrote for each event before it wired hooks/engramory_hook.py: the
# shared launcher and the event's own script (kept byte for byte from that installer's output).
OLD_LAUNCHER = "import sys;p=sys.argv[1].replace(chr(92),'/');d,_,f=p.rpartition('/');sys.path.insert(0,d or '.');__import__(f[:-3])"
OLD_COMMAND = '{python} -I -S -c "%s" "{bundle}/hooks/{script}"' % OLD_LAUNCHER
OLD_HOOKS = [("PreToolUse", "apply_patch|Bash", "engramory_codex_guard.py"),
             ("PostToolUse", "Bash", "engramory_codex_post_tool.py"),
             ("SessionStart", None, "engramory_codex_session_start.py")]
ROOT = Path(__file__).resolve().parents[3]


def _old_install(target: install_codex.Target) -> None:
    """Turn a fresh install into the one the earlier installer left: its hooks.json, its trust
    block for those commands, its bundle's hooks/ (the three scripts, no generic entry) and the
    manifest listing them."""
    _install(target)
    bundle = Path(target.bundle_dir)
    hooks_dir = bundle / "hooks"
    shutil.rmtree(hooks_dir)
    hooks_dir.mkdir()
    for _, _, script in OLD_HOOKS:
        shutil.copy(ROOT / "hooks" / script, hooks_dir / script)
    data: dict[str, object] = {"hooks": {}}
    for event, matcher, script in OLD_HOOKS:
        group: dict[str, object] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "timeout": 10, "command": OLD_COMMAND.format(
            python=sys.executable, bundle=target.bundle_dir, script=script)}]
        data["hooks"][event] = [group]  # type: ignore[index]
    Path(target.settings).write_text(json.dumps(data, indent=2) + "\n")
    manifest_path = bundle / ".engramory-install.json"
    manifest = json.loads(manifest_path.read_text())
    block = install_codex.trust_block(install_codex.trust_entries(target.trust_file, data))
    config = Path(target.config)
    config.write_text(config.read_text().replace(manifest["trust"]["appended"], block))
    manifest["trust"]["appended"] = block
    manifest["files"] = [f for f in manifest["files"] if not f.startswith("hooks/")] + [
        "hooks/" + s for _, _, s in OLD_HOOKS]
    manifest_path.write_text(json.dumps(manifest))


def _denies(command: str, work: Path) -> bool:
    (work / "MEMORY.md").write_text("".join("- [n%d](n%d.md) note\n" % (i, i) for i in range(200)))
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+- [x](x.md) one more\n*** End Patch\n"
    payload = {"session_id": "s", "hook_event_name": "PreToolUse", "cwd": str(work), "tool_name": "apply_patch",
               "tool_input": {"command": patch}, "tool_use_id": "call_1"}
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          cwd=str(work), timeout=60)
    out = json.loads(proc.stdout or b"{}").get("hookSpecificOutput", {})
    return proc.returncode == 0 and out.get("permissionDecision") == "deny"


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(
    target: install_codex.Target, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _old_install(target)
    old = json.loads(Path(target.settings).read_text())
    assert _denies(old["hooks"]["PreToolUse"][0]["hooks"][0]["command"], tmp_path / "work")
    capsys.readouterr()
    assert install_codex.run_check(target) == 0  # healthy, and says a reinstall would move it
    out = capsys.readouterr().out
    assert out.count("wired by an earlier install") == 3 and "problem" not in out
    _install(target)
    data = json.loads(Path(target.settings).read_text())
    commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert len(commands) == 3
    for (event, _, _), command in zip(OLD_HOOKS, commands):
        assert command.endswith('/hooks/engramory_hook.py" codex %s' % event)
    assert "codex_" not in Path(target.settings).read_text()
    hooks_dir = Path(target.bundle_dir) / "hooks"
    left = sorted(str(p.relative_to(hooks_dir)) for p in hooks_dir.rglob("*"))
    assert [p for p in left if "codex" in p] == []
    assert "engramory_hook.py" in left
    manifest = json.loads((Path(target.bundle_dir) / ".engramory-install.json").read_text())
    assert [f for f in manifest["files"] if f.startswith("hooks/")] == ["hooks/engramory_hook.py"]
    tables = _tables(Path(target.config).read_text())
    assert sorted(tables.items()) == sorted((k, d) for _, k, d in install_codex.trust_entries(target.trust_file, data))
    assert _denies(commands[0], tmp_path / "work")
    capsys.readouterr()
    assert install_codex.run_check(target) == 0
    assert "earlier install" not in capsys.readouterr().out
    assert install_codex.uninstall_from(target) == 0
    assert not Path(target.settings).exists() and not Path(target.bundle_dir).exists()


def test_uninstall_takes_out_an_old_install(target: install_codex.Target) -> None:
    _old_install(target)
    assert install_codex.uninstall_from(target) == 0
    assert not Path(target.settings).exists() and not Path(target.bundle_dir).exists()
    assert "hooks.state" not in (Path(target.config).read_text() if Path(target.config).exists() else "")
