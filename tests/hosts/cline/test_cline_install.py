"""`engramory install --host cline` over an install from before the generic hook entry (issue
20), without the Cline CLI: the earlier plugin (its text kept byte for byte in
tests/fixtures/plugins-before-generic/cline.js) still denies with today's bundle and passes
--check with a note, a reinstall leaves only the generic form, uninstall takes either form out
to the byte, and an edited old plugin still fails --check. The real Cline running the old
plugin: test_cline_real.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import legacy
import scenarios
from payloads import INDEX, plugin_payloads

from engramory.hosts.cline import install as cline_install

OLD_SCRIPT = "engramory_cline_hook.py"


def _env(tmp: Path) -> Dict[str, str]:
    return {"HOME": str(tmp / "home"), "PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8",
            "TMPDIR": str(tmp)}


def _run(tmp: Path, *args: str) -> str:
    done = legacy.engramory(list(args), tmp / "proj", _env(tmp))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _old_install(tmp: Path, *scope: str) -> tuple[Path, Path, str]:
    _run(tmp, "install", "--host", "cline", *scope)
    base = (tmp / "proj" / ".cline") if scope == ("--scope", "project") else (tmp / "home" / ".cline")
    plugin, bundle = base / "plugins" / "engramory.js", base / "engramory"
    return plugin, bundle, legacy.make_old(plugin, bundle, "cline.js", OLD_SCRIPT)


def _denies(text: str, tmp: Path) -> bool:
    project = tmp / "proj"
    (project / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    deny = plugin_payloads("cline", "before", str(project / "MEMORY.md"), str(project / "src.py"), str(project))[1]
    assert deny is not None
    said = legacy.answer(text, deny, project, _env(tmp))
    return str(said.get("deny", "")).startswith("engramory blocked")


def test_a_fresh_install_spawns_the_generic_entry(tmp_path: Path) -> None:
    _run(tmp_path, "install", "--host", "cline")
    bundle = tmp_path / "home" / ".cline" / "engramory"
    text = (tmp_path / "home" / ".cline" / "plugins" / "engramory.js").read_text(encoding="utf-8")
    assert legacy.spawned(text)[-2:] == [str(bundle / "hooks" / legacy.ENTRY), "cline"]
    assert sorted(p.name for p in (bundle / "hooks").iterdir() if p.suffix == ".py") == [legacy.ENTRY]
    assert _denies(text, tmp_path)


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(tmp_path: Path) -> None:
    plugin, bundle, old = _old_install(tmp_path)
    assert legacy.spawned(old)[-1] == str(bundle / "hooks" / OLD_SCRIPT)
    assert _denies(old, tmp_path)
    out = _run(tmp_path, "install", "--host", "cline", "--check")
    assert "was written by an earlier install: it runs hooks/%s" % OLD_SCRIPT in out and "problem" not in out
    assert "a reinstall moves it to hooks/engramory_hook.py cline" in out
    _run(tmp_path, "install", "--host", "cline")
    legacy.assert_moved(plugin, bundle, OLD_SCRIPT, "cline")
    text = plugin.read_text(encoding="utf-8")
    assert text == cline_install.plugin_text(legacy.consts(old)[0], str(bundle / "hooks" / legacy.ENTRY))
    assert _denies(text, tmp_path)
    out = _run(tmp_path, "install", "--host", "cline", "--check")
    assert "earlier install" not in out and "healthy" in out


def test_uninstall_takes_out_an_old_install_to_the_byte(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cline" / "data").mkdir(parents=True)
    (home / ".cline" / "data" / "settings.json").write_bytes(b'{"mine": 1}\n')
    before = scenarios.tree(home)
    _old_install(tmp_path)
    _run(tmp_path, "uninstall", "--host", "cline")
    assert scenarios.tree(home) == before
    assert (home / ".cline" / "data" / "settings.json").read_bytes() == b'{"mine": 1}\n'


def test_uninstall_takes_out_an_old_project_install_to_the_byte(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    before = scenarios.tree(tmp_path / "proj")
    _old_install(tmp_path, "--scope", "project")
    _run(tmp_path, "uninstall", "--host", "cline", "--scope", "project")
    assert scenarios.tree(tmp_path / "proj") == before


def test_an_edited_old_plugin_still_fails_check(tmp_path: Path) -> None:
    plugin, _, old = _old_install(tmp_path)
    plugin.write_text(old.replace("const TIMEOUT_MS = 2000;", "const TIMEOUT_MS = 20000;"), encoding="utf-8")
    done = legacy.engramory(["install", "--host", "cline", "--check"], tmp_path / "proj", _env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "is not the plugin this engramory writes" in done.stdout and "earlier install" not in done.stdout


def test_a_broken_generic_plugin_fails_check(tmp_path: Path) -> None:
    _run(tmp_path, "install", "--host", "cline")
    plugin = tmp_path / "home" / ".cline" / "plugins" / "engramory.js"
    plugin.write_text(plugin.read_text(encoding="utf-8").replace('const HOST = "cline";', 'const HOST = "clin";'),
                      encoding="utf-8")
    done = legacy.engramory(["install", "--host", "cline", "--check"], tmp_path / "proj", _env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "problem" in done.stdout and "Traceback" not in done.stdout + done.stderr
