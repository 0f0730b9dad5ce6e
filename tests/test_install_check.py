"""`engramory install --check` for Claude Code, in process (the real-CLI twins of these are in
tests/e2e/test_install_check_real.py): each way the guard can be off while its files exist
makes --check exit 1 with the reason and the fix; a healthy install exits 0."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from engramory import install, install_check


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
    assert install.main([]) == 0
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
    assert install.main([]) == 0
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
    assert install.main(["--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["healthy"] is True
