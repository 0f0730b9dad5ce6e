"""`engramory install --host openclaw` over an install from before the generic hook entry (issue
20), without the OpenClaw CLI: the earlier index.mjs (its text kept byte for byte in
tests/fixtures/plugins-before-generic/openclaw.mjs) still denies with today's bundle and passes
--check with a note, a reinstall leaves only the generic form, uninstall takes either form out
and gives the config's bytes back, and an edited old plugin still fails --check. The real
OpenClaw running the old plugin: test_openclaw_real.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import legacy
import scenarios
from payloads import INDEX, plugin_payloads

from engramory.hosts.openclaw import install as openclaw_install

OLD_SCRIPT = "engramory_openclaw_hook.py"
CONFIG = b'{\n  // mine\n  "agents": {"defaults": {"model": {"primary": "x/y"}}}\n}\n'


def _env(tmp: Path) -> Dict[str, str]:
    return {"HOME": str(tmp / "home"), "PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8",
            "TMPDIR": str(tmp)}


def _run(tmp: Path, *args: str) -> str:
    done = legacy.engramory(list(args), tmp / "proj", _env(tmp))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _paths(tmp: Path) -> tuple[Path, Path]:
    base = tmp / "home" / ".openclaw"
    return base / "engramory-plugin" / "index.mjs", base / "engramory"


def _old_install(tmp: Path) -> tuple[Path, Path, str]:
    _run(tmp, "install", "--host", "openclaw")
    plugin, bundle = _paths(tmp)
    return plugin, bundle, legacy.make_old(plugin, bundle, "openclaw.mjs", OLD_SCRIPT)


def _denies(text: str, tmp: Path) -> bool:
    project = tmp / "proj"
    (project / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    deny = plugin_payloads("openclaw", "before", str(project / "MEMORY.md"), str(project / "src.py"), str(project))[1]
    assert deny is not None
    said = legacy.answer(text, deny, project, _env(tmp))
    return str(said.get("deny", "")).startswith("engramory blocked")


def test_a_fresh_install_spawns_the_generic_entry(tmp_path: Path) -> None:
    _run(tmp_path, "install", "--host", "openclaw")
    plugin, bundle = _paths(tmp_path)
    text = plugin.read_text(encoding="utf-8")
    assert legacy.spawned(text)[-2:] == [str(bundle / "hooks" / legacy.ENTRY), "openclaw"]
    assert sorted(p.name for p in (bundle / "hooks").iterdir() if p.suffix == ".py") == [legacy.ENTRY]
    assert _denies(text, tmp_path)


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(tmp_path: Path) -> None:
    plugin, bundle, old = _old_install(tmp_path)
    assert legacy.spawned(old)[-1] == str(bundle / "hooks" / OLD_SCRIPT)
    assert _denies(old, tmp_path)
    out = _run(tmp_path, "install", "--host", "openclaw", "--check")
    assert "was written by an earlier install: it runs hooks/%s" % OLD_SCRIPT in out and "problem" not in out
    assert "a reinstall moves it to hooks/engramory_hook.py openclaw" in out
    _run(tmp_path, "install", "--host", "openclaw")
    legacy.assert_moved(plugin, bundle, OLD_SCRIPT, "openclaw")
    text = plugin.read_text(encoding="utf-8")
    files = openclaw_install.plugin_files(legacy.consts(old)[0], str(bundle / "hooks" / legacy.ENTRY))
    assert text == files["index.mjs"].decode()
    assert all((plugin.parent / name).read_bytes() == data for name, data in files.items())
    assert _denies(text, tmp_path)
    out = _run(tmp_path, "install", "--host", "openclaw", "--check")
    assert "earlier install" not in out and "healthy" in out


def test_uninstall_takes_out_an_old_install_and_gives_the_config_bytes_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".openclaw").mkdir(parents=True)
    (home / ".openclaw" / "openclaw.json").write_bytes(CONFIG)
    before = scenarios.tree(home)
    _old_install(tmp_path)
    assert (home / ".openclaw" / "openclaw.json").read_bytes() != CONFIG
    _run(tmp_path, "uninstall", "--host", "openclaw")
    # install and uninstall each keep a backup of the config they rewrote (the user's to delete)
    assert [p for p in scenarios.tree(home) if ".engramory-backup-" not in p] == before
    assert (home / ".openclaw" / "openclaw.json").read_bytes() == CONFIG


def test_an_edited_old_plugin_still_fails_check(tmp_path: Path) -> None:
    plugin, _, old = _old_install(tmp_path)
    plugin.write_text(old.replace("const TIMEOUT_MS = 5000;", "const TIMEOUT_MS = 50000;"), encoding="utf-8")
    done = legacy.engramory(["install", "--host", "openclaw", "--check"], tmp_path / "proj", _env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "is not the plugin this engramory writes" in done.stdout and "earlier install" not in done.stdout


def test_a_generic_plugin_with_another_host_fails_check(tmp_path: Path) -> None:
    _run(tmp_path, "install", "--host", "openclaw")
    plugin, _ = _paths(tmp_path)
    plugin.write_text(plugin.read_text(encoding="utf-8").replace('const HOST = "openclaw";', 'const HOST = "cline";'),
                      encoding="utf-8")
    done = legacy.engramory(["install", "--host", "openclaw", "--check"], tmp_path / "proj", _env(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "is not the plugin this engramory writes" in done.stdout and "Traceback" not in done.stdout + done.stderr
