"""The memory MCP server inside the real Gemini CLI (pinned in package.json), offline: the server
in the user settings' `mcpServers`, a scripted model calling `mcp_engramory_memory_edit` (the
name Gemini CLI gives it). A create lands with its pointer; a create past the index's cap is
refused, and the numbers reach the model in its next request; a delete archives the note."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from driver import Call, Text, Turn, base_settings, run_gemini, write_json

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
EDIT = "mcp_engramory_memory_edit"


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


def test_create_lands_past_the_cap_is_refused_with_numbers_and_delete_archives(
    gemini_cli: Path, home: Path, work: Path, tmp_path: Path
) -> None:
    root = near_cap_store(tmp_path / "memory")
    settings = base_settings()
    settings["mcpServers"] = {"engramory": {"command": sys.executable, "trust": True, "args": [
        "-I", "-S", str(ROOT / "tools" / "engramory.py"), "mcp", "--root", str(root)]}}
    write_json(home / ".gemini" / "settings.json", settings)
    script = [
        Turn([Call(EDIT, {"command": "create", "path": "/memories/prefers-tabs.md",
                          "file_text": note("prefers-tabs", "Prefers tabs over spaces in Go code")})]),
        Turn([Call(EDIT, {"command": "create", "path": "/memories/reads-diffs.md",
                          "file_text": note("reads-diffs", "Reads the diff before the summary")})]),
        Turn([Call(EDIT, {"command": "delete", "path": "/memories/prefers-tabs.md"})]),
        Turn([Text("done")]),
    ]
    result = run_gemini(script, home, work)
    assert result.returncode == 0 and not result.server_errors, result.stderr[-3000:]
    created, refused, deleted = (json.dumps(result.responses_after(t), ensure_ascii=False) for t in range(3))
    assert "saved /memories/prefers-tabs.md" in created, created
    assert "grow from 200 to 201 lines (hard cap 200: 1 over)" in refused, refused
    assert "memory_edit delete" in refused
    assert "archived /memories/prefers-tabs.md -> /memories/archive/prefers-tabs.md" in deleted, deleted
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "(prefers-tabs.md)" not in index and "(reads-diffs.md)" not in index
    assert (root / "archive" / "prefers-tabs.md").is_file() and not (root / "reads-diffs.md").exists()
