"""engramory installed into the real Codex CLI 0.171.0 (offline, scripted model): the guard
denies over-cap growth through every edit route and the model is told why, with numbers;
shrinking edits pass; the backstop notices reach the model; install/uninstall give back the
user's config byte for byte; and the fail-mode traps leave Codex usable and show in --check."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import codex_driver
import pytest
from codex_model import patch_call, shell_call

from engramory.hosts.codex import install as install_codex

pytestmark = pytest.mark.e2e

BLOCKED = "Command blocked by PreToolUse hook: engramory blocked this"


def _index(lines: int) -> bytes:
    return "".join("- [Note %d](note-%d.md) one fact\n" % (i, i) for i in range(lines)).encode()


def _install(home: codex_driver.Home, *extra: str, python: str | None = None) -> str:
    proc = codex_driver.engramory(home, "install", "--host", "codex", *extra, python=python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _check(home: codex_driver.Home, *extra: str) -> tuple[int, str]:
    proc = codex_driver.engramory(home, "install", "--host", "codex", "--check", *extra)
    return proc.returncode, proc.stdout + proc.stderr


def _store(home: codex_driver.Home, lines: int) -> Path:
    store = home.work / "memory"
    store.mkdir(exist_ok=True)
    index = store / "MEMORY.md"
    index.write_bytes(_index(lines))
    return index


def test_install_makes_codex_trust_and_run_every_hook(home: codex_driver.Home) -> None:
    out = _install(home)
    assert "3 hooks marked trusted" in out
    listed = {h["key"]: h for h in codex_driver.hooks_list(home)}
    hooks_file = str(home.codex_home / "hooks.json")
    data = json.loads((home.codex_home / "hooks.json").read_text())
    ours = install_codex.trust_entries(hooks_file, data)
    assert len(ours) == 3
    for _event, key, digest in ours:
        assert listed[key]["trustStatus"] == "trusted", listed[key]
        assert listed[key]["currentHash"] == digest
    code, text = _check(home)
    assert code == 0, text
    assert "healthy: all 3 hooks are wired, trusted and run" in text


def test_over_cap_growth_denied_through_every_route(home: codex_driver.Home) -> None:
    _install(home)
    index = _store(home, 200)
    before = index.read_bytes()
    source = home.work / "memory" / "draft.md"
    source.write_bytes(_index(230))
    grown = "".join("+- [Note %d](note-%d.md) one fact\n" % (i, i) for i in range(205))
    steps = [
        [patch_call("*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n+- [New](new.md) one more\n*** End Patch\n")],
        [patch_call("*** Begin Patch\n*** Add File: memory/MEMORY.md\n%s*** End Patch\n" % grown)],
        [patch_call("*** Begin Patch\n*** Update File: memory/draft.md\n*** Move to: memory/MEMORY.md\n@@\n+- [Moved](m.md) x\n*** End Patch\n")],
        [shell_call("cd memory && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+- [Shell](s.md) via heredoc\n*** End Patch\nEOF\n")],
        [shell_call("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+- [Wd](w.md) in workdir\n*** End Patch\nEOF\n",
                    workdir=str(home.work / "memory"))],
    ]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes() == before, "an over-cap edit got through"
    assert source.exists()
    outputs = result.tool_outputs()
    assert len(outputs) == 5
    expected = [
        "would grow from 200 to 201 lines (hard cap 200: 1 over)",
        "would grow from 200 to 205 lines (hard cap 200: 5 over)",
        "would grow from 200 to 231 lines (hard cap 200: 31 over)",
        "would grow from 200 to 201 lines (hard cap 200: 1 over)",
        "would grow from 200 to 201 lines (hard cap 200: 1 over)",
    ]
    for n, (output, numbers) in enumerate(zip(outputs, expected)):
        assert output.startswith(BLOCKED), output[:300]
        assert numbers in output, output[:400]
        # Codex puts ". Command: <command>" after the reason: one period, not two (render_deny)
        assert ". Command: " in output and ".. Command: " not in output, output[-400:]
        # the reason is in the very next request the model gets
        assert numbers in json.dumps(result.requests[n + 1]["input"])
    assert "apply_patch (through the shell)" in outputs[3]


def test_shrinking_an_over_cap_index_is_allowed_with_a_nudge(home: codex_driver.Home) -> None:
    _install(home)
    index = _store(home, 210)
    drop = "".join("-- [Note %d](note-%d.md) one fact\n" % (i, i) for i in range(3))
    steps = [[patch_call("*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n%s*** End Patch\n" % drop)]]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes() == _index(210)[len(b"".join(_index(3).splitlines(keepends=True))):]
    assert index.read_bytes().count(b"\n") == 207
    assert "Success" in result.tool_outputs()[0]
    nudge = "still over its hard cap after this edit: 207 lines (cap 200)"
    assert nudge in json.dumps(result.requests[1]["input"])


def test_session_start_and_post_tool_notices_reach_the_model(home: codex_driver.Home) -> None:
    _install(home)
    (home.work / "AGENTS.md").write_text(
        "## Memory\n- Memory lives in memory/. Its index is memory/MEMORY.md; read it first.\n", encoding="utf-8"
    )
    index = _store(home, 205)
    # a shell write engramory does not predict (sed -i), so the pre-tool hook lets it through and
    # only the after-tool notice can tell the model; a printf or echo append is judged before it
    # runs and refused past the cap (test_codex_shellwrite.py)
    steps = [
        [shell_call("sed -i '$a - [Late](late.md) appended by the shell' memory/MEMORY.md")],
    ]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes().count(b"\n") == 206
    first = json.dumps(result.requests[0]["input"])
    assert "engramory:" in first and str(index) in first and "205 lines" in first, "no SessionStart notice"
    second = json.dumps(result.requests[1]["input"])
    assert "206 lines" in second, "no PostToolUse notice after the shell grew the index"


def test_codex_managed_memories_are_left_to_codex(home: codex_driver.Home) -> None:
    _install(home)
    memories = home.codex_home / "memories"
    memories.mkdir()
    index = memories / "MEMORY.md"
    index.write_bytes(_index(300))
    steps = [[patch_call("*** Begin Patch\n*** Update File: %s\n@@\n+- [Codex](c.md) its own\n*** End Patch\n" % index)]]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes().count(b"\n") == 301
    assert "Success" in result.tool_outputs()[0]


def test_install_then_uninstall_leaves_codex_config_as_it_was(home: codex_driver.Home) -> None:
    config = (
        b"# my settings\r\nmodel_reasoning_effort = \"high\"\r\n\r\n[tui]\r\nnotifications = true  # keep\r\n"
        b"[projects.\"/somewhere\"]\r\ntrust_level = \"trusted\""
    )
    hooks = b'{\n    "hooks": {\n        "SessionStart": [ { "hooks": [ { "type": "command", "command": "true" } ] } ]\n    }\n}'
    home.config.write_bytes(config)
    (home.codex_home / "hooks.json").write_bytes(hooks)
    _install(home)
    assert home.config.read_bytes() != config
    index = _store(home, 200)
    result = codex_driver.run(home, [[patch_call(
        "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n+- [New](new.md) x\n*** End Patch\n")]])
    assert result.tool_outputs()[0].startswith(BLOCKED)
    assert index.read_bytes() == _index(200)
    proc = codex_driver.engramory(home, "uninstall", "--host", "codex")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert home.config.read_bytes() == config
    assert (home.codex_home / "hooks.json").read_bytes() == hooks
    assert not (home.codex_home / "skills" / "engramory").exists()


def test_install_into_a_fresh_home_and_out_leaves_nothing(home: codex_driver.Home) -> None:
    before = sorted(p.name for p in home.codex_home.iterdir())
    _install(home)
    proc = codex_driver.engramory(home, "uninstall", "--host", "codex")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = sorted(p.name for p in home.codex_home.iterdir() if ".engramory-backup-" not in p.name)
    assert after == before


def test_project_scope_runs_once_the_project_is_trusted(home: codex_driver.Home) -> None:
    out = _install(home, "--scope", "project")
    assert "action needed" in out and "codex exec --trust" in out
    code, text = _check(home, "--scope", "project")
    assert code == 1 and "the project is not trusted" in text
    index = _store(home, 200)
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n+- [New](new.md) x\n*** End Patch\n"
    result = codex_driver.run(home, [[patch_call(patch)]])
    assert "Success" in result.tool_outputs()[0]  # untrusted project: its hooks do not load
    index.write_bytes(_index(200))
    installed = home.config.read_bytes()
    # what install told the user to do: Codex itself records the project's trust
    result = codex_driver.run(home, [[patch_call(patch)]], extra_args=["--trust"])
    assert result.tool_outputs()[0].startswith(BLOCKED)
    assert index.read_bytes() == _index(200)
    assert home.config.read_bytes().startswith(installed)  # Codex kept engramory's block as written
    code, text = _check(home, "--scope", "project")
    assert code == 0, text
    result = codex_driver.run(home, [[patch_call(patch)]])
    assert result.tool_outputs()[0].startswith(BLOCKED)
    proc = codex_driver.engramory(home, "uninstall", "--host", "codex", "--scope", "project")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    left = home.config.read_text(encoding="utf-8")
    assert "hooks.state" not in left and "engramory" not in left
    assert 'trust_level = "trusted"' in left  # the user's own trust decision stays


def test_check_reports_a_changed_hook_as_not_running(home: codex_driver.Home) -> None:
    _install(home)
    path = home.codex_home / "hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 11
    path.write_text(json.dumps(data, indent=2))
    listed = {h["key"]: h["trustStatus"] for h in codex_driver.hooks_list(home)}
    assert listed["%s:pre_tool_use:0:0" % path] == "modified"
    code, text = _check(home)
    assert code == 1 and "PreToolUse (engramory_hook.py) changed since it was trusted" in text
    index = _store(home, 200)
    result = codex_driver.run(home, [[patch_call(
        "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n+- [New](new.md) x\n*** End Patch\n")]])
    assert "Success" in result.tool_outputs()[0]  # Codex skipped the changed hook, silently
    assert index.read_bytes().count(b"\n") == 201


# -- fail-mode traps: Codex stays usable, --check says what is wrong ----------------------------


def _ordinary_edit(home: codex_driver.Home, shell: bool = True) -> codex_driver.Result:
    (home.work / "notes.md").write_bytes(b"a\n")
    steps = [[patch_call("*** Begin Patch\n*** Update File: notes.md\n@@\n a\n+b\n*** End Patch\n")]]
    if shell:
        steps.append([shell_call("echo hello")])
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (home.work / "notes.md").read_bytes() == b"a\nb\n", result.tool_outputs()
    if shell:
        assert "hello" in result.tool_outputs()[1]
    assert not any("blocked" in o for o in result.tool_outputs())
    return result


def test_deleted_bundle_leaves_codex_usable_and_check_says_so(home: codex_driver.Home) -> None:
    _install(home)
    shutil.rmtree(home.codex_home / "skills" / "engramory")
    _ordinary_edit(home)
    code, text = _check(home)
    assert code == 1
    assert re.search(r"the script \S+engramory_hook\.py does not exist", text), text


def test_broken_interpreter_leaves_codex_usable_and_check_says_so(home: codex_driver.Home, tmp_path: Path) -> None:
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    os.symlink(os.path.realpath(sys.executable), python)
    _install(home, python=str(python))
    assert str(python) in (home.codex_home / "hooks.json").read_text()
    python.unlink()
    _ordinary_edit(home)
    code, text = _check(home)
    assert code == 1
    assert "the interpreter %s does not exist or cannot run" % python in text


def test_hook_timeout_leaves_codex_usable_and_check_says_so(home: codex_driver.Home) -> None:
    _install(home)
    guard = home.codex_home / "skills" / "engramory" / "hooks" / "engramory_hook.py"
    guard.write_text("import time\ntime.sleep(15)\n", encoding="utf-8")  # a hook that outruns 10 s
    _ordinary_edit(home, shell=False)
    code, text = _check(home)
    assert code == 1
    assert "did not answer within 10 s (Codex gives up and lets the call through)" in text


def test_a_patch_codex_refuses_reaches_codex_unjudged(home: codex_driver.Home) -> None:
    _install(home)
    index = _store(home, 200)
    patch = ("*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n+- [New](new.md) x\n"
             "*** Update File: missing.md\n@@\n-a\n+b\n*** End Patch\n")
    result = codex_driver.run(home, [[patch_call(patch)]])
    output = result.tool_outputs()[0]
    assert "blocked" not in output and "missing.md" in output, output[:300]
    assert index.read_bytes() == _index(200)


def test_a_symlinked_codex_home_is_trusted_by_its_real_path(home: codex_driver.Home, tmp_path: Path) -> None:
    link = tmp_path / "codex-link"
    link.symlink_to(home.codex_home)
    home.codex_home = link  # CODEX_HOME names the link, as a dotfiles setup would
    _install(home)
    assert {h["trustStatus"] for h in codex_driver.hooks_list(home)} == {"trusted"}
    code, text = _check(home)
    assert code == 0, text
