"""The memory MCP server inside the real Claude Code CLI: the server in `--mcp-config`, a scripted
model calling `mcp__engramory__memory_edit`. A create lands with its pointer under its type's
heading; a create past the index's cap is refused, and the model's next request carries the
numbers; a delete archives the note and drops its pointer. Also: the server as `engramory
install --mcp` writes it into Claude Code's own config is started by the CLI and lists its tools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from harness import RunClaude, Text, ToolUse, write_json

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

EDIT = "mcp__engramory__memory_edit"
VIEW = "mcp__engramory__memory_view"


def note(name: str, description: str) -> str:
    return ("---\nname: %s\ndescription: %s\ntype: user\ncreated: 2026-11-01\nupdated: 2026-11-01\n---\n"
            "The user %s.\n" % (name, description, description.lower()))


def near_cap_store(root: Path) -> Path:
    """199 lines: one more pointer fits, the one after does not."""
    root.mkdir(parents=True)
    lines = ["# Memory Index", "", "## user"]
    for i in range(196):
        (root / ("u%03d.md" % i)).write_text(note("u%03d" % i, "Prefers setting %d of the editor" % i), encoding="utf-8")
        lines.append("- [Setting %d](u%03d.md)" % (i, i))
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def mcp_config(path: Path, root: Path) -> Path:
    return write_json(path, {"mcpServers": {"engramory": {
        "command": sys.executable, "args": ["-I", "-S", str(ROOT / "tools" / "engramory.py"), "mcp", "--root", str(root)]}}})


def last_result(body: Dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    return inner if isinstance(inner, str) else "".join(
                        b.get("text", "") for b in inner or [] if isinstance(b, dict))
    return ""


def test_create_lands_past_the_cap_is_refused_with_numbers_and_delete_archives(
    claude: RunClaude, tmp_path: Path
) -> None:
    root = near_cap_store(tmp_path / "memory")
    config = mcp_config(tmp_path / "mcp.json", root)
    seen: List[str] = []

    def after_create(body: Dict[str, Any]) -> Any:
        seen.append(last_result(body))
        return ToolUse(EDIT, {"command": "create", "path": "/memories/reads-diffs.md",
                              "file_text": note("reads-diffs", "Reads the diff before the summary")})

    def after_refusal(body: Dict[str, Any]) -> Any:
        seen.append(last_result(body))  # what the model is shown in its next request
        return ToolUse(EDIT, {"command": "delete", "path": "/memories/prefers-tabs.md"})

    def after_delete(body: Dict[str, Any]) -> Any:
        seen.append(last_result(body))
        return Text("done")

    script = [
        ToolUse(EDIT, {"command": "create", "path": "/memories/prefers-tabs.md",
                       "file_text": note("prefers-tabs", "Prefers tabs over spaces in Go code")}),
        after_create, after_refusal, after_delete,
    ]
    run = claude(script, allowed_tools=[EDIT, VIEW],
                 extra_args=["--mcp-config", str(config), "--strict-mcp-config"])
    created, refused, deleted = seen
    assert "saved /memories/prefers-tabs.md" in created and "(prefers-tabs.md)" in created, run.describe()
    assert "grow from 200 to 201 lines (hard cap 200: 1 over)" in refused, refused
    assert "memory_edit delete" in refused and "Nothing was written" in refused
    assert "archived /memories/prefers-tabs.md -> /memories/archive/prefers-tabs.md" in deleted, deleted
    assert "engramory undo" in deleted
    results = run.tool_results()
    assert [r.tool_name for r in results] == [EDIT, EDIT, EDIT]
    assert [r.is_error for r in results] == [False, True, False]
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "(prefers-tabs.md)" not in index and "(reads-diffs.md)" not in index
    assert (root / "archive" / "prefers-tabs.md").is_file() and not (root / "reads-diffs.md").exists()
    log = subprocess.run([sys.executable, "-m", "engramory", "log", "--json", str(root)], capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert [e["command"] for e in json.loads(log.stdout)] == ["mcp", "mcp"]


def test_the_server_claude_code_starts_from_install_mcp(claude: RunClaude, e2e_home: Path, e2e_project: Path,
                                                      tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    env = {"HOME": str(e2e_home)}
    done = subprocess.run([sys.executable, "-m", "engramory", "install", "--mcp", "--scope", "local", "--root", str(root)],
                          capture_output=True, text=True, cwd=e2e_project, env=dict(env, PATH="/usr/bin:/bin"), timeout=300)
    assert done.returncode == 0, done.stderr
    search = "mcp__engramory__memory_search"
    run = claude([ToolUse(VIEW, {"path": "/memories"}), ToolUse(search, {"query": "anything"}), Text("ok")],
                 allowed_tools=[VIEW, search])
    viewed, searched = run.tool_results()
    assert not viewed.is_error and str(root) in viewed.text, run.describe()
    assert not searched.is_error and "no note matches" in searched.text, run.describe()


def test_without_root_the_server_serves_the_projects_auto_memory(claude: RunClaude, e2e_home: Path,
                                                                 e2e_project: Path) -> None:
    from test_installed_claude import auto_memory_index

    done = subprocess.run([sys.executable, "-m", "engramory", "install", "--mcp", "--scope", "local"],
                          capture_output=True, text=True, cwd=e2e_project,
                          env={"HOME": str(e2e_home), "PATH": "/usr/bin:/bin"}, timeout=300)
    assert done.returncode == 0, done.stderr
    run = claude([ToolUse(EDIT, {"command": "create", "path": "/memories/prefers-tabs.md",
                                 "file_text": note("prefers-tabs", "Prefers tabs over spaces in Go code")}), Text("ok")],
                 allowed_tools=[EDIT])
    (made,) = run.tool_results()
    assert not made.is_error, run.describe()
    index = auto_memory_index(e2e_home, e2e_project)  # where Claude Code itself loads the project's memory from
    assert "(prefers-tabs.md)" in index.read_text(encoding="utf-8")
    assert (index.parent / "prefers-tabs.md").is_file()
