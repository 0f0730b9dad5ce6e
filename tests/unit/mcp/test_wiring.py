"""The installers that write the MCP server into a client's config, driven as a user runs them
(`python3 -m engramory install ...` with an isolated HOME): Zed's JSON-with-comments settings and
Claude Desktop's config edited keeping every other byte, --dry-run writing nothing, --check
running the server and naming its tools, an entry engramory did not write refused, uninstall
byte-exact; `--host claude --mcp` in Claude Code's own MCP config at the scope given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from engramory.hosts import claude_desktop, zed
from tests.conftest import ROOT

ZED = '// Zed settings\n{\n  "theme": "One Dark", // mine\n  "buffer_font_size": 15,\n  "context_servers": {\n' \
      '    "other": {"command": "x", "args": []},\n  },\n}\n'


def run(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE", "XDG_"))}
    env.update(HOME=str(home))
    return subprocess.run([sys.executable, "-m", "engramory", *args], capture_output=True, text=True, timeout=300,
                          env=dict(env, PYTHONPATH=str(ROOT)), cwd=str(cwd or home))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    (tmp_path / "store").mkdir()
    return h


def files_of(folder: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
            and ".engramory-backup-" not in p.name}


def test_config_places_follow_each_system() -> None:
    env = {"HOME": "/h", "APPDATA": "C:\\AppData"}
    assert claude_desktop.config_dir(env, "linux") == "/h/.config/Claude"
    assert claude_desktop.config_dir(env, "darwin") == "/h/Library/Application Support/Claude"
    assert claude_desktop.config_dir(env, "win32").startswith("C:\\AppData")
    assert zed.config_dir(env, "linux") == "/h/.config/zed" == zed.config_dir(env, "darwin")
    assert zed.config_dir(dict(env, XDG_CONFIG_HOME="/x"), "linux") == "/x/zed"


def test_zed_keeps_its_comments_checks_and_uninstalls_byte_exact(home: Path) -> None:
    settings = home / ".config" / "zed" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(ZED, encoding="utf-8")
    store = str(home.parent / "store")
    missing = run(home, "install", "--host", "zed")
    assert missing.returncode == 64 and "--root DIR" in missing.stderr
    dry = run(home, "install", "--host", "zed", "--root", store, "--dry-run")
    assert dry.returncode == 0 and '+    "engramory": {' in dry.stdout and settings.read_text(encoding="utf-8") == ZED
    done = run(home, "install", "--host", "zed", "--root", store)
    assert done.returncode == 0, done.stderr
    text = settings.read_text(encoding="utf-8")
    assert text.startswith('// Zed settings\n{\n  "theme": "One Dark", // mine\n') and '"other"' in text
    assert "tools/engramory.py" in text and store in text
    check = run(home, "install", "--host", "zed", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "lists memory_view, memory_edit, memory_search" in check.stdout
    again = run(home, "install", "--host", "zed", "--root", store)
    assert again.returncode == 0 and "already there" in again.stdout
    gone = run(home, "uninstall", "--host", "zed")
    assert gone.returncode == 0, gone.stderr
    assert settings.read_bytes() == ZED.encode() and not (settings.parent / "engramory").exists()
    failing = run(home, "install", "--host", "zed", "--check")
    assert failing.returncode == 1 and "no 'engramory' server entry" in failing.stdout


def test_claude_desktop_config_made_and_taken_away(home: Path) -> None:
    store = str(home.parent / "store")
    done = run(home, "install", "--host", "claude-desktop", "--root", store)
    assert done.returncode == 0, done.stderr
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    server = data["mcpServers"]["engramory"]
    assert server["args"][-3:] == ["mcp", "--root", store] and os.path.isabs(server["command"])
    assert run(home, "install", "--host", "claude-desktop", "--check").returncode == 0
    assert run(home, "uninstall", "--host", "claude-desktop").returncode == 0
    assert not config.exists() and not config.parent.exists()


def test_a_server_of_that_name_engramory_did_not_write_is_refused(home: Path) -> None:
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    foreign = '{"mcpServers": {"engramory": {"command": "npx", "args": ["someone-else"]}}}\n'
    config.write_text(foreign, encoding="utf-8")
    done = run(home, "install", "--host", "claude-desktop", "--root", str(home.parent / "store"))
    assert done.returncode == 1 and "did not write it" in done.stderr
    assert config.read_text(encoding="utf-8") == foreign
    assert run(home, "uninstall", "--host", "claude-desktop").returncode == 0
    assert config.read_text(encoding="utf-8") == foreign


def claude_json(home: Path) -> Dict[str, object]:
    data: Dict[str, object] = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    return data


def test_claude_code_gains_the_server_at_the_scope_given(home: Path) -> None:
    project = home / "proj"
    project.mkdir()
    before = '{\n  "numStartups": 3,\n  "projects": {}\n}\n'
    (home / ".claude.json").write_text(before, encoding="utf-8")
    user = run(home, "install", "--mcp", cwd=project)
    assert user.returncode == 0, user.stderr
    servers = claude_json(home)["mcpServers"]
    assert isinstance(servers, dict) and servers["engramory"]["args"][-1] == "mcp"
    check = run(home, "install", "--check", "--mcp", cwd=project)
    assert "lists memory_view, memory_edit, memory_search" in check.stdout, check.stdout
    local = run(home, "install", "--mcp", "--scope", "local", "--root", str(home.parent / "store"), cwd=project)
    assert local.returncode == 0, local.stderr
    projects = claude_json(home)["projects"]
    assert isinstance(projects, dict)
    assert projects[str(project.resolve())]["mcpServers"]["engramory"]["args"][-2:] == ["--root", str(home.parent / "store")]
    refused = run(home, "install", "--mcp", "--scope", "project", cwd=project)
    assert refused.returncode == 1 and "--scope local" in refused.stderr
    assert not (project / ".mcp.json").exists()
    for scope in ("local", "user"):
        out = run(home, "uninstall", "--scope", scope, cwd=project)
        assert out.returncode == 0, out.stderr
    assert (home / ".claude.json").read_text(encoding="utf-8") == before


def test_the_installers_are_in_the_registry_and_the_cli() -> None:
    from engramory import hosts

    names: List[str] = hosts.names()
    assert names[-2:] == ["claude-desktop", "zed"]
    for name in ("claude-desktop", "zed"):
        mod = hosts.load(name)
        assert mod.VERIFIED == "" and mod.UNVERIFIED_WHY and mod.respond(b"{}") == ("", "", 0)


def test_uninstall_goes_on_past_a_claude_json_it_cannot_edit(home: Path) -> None:
    assert run(home, "install").returncode == 0
    (home / ".claude.json").write_text("{not json", encoding="utf-8")
    out = run(home, "uninstall")
    assert out.returncode == 0 and "left in place" in out.stderr, out.stderr
    assert not (home / ".claude" / "skills" / "engramory").exists()
