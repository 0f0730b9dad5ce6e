"""`engramory install --host opencode` over an install from before the generic hook entry (issue
20), without the opencode CLI: the earlier plugin (its text kept byte for byte in
tests/fixtures/plugins-before-generic/opencode.js) still denies with today's bundle and passes
--check with a note, a reinstall leaves only the generic form, uninstall takes either form out
to the byte, and an edited old plugin still fails --check. The real opencode running the old
plugin: test_opencode_real.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import legacy
import scenarios
from payloads import INDEX, plugin_payloads

from engramory.hosts.opencode import install as opencode_install

OLD_SCRIPT = "engramory_opencode_hook.py"


def _env(tmp: Path) -> Dict[str, str]:
    return {"HOME": str(tmp / "home"), "XDG_CONFIG_HOME": str(tmp / "home" / ".config"),
            "PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8", "TMPDIR": str(tmp)}


def _run(tmp: Path, *args: str) -> str:
    done = legacy.engramory(list(args), tmp / "proj", _env(tmp))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _old_install(tmp: Path) -> tuple[Path, Path, str]:
    _run(tmp, "install", "--host", "opencode")
    base = tmp / "home" / ".config" / "opencode"
    plugin, bundle = base / "plugins" / "engramory.js", base / "engramory"
    return plugin, bundle, legacy.make_old(plugin, bundle, "opencode.js", OLD_SCRIPT)


def _denies(text: str, tmp: Path) -> bool:
    project = tmp / "proj"
    (project / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    deny = plugin_payloads("opencode", "before", str(project / "MEMORY.md"), str(project / "src.py"), str(project))[1]
    assert deny is not None
    said = legacy.answer(text, deny, project, _env(tmp))
    return str(said.get("deny", "")).startswith("engramory blocked")


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(tmp_path: Path) -> None:
    plugin, bundle, old = _old_install(tmp_path)
    assert legacy.spawned(old)[-1] == str(bundle / "hooks" / OLD_SCRIPT)
    assert _denies(old, tmp_path)
    out = _run(tmp_path, "install", "--host", "opencode", "--check")
    assert "was written by an earlier install: it runs hooks/%s" % OLD_SCRIPT in out and "problem" not in out
    _run(tmp_path, "install", "--host", "opencode")
    legacy.assert_moved(plugin, bundle, OLD_SCRIPT, "opencode")
    text = plugin.read_text(encoding="utf-8")
    assert text == opencode_install.plugin_text(legacy.consts(old)[0], str(bundle / "hooks" / legacy.ENTRY))
    assert legacy.spawned(text)[-2:] == [str(bundle / "hooks" / legacy.ENTRY), "opencode"]
    assert _denies(text, tmp_path)
    out = _run(tmp_path, "install", "--host", "opencode", "--check")
    assert "earlier install" not in out and "healthy" in out


def test_uninstall_takes_out_an_old_install_to_the_byte(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_bytes(b'{"model": "x/y"}\n')
    before = scenarios.tree(home)
    _old_install(tmp_path)
    _run(tmp_path, "uninstall", "--host", "opencode")
    assert scenarios.tree(home) == before
    assert (home / ".config" / "opencode" / "opencode.json").read_bytes() == b'{"model": "x/y"}\n'


def test_an_edited_old_plugin_still_fails_check(tmp_path: Path) -> None:
    plugin, _, old = _old_install(tmp_path)
    plugin.write_text(old.replace("const TIMEOUT_MS = 5000;", "const TIMEOUT_MS = 50000;"), encoding="utf-8")
    done = legacy.engramory(["install", "--host", "opencode", "--check"], tmp_path / "proj", _env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "is not the plugin this engramory writes" in done.stdout and "earlier install" not in done.stdout
