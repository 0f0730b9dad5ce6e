"""`engramory install --host kilo` without the Kilo CLI (`node` loads the plugin in --check
when Kilo's binary is not on PATH): the folders of each scope, --dry-run writing nothing, the
plugin importing nothing of `@kilocode/plugin`, --check proving the file loads and refuses,
and failing on a broken file; the hook answering opencode's protocol under Kilo's name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import legacy
import pytest
from payloads import INDEX, plugin_payloads

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "engramory" / "__init__.py").is_file())
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def engramory(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env: Dict[str, str] = {"HOME": str(tmp / "home"), "XDG_CONFIG_HOME": str(tmp / "home" / ".config"),
                           "PATH": str(Path(NODE).parent) if NODE else "/nonexistent", "PYTHONPATH": str(ROOT)}
    (tmp / "proj").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=str(tmp / "proj"), env=env,
                          capture_output=True, text=True, timeout=120)


def plugin_path(tmp: Path, scope: str) -> Path:
    base = tmp / "home" / ".config" / "kilo" if scope == "user" else tmp / "proj" / ".kilo"
    return base / "plugins" / "engramory.js"


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    done = engramory(tmp_path, "install", "--host", "kilo", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "would write" in done.stdout and str(plugin_path(tmp_path, "user")) in done.stdout
    assert not (tmp_path / "home").exists()


@needs_node
@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_check_uninstall_in_each_scope(tmp_path: Path, scope: str) -> None:
    done = engramory(tmp_path, "install", "--host", "kilo", "--scope", scope)
    assert done.returncode == 0, done.stderr
    plugin = plugin_path(tmp_path, scope)
    text = plugin.read_text(encoding="utf-8")
    assert text.startswith("// engramory guard for Kilo Code CLI")
    imports = [line for line in text.splitlines() if line.startswith("import ")]
    assert imports == ['import { spawn } from "node:child_process";']  # nothing of @kilocode/plugin
    check = engramory(tmp_path, "install", "--host", "kilo", "--scope", scope, "--check")
    assert check.returncode == 0, check.stdout
    assert "engramory.js loads in node and refuses a growing index write" in check.stdout
    assert engramory(tmp_path, "uninstall", "--host", "kilo", "--scope", scope).returncode == 0
    assert not plugin.exists() and not plugin.parent.parent.exists()


@needs_node
@pytest.mark.parametrize("damage, said", [
    (lambda t: t.replace("const GUARDED = new Set([", "const GUARDED = new Set([[", 1), "does not load"),
    (lambda t: t.replace('"tool.execute.before"', '"tool.execute.never"', 1), "has no tool.execute.before hook"),
    (lambda t: t.replace("throw new Error(answer.deny)", "void answer", 1), "let a write that grows an index"),
], ids=["syntax-error", "no-hook", "never-throws"])
def test_check_fails_on_a_plugin_kilo_would_skip_or_that_lets_growth_through(tmp_path: Path, damage, said) -> None:  # type: ignore[no-untyped-def]
    assert engramory(tmp_path, "install", "--host", "kilo").returncode == 0
    plugin = plugin_path(tmp_path, "user")
    plugin.write_text(damage(plugin.read_text(encoding="utf-8")), encoding="utf-8")
    check = engramory(tmp_path, "install", "--host", "kilo", "--check")
    assert check.returncode == 1, check.stdout
    assert said in check.stdout and "next step:" in check.stdout and "Traceback" not in check.stderr


def test_check_without_any_javascript_runtime_says_so(tmp_path: Path) -> None:
    assert engramory(tmp_path, "install", "--host", "kilo").returncode == 0
    done = subprocess.run([sys.executable, "-m", "engramory", "install", "--host", "kilo", "--check"],
                          cwd=str(tmp_path / "proj"), capture_output=True, text=True, timeout=120,
                          env={"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
                               "PATH": str(tmp_path / "empty"), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1 and "cannot prove the plugin loads: none of kilo, bun, node is on PATH" in done.stdout


def test_the_hook_denies_growth_in_opencodes_protocol_under_kilos_window(tmp_path: Path) -> None:
    from engramory.hosts import kilo, opencode

    big = "".join("- [n%d](n%d.md) - x\n" % (i, i) for i in range(300))
    question = {"event": "before", "tool": "write", "args": {"filePath": "memory/MEMORY.md", "content": big},
                "directory": str(tmp_path)}
    out, err, code = kilo.respond(json.dumps(question).encode(), {})
    assert code == 0 and err == ""
    assert json.loads(out)["deny"].startswith("engramory blocked this write: %s" % (tmp_path / "memory" / "MEMORY.md"))
    assert kilo.respond(json.dumps(dict(question, tool="read")).encode(), {}) == ("{}", "", 0)
    assert kilo.dialect().tools is opencode.TOOLS and kilo.window().note.startswith("Kilo loads no MEMORY.md")
    # the quiet check's copy of opencode's tools and keys (kilo answers it before importing opencode)
    assert (kilo.TOOLS, kilo.PATH_KEYS, kilo.PATCH_TOOLS, kilo.SHELL_TOOLS, kilo.FAIL_OPEN) == (
        opencode.TOOLS, opencode.PATH_KEYS, opencode.PATCH_TOOLS, opencode.SHELL_TOOLS, opencode.FAIL_OPEN)
    patch = "*** Begin Patch\n*** Add File: memory/MEMORY.md\n" + "".join("+" + line + "\n" for line in big.splitlines()) + "*** End Patch"
    for q in (question, dict(question, args={"filePath": "src.py", "content": big}),
              dict(question, args={"filePath": str(tmp_path / "memory" / "MEMORY.md"), "content": big}, directory=None),
              dict(question, tool="apply_patch", args={"patchText": patch}), dict(question, event="read")):
        raw = json.dumps(q).encode()
        assert (kilo.respond(raw, {})[0] == "{}") == (opencode.respond(raw, {})[0] == "{}"), q
    hook = ROOT / "hooks" / "engramory_kilo_hook.py"
    done = subprocess.run([sys.executable, "-I", "-S", str(hook)], input=json.dumps(question).encode(),
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["deny"].startswith("engramory blocked this write")


# -- an install from before the generic entry (issue 20) -----------------------------------------

OLD_SCRIPT = "engramory_kilo_hook.py"


def _old_install(tmp: Path) -> tuple[Path, Path, str]:
    assert engramory(tmp, "install", "--host", "kilo").returncode == 0
    plugin = plugin_path(tmp, "user")
    bundle = plugin.parent.parent / "engramory"
    return plugin, bundle, legacy.make_old(plugin, bundle, "kilo.js", OLD_SCRIPT)


def _denies(text: str, tmp: Path) -> bool:
    project = tmp / "proj"
    (project / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    deny = plugin_payloads("kilo", "before", str(project / "MEMORY.md"), str(project / "src.py"), str(project))[1]
    assert deny is not None
    said = legacy.answer(text, deny, project, {"HOME": str(tmp / "home"), "PATH": "/usr/bin:/bin"})
    return str(said.get("deny", "")).startswith("engramory blocked")


@needs_node
def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(tmp_path: Path) -> None:
    """The plugin an earlier install wrote (tests/fixtures/plugins-before-generic/kilo.js, byte
    for byte) still denies with today's bundle, --check loads it and passes with a note, a
    reinstall leaves only the generic form (fails with the installer from before the move)."""
    from engramory.hosts.kilo import install as kilo_install

    plugin, bundle, old = _old_install(tmp_path)
    assert legacy.spawned(old)[-1] == str(bundle / "hooks" / OLD_SCRIPT) and _denies(old, tmp_path)
    check = engramory(tmp_path, "install", "--host", "kilo", "--check")
    assert check.returncode == 0, check.stdout
    assert "was written by an earlier install: it runs hooks/%s" % OLD_SCRIPT in check.stdout
    assert "engramory.js loads in node and refuses a growing index write" in check.stdout
    assert engramory(tmp_path, "install", "--host", "kilo").returncode == 0
    legacy.assert_moved(plugin, bundle, OLD_SCRIPT, "kilo")
    text = plugin.read_text(encoding="utf-8")
    assert text == kilo_install.plugin_text(legacy.consts(old)[0], str(bundle / "hooks" / legacy.ENTRY))
    assert legacy.spawned(text)[-1] == "kilo" and _denies(text, tmp_path)
    check = engramory(tmp_path, "install", "--host", "kilo", "--check")
    assert check.returncode == 0 and "earlier install" not in check.stdout


def test_uninstall_takes_out_an_old_install_to_the_byte(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".config" / "kilo"
    config.mkdir(parents=True)
    (config / "kilo.json").write_bytes(b'{\n  // mine\n  "model": "x/y"\n}\n')
    before = sorted(str(p.relative_to(tmp_path / "home")) for p in (tmp_path / "home").rglob("*"))
    _old_install(tmp_path)
    assert engramory(tmp_path, "uninstall", "--host", "kilo").returncode == 0
    assert sorted(str(p.relative_to(tmp_path / "home")) for p in (tmp_path / "home").rglob("*")) == before
    assert (config / "kilo.json").read_bytes() == b'{\n  // mine\n  "model": "x/y"\n}\n'


@needs_node
def test_an_edited_old_plugin_still_fails_check(tmp_path: Path) -> None:
    plugin, _, old = _old_install(tmp_path)
    plugin.write_text(old.replace("const TIMEOUT_MS = 5000;", "const TIMEOUT_MS = 50000;"), encoding="utf-8")
    check = engramory(tmp_path, "install", "--host", "kilo", "--check")
    assert check.returncode == 1, check.stdout
    assert "is not the plugin this engramory writes" in check.stdout and "earlier install" not in check.stdout
