"""`engramory install --check` against the real Claude Code CLI: for each way the guard can
be off while every hook file exists (issue 10), the real CLI lets an over-cap Write through
AND `--check` exits non-zero naming the reason; for a healthy install (a CLAUDE_CONFIG_DIR
holding `$` included) the real CLI denies the Write and `--check` exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict

import pytest
from harness import RunClaude, Text, ToolUse

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


def index_lines(count: int) -> str:
    return "".join(f"- [note {i}](note-{i}.md) \u2014 hook {i}\n" for i in range(count))


def engramory(home: Path, *args: str, cwd: Path, extra: Dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ENGRAMORY_", "PYTHON"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), **(extra or {}))
    return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=180)


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    change(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _handler(data: dict, event: str) -> dict:
    for group in data["hooks"][event]:
        for h in group["hooks"]:
            if "skills/engramory" in h["command"]:
                return h
    raise AssertionError("no handler of ours for " + event)


def _group(data: dict, event: str) -> dict:
    for group in data["hooks"][event]:
        if any("skills/engramory" in h["command"] for h in group["hooks"]):
            return group
    raise AssertionError("no group of ours for " + event)


def disable_all_hooks(where: str) -> Callable[[Path, Path], str]:
    def apply(home: Path, project: Path) -> str:
        path = {
            "user": home / ".claude" / "settings.json",
            "project": project / ".claude" / "settings.json",
            "local": project / ".claude" / "settings.local.json",
        }[where]
        edit_json(path, lambda d: d.update(disableAllHooks=True))
        return '"disableAllHooks": true in %s settings' % where
    return apply


def project_env(var: str, value: str, expect: str) -> Callable[[Path, Path], str]:
    def apply(home: Path, project: Path) -> str:
        edit_json(project / ".claude" / "settings.json",
                  lambda d: d.setdefault("env", {}).update({var: value.format(home=home)}))
        return expect
    return apply


def delete_module(home: Path, project: Path) -> str:
    (home / ".claude" / "skills" / "engramory" / "engramory" / "guard.py").unlink()
    return "engramory/guard.py is missing"


def lower_matcher(home: Path, project: Path) -> str:
    edit_json(home / ".claude" / "settings.json", lambda d: _group(d, "PreToolUse").update(matcher="edit|write"))
    return 'the matcher "edit|write" does not select Edit, Write'


def mark_async(home: Path, project: Path) -> str:
    edit_json(home / ".claude" / "settings.json", lambda d: _handler(d, "PreToolUse").update({"async": True}))
    return '"async": true'


BLIND_SPOTS = [
    pytest.param(disable_all_hooks("user"), id="disableAllHooks-user"),
    pytest.param(disable_all_hooks("project"), id="disableAllHooks-project"),
    pytest.param(disable_all_hooks("local"), id="disableAllHooks-local"),
    pytest.param(project_env("ENGRAMORY_HARD", "100000", "ENGRAMORY_HARD=100000"), id="env-hard"),
    pytest.param(project_env("ENGRAMORY_INDEX_PATH", "{home}/nonexistent/MEMORY.md", "whose folder does not exist"), id="env-index-path"),
    pytest.param(project_env("ENGRAMORY_INDEX_NAME", "INDEX.md", "ENGRAMORY_INDEX_NAME=INDEX.md"), id="env-index-name"),
    pytest.param(delete_module, id="module-deleted"),
    pytest.param(lower_matcher, id="matcher-edit|write"),
    pytest.param(mark_async, id="async"),
]


def over_cap_write(claude: RunClaude, project: Path, env: Dict[str, str] | None = None) -> bool:
    """Whether the real CLI refused a 300-line Write of a 100-line index."""
    index = project / "notes" / "MEMORY.md"
    index.parent.mkdir(exist_ok=True)
    index.write_text(index_lines(100), encoding="utf-8")
    result = claude([ToolUse("Write", {"file_path": str(index), "content": index_lines(300)}), Text("done")], env=env)
    (written,) = result.tool_results()
    refused = written.is_error and "engramory blocked this Write" in written.text
    assert refused == (index.read_text(encoding="utf-8") == index_lines(100)), written.text
    return refused


@pytest.mark.parametrize("variant", BLIND_SPOTS)
def test_check_fails_for_each_blind_spot(
    variant: Callable[[Path, Path], str], claude: RunClaude, e2e_home: Path, e2e_project: Path
) -> None:
    done = engramory(e2e_home, "install", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    expect = variant(e2e_home, e2e_project)
    # The reproduction: the real host lets the over-cap Write through.
    assert not over_cap_write(claude, e2e_project)
    check = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert check.returncode == 1, check.stdout + check.stderr
    assert expect in check.stdout, check.stdout
    assert "  problem: " in check.stdout and "    fix: " in check.stdout


def test_check_passes_for_a_healthy_install(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    done = engramory(e2e_home, "install", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert over_cap_write(claude, e2e_project)
    check = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "a smoke run was denied" in check.stdout and "healthy" in check.stdout


def test_check_with_a_dollar_in_the_config_dir(claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path) -> None:
    config = tmp_path / "conf $HOME `x`"
    extra = {"CLAUDE_CONFIG_DIR": str(config)}
    done = engramory(e2e_home, "install", cwd=e2e_project, extra=extra)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (config / "skills" / "engramory" / "hooks" / "engramory_index_guard.py").is_file()
    assert over_cap_write(claude, e2e_project, env=extra)
    check = engramory(e2e_home, "install", "--check", cwd=e2e_project, extra=extra)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "does not exist" not in check.stdout


# -- late writes: a background Bash append, on the real CLI ---------------------------------


def sanitized(project: Path) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project.resolve()))


def test_background_bash_append_is_reported(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    done = engramory(e2e_home, "install", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    index = e2e_home / ".claude" / "projects" / sanitized(e2e_project) / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(199), encoding="utf-8")
    append = f'sleep 2; for i in $(seq 1 30); do echo "- [late $i](late-$i.md) \u2014 x" >> "{index}"; done'
    result = claude(
        [
            ToolUse("Bash", {"command": append, "description": "append later", "run_in_background": True}),
            Text("started it"),
            Text("done"),
        ],
        allowed_tools=["Bash"],
    )
    assert index.read_text(encoding="utf-8").count("\n") == 229
    shown = result.all_text_shown()
    report = f"since the last check (a background command, another program or an edit changed it), the memory index {index} is over its hard cap: 229 lines"
    assert report in shown, result.describe()
    assert shown.count(report) == 1  # reported once


def test_monitor_append_is_reported(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    """Monitor (a deferred tool in 2.1.332: ToolSearch loads it) runs a shell command of its own."""
    done = engramory(e2e_home, "install", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    index = e2e_home / ".claude" / "projects" / sanitized(e2e_project) / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(199), encoding="utf-8")
    command = f'for i in $(seq 1 30); do echo "- [m $i](m-$i.md) \u2014 x" >> "{index}"; done'
    result = claude(
        [
            ToolUse("ToolSearch", {"query": "select:Monitor"}),
            ToolUse("Monitor", {"command": command, "description": "append by monitor"}),
            Text("watching"),
            Text("done"),
        ],
        allowed_tools=["Bash", "Monitor"],
    )
    assert index.read_text(encoding="utf-8").count("\n") == 229
    shown = result.all_text_shown()
    assert f"the memory index {index} is over its hard cap: 229 lines" in shown, result.describe()


def test_store_config_is_read_only_to_the_agent(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    done = engramory(e2e_home, "install", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    store = e2e_project / "notes"
    store.mkdir()
    (store / "MEMORY.md").write_text(index_lines(50), encoding="utf-8")
    cfg = store / ".engramory.json"
    cfg.write_text('{"version": 1, "readOnly": ["user-*.md"]}\n', encoding="utf-8")
    before = cfg.read_bytes()
    result = claude(
        [
            ToolUse("Write", {"file_path": str(cfg), "content": '{"version": 1, "hardLines": 100000}\n'}),
            ToolUse("Edit", {"file_path": str(cfg), "old_string": ', "readOnly": ["user-*.md"]', "new_string": ""}),
            ToolUse("Bash", {"command": f"printf '{{\"version\": 1, \"hardLines\": 100000}}' > '{cfg}'", "description": "shell"}),
            ToolUse("Bash", {"command": f"sed -i 's/user-/any-/' '{cfg}'", "description": "shell"}),
            Text("done"),
        ],
        allowed_tools=["Bash"],
        env={"ENGRAMORY_INDEX_PATH": str(store / "MEMORY.md")},
    )
    write, edit, printed, shell = result.tool_results()
    # a printf whose bytes the command fixes is judged before it runs (Bash in the matcher, issue 22)
    for denied in (write, edit, printed):
        assert denied.is_error and "read-only to the agent" in denied.text, denied.text
    assert not shell.is_error
    assert cfg.read_bytes() == before.replace(b"user-", b"any-")  # a sed -i cannot be predicted; it is reported
    assert f"after this Bash call, the store config {cfg} changed" in result.all_text_shown(), result.describe()


# -- the user's settings, kept as written, still read by the real CLI -------------------------

EDGE_SETTINGS = (
    '{\r\n\t"limit": 1e400,\r\n\t"tiny": 5e-324,\r\n\t"name": "caf\\u00e9 \\ud83d\\ude00",\r\n'
    '\t"permissions": {"deny": ["Bash(echo:*)"]}\r\n}\r\n'
)


@pytest.mark.parametrize("bom", [False, True], ids=["utf8", "bom"])
def test_edge_settings_survive_install_and_the_cli_still_reads_them(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, bom: bool
) -> None:
    settings = e2e_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    raw = (b"\xef\xbb\xbf" if bom else b"") + EDGE_SETTINGS.encode()
    settings.write_bytes(raw)
    os.chmod(settings, 0o600)
    done = engramory(e2e_home, "install", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    after = settings.read_bytes()
    assert after.startswith(raw[: raw.index(b'"permissions"')])  # untouched bytes, 1e400 and escapes included
    assert (settings.stat().st_mode & 0o777) == 0o600
    # The CLI reads the file: our guard runs from it, and the user's own deny rule still holds.
    assert over_cap_write(claude, e2e_project)
    result = claude([ToolUse("Bash", {"command": "echo hi", "description": "denied by the user"}), Text("done")],
                    allowed_tools=["Bash"])
    (echo,) = result.tool_results()
    assert echo.is_error, echo.text
    done = engramory(e2e_home, "uninstall", cwd=e2e_project)
    assert done.returncode == 0 and settings.read_bytes() == raw


# -- an install through the Claude Code plugin only, on the real CLI ------------------------

PLUGIN_ID = "engramory@engramory-marketplace"
# A local marketplace install copies the whole folder: install from a copy without the CLI,
# virtualenvs and caches (as tests/hosts/claude/test_installed_claude.py does).
CHECKOUT_JUNK = ("node_modules", ".venv*", ".git", "__pycache__", ".*_cache", ".hypothesis", ".benchmarks")


def plugin_cli(cli: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from harness import claude_env

    done = subprocess.run([str(cli), "plugin", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=claude_env(home, base_url="http://127.0.0.1:9"))
    assert done.returncode == 0, f"claude plugin {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done


def test_check_of_a_plugin_only_install(
    claude: RunClaude, claude_cli: Path, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    import shutil

    checkout = tmp_path / "engramory-checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*CHECKOUT_JUNK))
    plugin_cli(claude_cli, e2e_home, "marketplace", "add", str(checkout))
    plugin_cli(claude_cli, e2e_home, "install", PLUGIN_ID)
    settings = json.loads((e2e_home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert "hooks" not in settings and settings["enabledPlugins"] == {PLUGIN_ID: True}

    # Healthy: --check finds the folder the CLI runs the plugin from and smoke-runs its
    # hooks.json hooks. Measured: for a local (`directory`) marketplace that is the
    # marketplace folder itself, not the copy installed_plugins.json records under
    # plugins/cache/ (a module deleted from that copy changes nothing).
    check = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"plugin {PLUGIN_ID} is enabled and installed at {checkout}" in check.stdout, check.stdout
    assert check.stdout.count("a smoke run was") == 4, check.stdout
    assert over_cap_write(claude, e2e_project)
    cache = e2e_home / ".claude" / "plugins" / "cache" / "engramory-marketplace" / "engramory"
    (copy,) = [p for p in cache.iterdir() if (p / "hooks" / "hooks.json").is_file()]
    (copy / "engramory" / "guard.py").unlink()
    assert over_cap_write(claude, e2e_project)
    assert engramory(e2e_home, "install", "--check", cwd=e2e_project).returncode == 0

    # A module of the folder the CLI runs deleted: the real CLI lets the Write through, --check fails.
    guard = checkout / "engramory" / "guard.py"
    kept = guard.read_bytes()
    guard.unlink()
    assert not over_cap_write(claude, e2e_project)
    check = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert check.returncode == 1, check.stdout
    assert "No module named 'engramory.guard'" in check.stdout and f"claude plugin install {PLUGIN_ID}" in check.stdout
    guard.write_bytes(kept)
    assert engramory(e2e_home, "install", "--check", cwd=e2e_project).returncode == 0

    # Disabled with the CLI's own command: no hook runs, and --check says the guard is not wired.
    plugin_cli(claude_cli, e2e_home, "disable", PLUGIN_ID)
    assert not over_cap_write(claude, e2e_project)
    check = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert check.returncode == 1 and "is not wired" in check.stdout, check.stdout
