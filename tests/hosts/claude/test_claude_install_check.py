"""`engramory install --check` for Claude Code, in process (the real-CLI twins of these are in
tests/hosts/claude/test_install_check_real.py): each way the guard can be off while its files exist
makes --check exit 1 with the reason and the fix; a healthy install exits 0."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from engramory.commands import install as install_cmd
from engramory.hosts.claude import check as install_check
from engramory.hosts.claude import install


class Home:
    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.home.mkdir()
        self.project.mkdir()
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        for var in [v for v in os.environ if v.startswith("ENGRAMORY_")]:
            monkeypatch.delenv(var)
        monkeypatch.chdir(self.project)
        monkeypatch.setattr(install_check, "managed_settings_path", lambda: str(tmp / "managed" / "managed-settings.json"))
        self.user = self.home / ".claude" / "settings.json"
        self.managed = tmp / "managed" / "managed-settings.json"

    def edit(self, path: Path, change: Callable[[dict[str, Any]], None]) -> None:
        data = json.loads(path.read_text()) if path.exists() else {}
        change(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    def check(self, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
        capsys.readouterr()
        code = install_check.run(cwd=str(self.project))
        return code, capsys.readouterr().out


@pytest.fixture
def h(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    home = Home(tmp_path, monkeypatch)
    assert install_cmd.main([]) == 0
    return home


def ours(data: dict[str, Any], event: str) -> tuple[dict[str, Any], dict[str, Any]]:
    for group in data["hooks"][event]:
        for handler in group["hooks"]:
            if install.is_our_handler(handler):
                return group, handler
    raise AssertionError(event)


VARIANTS: list[tuple[str, Callable[[Home], None], str]] = [
    ("disable-user", lambda h: h.edit(h.user, lambda d: d.update(disableAllHooks=True)), '"disableAllHooks": true in user settings'),
    ("disable-project", lambda h: h.edit(h.project / ".claude" / "settings.json", lambda d: d.update(disableAllHooks=True)),
     '"disableAllHooks": true in project settings'),
    ("disable-local", lambda h: h.edit(h.project / ".claude" / "settings.local.json", lambda d: d.update(disableAllHooks=True)),
     '"disableAllHooks": true in local settings'),
    ("disable-managed", lambda h: h.edit(h.managed, lambda d: d.update(disableAllHooks=True)), '"disableAllHooks": true in managed settings'),
    ("managed-only", lambda h: h.edit(h.managed, lambda d: d.update(allowManagedHooksOnly=True)), "allow managed hooks only"),
    ("env-hard", lambda h: h.edit(h.project / ".claude" / "settings.json", lambda d: d.update(env={"ENGRAMORY_HARD": "100000"})),
     "ENGRAMORY_HARD=100000 (from project settings"),
    ("env-path", lambda h: h.edit(h.project / ".claude" / "settings.json", lambda d: d.update(env={"ENGRAMORY_INDEX_PATH": str(h.home / "gone" / "MEMORY.md")})),
     "MEMORY.md, whose folder does not exist"),
    ("env-name", lambda h: h.edit(h.project / ".claude" / "settings.json", lambda d: d.update(env={"ENGRAMORY_INDEX_NAME": "INDEX.md"})),
     "ENGRAMORY_INDEX_NAME=INDEX.md"),
    ("module", lambda h: (h.home / ".claude" / "skills" / "engramory" / "engramory" / "size.py").unlink(), "engramory/size.py is missing"),
    ("matcher", lambda h: h.edit(h.user, lambda d: ours(d, "PreToolUse")[0].update(matcher="edit|write")),
     'the matcher "edit|write" does not select Edit, Write'),
    ("shell-matcher", lambda h: h.edit(h.user, lambda d: ours(d, "PostToolUse")[0].update(matcher="Bash")), "does not select Monitor"),
    ("async", lambda h: h.edit(h.user, lambda d: ours(d, "PreToolUse")[1].update({"async": True})), '"async": true'),
    ("broken-json", lambda h: (h.project / ".claude").mkdir() or (h.project / ".claude" / "settings.json").write_text('{"a": 1e400,}'),
     "Claude Code ignores this whole file"),
    ("unwired", lambda h: h.edit(h.user, lambda d: d.update(hooks={})), "is not wired"),
]


@pytest.mark.parametrize(("variant", "expect"), [(v, e) for _, v, e in VARIANTS], ids=[i for i, _, _ in VARIANTS])
def test_each_blind_spot_fails_the_check(h: Home, capsys: pytest.CaptureFixture[str], variant: Callable[[Home], None],
                                         expect: str) -> None:
    assert h.check(capsys)[0] == 0
    variant(h)
    code, out = h.check(capsys)
    assert code == 1, out
    assert expect in out, out
    assert "    fix: " in out


def test_the_shell_environment_counts_too(h: Home, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAMORY_HARD_BYTES", "99999999")
    code, out = h.check(capsys)
    assert code == 1 and "ENGRAMORY_HARD_BYTES=99999999 (from this shell's environment)" in out
    assert "unset ENGRAMORY_HARD_BYTES" in out


def test_a_dollar_in_the_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    h = Home(tmp_path, monkeypatch)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "a $HOME `b` dir"))
    assert install_cmd.main([]) == 0
    code, out = h.check(capsys)
    assert code == 0, out
    assert "does not exist" not in out


def test_healthy_lists_every_handler(h: Home, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = h.check(capsys)
    assert code == 0
    assert out.count("a smoke run was") == len(install.HOOKS) and "healthy" in out


def test_json_output(h: Home, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert install_check.run(cwd=str(h.project), as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["healthy"] is True and report["problems"] == []


@pytest.mark.parametrize(
    ("matcher", "tool", "runs"),
    [(None, "Edit", True), ("", "Edit", True), ("*", "Bash", True), ("Edit|Write", "Write", True),
     ("edit|write", "Edit", False), ("Edit", "NotebookEdit", False), ("^(Bash|Monitor)$", "Monitor", True),
     ("Notebook.*", "NotebookEdit", True), ("mcp__.*", "mcp__x__y", True), ("(", "Edit", False)],
)
def test_matcher_semantics(matcher: Any, tool: str, runs: bool) -> None:
    assert install_check.matcher_selects(matcher, tool) is runs


def test_json_by_the_cli(h: Home, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert install_cmd.main(["--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["healthy"] is True


# -- an install through the Claude Code plugin only ------------------------------------------

PLUGIN_ID = "engramory@engramory-marketplace"
JUNK = ("node_modules", ".venv*", ".git", "__pycache__", ".*_cache", ".hypothesis", "tests", "bench")


def plugin_install(h: Home, version: str = "0.1.0", record: bool = True) -> Path:
    """Lay the plugin out as `claude plugin install engramory@engramory-marketplace` does
    (measured on Claude Code 2.1.332): the whole marketplace folder copied to
    <config>/plugins/cache/<marketplace>/<plugin>/<version>/, an entry in
    <config>/plugins/installed_plugins.json (version 2) and enabledPlugins in user settings."""
    import shutil

    config = h.home / ".claude"
    folder = config / "plugins" / "cache" / "engramory-marketplace" / "engramory" / version
    shutil.copytree(install.source_root(), folder, ignore=shutil.ignore_patterns(*JUNK))
    if record:
        entry = {"scope": "user", "installPath": str(folder), "version": version,
                 "installedAt": "2026-12-01T11:03:05.330Z", "lastUpdated": "2026-12-01T11:03:05.330Z"}
        h.edit(config / "plugins" / "installed_plugins.json",
               lambda d: d.update(version=2, plugins={PLUGIN_ID: [entry]}))
    h.edit(h.user, lambda d: d.update(enabledPlugins={PLUGIN_ID: True}))
    return folder


@pytest.fixture
def p(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    return Home(tmp_path, monkeypatch)  # nothing installed by `engramory install`


def test_plugin_only_install_is_checked_and_smoke_tested(p: Home, capsys: pytest.CaptureFixture[str]) -> None:
    folder = plugin_install(p)
    code, out = p.check(capsys)
    assert code == 0, out
    assert "plugin %s is enabled and installed at %s" % (PLUGIN_ID, folder) in out
    assert out.count("a smoke run was") == len(install.HOOKS), out
    assert str(folder / "hooks" / "hooks.json") in out and "is not wired" not in out


def test_plugin_found_in_the_cache_without_its_record(p: Home, capsys: pytest.CaptureFixture[str]) -> None:
    folder = plugin_install(p, record=False)
    code, out = p.check(capsys)
    assert code == 0, out
    assert "newest in" in out or str(folder) in out


PLUGIN_VARIANTS: list[tuple[str, Callable[[Home, Path], None], str]] = [
    ("module", lambda h, f: (f / "engramory" / "guard.py").unlink(), "No module named 'engramory.guard'"),
    ("broken-module", lambda h, f: (f / "engramory" / "edits.py").write_text("raise ImportError('x')\n"), "engramory.edits"),
    ("off-in-project", lambda h, f: h.edit(h.project / ".claude" / "settings.json",
                                           lambda d: d.update(enabledPlugins={PLUGIN_ID: False})), "is not wired"),
    ("disable-all", lambda h, f: h.edit(h.user, lambda d: d.update(disableAllHooks=True)), '"disableAllHooks": true'),
    ("hooks-json-gone", lambda h, f: (f / "hooks" / "hooks.json").unlink(), "hooks.json does not exist"),
    ("hooks-json-broken", lambda h, f: (f / "hooks" / "hooks.json").write_text("{"), "Claude Code loads none of its hooks"),
    ("matcher", lambda h, f: (f / "hooks" / "hooks.json").write_text(
        (f / "hooks" / "hooks.json").read_text().replace('"Edit|Write|MultiEdit|Bash"', '"edit|write"')), "does not select Edit, Write"),
    ("folder-gone", lambda h, f: __import__("shutil").rmtree(f), "has no copy of it"),
    ("env-hard", lambda h, f: h.edit(h.user, lambda d: d.update(env={"ENGRAMORY_HARD": "100000", "ENGRAMORY_HARD_BYTES": "9999999"})),
     "a smoke run shows it would not act"),
]


@pytest.mark.parametrize(("variant", "expect"), [(v, e) for _, v, e in PLUGIN_VARIANTS], ids=[i for i, _, _ in PLUGIN_VARIANTS])
def test_plugin_only_install_blind_spots_fail_the_check(p: Home, capsys: pytest.CaptureFixture[str],
                                                        variant: Callable[[Home, Path], None], expect: str) -> None:
    folder = plugin_install(p)
    assert p.check(capsys)[0] == 0
    variant(p, folder)
    code, out = p.check(capsys)
    assert code == 1, out
    assert expect in out, out
    assert "    fix: " in out


def test_plugin_installed_for_another_project_does_not_count(p: Home, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = plugin_install(p)
    entry = {"scope": "project", "projectPath": str(tmp_path / "elsewhere"), "installPath": str(folder), "version": "0.1.0"}
    p.edit(p.home / ".claude" / "plugins" / "installed_plugins.json", lambda d: d.update(plugins={PLUGIN_ID: [entry]}))
    folder2, how = install_check.plugin_folder(str(p.home / ".claude"), PLUGIN_ID, str(p.project))
    # No entry for this project: the cache's newest version is what is left to find.
    assert folder2 == str(folder) and "newest in" in how


def test_plugin_and_settings_hooks_both_wired_is_noted(p: Home, capsys: pytest.CaptureFixture[str]) -> None:
    assert install_cmd.main([]) == 0
    plugin_install(p)
    code, out = p.check(capsys)
    assert code == 0, out
    assert "is wired 2 times" in out and "keep one way in" in out


def test_plugin_of_a_local_marketplace_is_run_in_place(p: Home, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # As `claude plugin marketplace add <folder>` records it (Claude Code 2.1.332): the CLI
    # runs the plugin from that folder, not from the cache copy (tests/e2e measure it).
    import shutil

    plugin_install(p)
    market = tmp_path / "checkout"
    shutil.copytree(install.source_root(), market, ignore=shutil.ignore_patterns(*JUNK))
    p.edit(p.home / ".claude" / "plugins" / "known_marketplaces.json", lambda d: d.update({"engramory-marketplace": {
        "source": {"source": "directory", "path": str(market)}, "installLocation": str(market)}}))
    folder, how = install_check.plugin_folder(str(p.home / ".claude"), PLUGIN_ID, str(p.project))
    assert folder == str(market) and "run in place" in how
    assert p.check(capsys)[0] == 0
    (market / "engramory" / "guard.py").unlink()
    code, out = p.check(capsys)
    assert code == 1 and "No module named 'engramory.guard'" in out, out
